"""The commit: a card's move and the action's effect in one transaction, or nothing (both stores)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.core.card_states import ANSWER_MEMORY_SECONDS, SPENT_MESSAGE, CardState, Refusal, RefusalReason
from countersign.store.cards import CardCommit
from countersign.store.docs import DocWrite, RoleWrite, SettingWrite, WorkspaceNameWrite
from countersign.store.errors import Conflict
from tests.store._factories import World, audit

S = CardState


def note(data: dict, version: int = 0, doc_id: str = "n1") -> DocWrite:
    return DocWrite("note", doc_id, data, version)


def complete(c, now: int, *writes, **fields) -> CardCommit:
    return CardCommit(c, S.COMPLETED, now, (audit(c, "completed", now),), writes=tuple(writes),
                      result=fields.pop("result", {"ok": True}), **fields)


def test_the_effect_the_card_and_its_audit_commit_together(store):
    w = World(store)
    c = w.file(created_at=1000)
    done = store.cards.commit_card(complete(c, 1001, note({"text": "new"}), channel="page"))
    assert (done.state, done.version, done.channel, done.result) == (S.COMPLETED, 2, "page", {"ok": True})
    assert store.cards.get_card(w.ws.id, c.id, 1002) == done
    assert store.docs.get_doc(w.ws.id, "note", "n1").data == {"text": "new"}
    assert [e.event for e in store.cards.audit_trail(w.ws.id, c.id)] == ["filed", "completed"]


def test_a_write_that_moved_commits_nothing_and_the_card_stays_pending(store):
    w = World(store)
    c = w.file(created_at=1000)
    store.docs.write_docs(w.ws.id, [note({"text": "first"})])  # version 1: the effect expects none
    with pytest.raises(Conflict) as moved:
        store.cards.commit_card(complete(c, 1001, note({"text": "other"}, doc_id="n2"), note({"text": "lost"})))
    assert (moved.value.kind, moved.value.id) == ("note", "n1")
    assert store.cards.get_card(w.ws.id, c.id, 1002) == c
    assert store.docs.get_doc(w.ws.id, "note", "n1").data == {"text": "first"}
    assert store.docs.get_doc(w.ws.id, "note", "n2") is None
    assert [e.event for e in store.cards.audit_trail(w.ws.id, c.id)] == ["filed"]
    # nothing was spent: the same card can still be confirmed
    assert store.cards.commit_card(complete(c, 1003, note({"text": "again"}, version=1))).state is S.COMPLETED


def test_a_stale_reader_loses_to_the_move_it_missed(store):
    w = World(store)
    c = w.file(created_at=1000)
    store.cards.commit_card(CardCommit(c, S.DECLINED, 1001, (audit(c, "declined", 1001),), decline_reason="no"))
    with pytest.raises(Refusal) as refused:
        store.cards.commit_card(complete(c, 1002, note({"text": "late"})))
    assert refused.value.reason is RefusalReason.ALREADY_ANSWERED
    assert store.docs.get_doc(w.ws.id, "note", "n1") is None


def test_a_lapsed_card_is_refused_and_nothing_written(store):
    w = World(store)
    c = w.file(created_at=1000, ttl=100)
    with pytest.raises(Refusal) as refused:
        store.cards.commit_card(complete(c, 1100, note({"text": "late"})))
    assert refused.value.reason is RefusalReason.EXPIRED
    assert store.docs.get_doc(w.ws.id, "note", "n1") is None


def roll_back(store, card, state: str = "pending") -> None:
    """What an operator (or an attacker) with write access to the store could do by hand."""
    if hasattr(store, "database"):
        store.database.connection().execute("UPDATE cards SET state = ? WHERE id = ?", (state, card.id))
    else:
        from countersign.store.dynamodb import codec

        store.client.update_item(TableName=store.table.name, Key=codec.card_key(card.id),
                                 UpdateExpression="SET #s = :s", ExpressionAttributeNames={"#s": "status"},
                                 ExpressionAttributeValues={":s": {"S": state}})


@pytest.mark.parametrize("first", [S.COMPLETED, S.DECLINED])
def test_a_spent_ticket_never_runs_again_even_if_its_card_is_set_back(store, first):
    w = World(store)
    c = w.file(created_at=1000)
    decided = store.cards.commit_card(CardCommit(c, first, 1001, (audit(c, first.value, 1001),), result={"ok": 1}))
    roll_back(store, c)
    rolled = store.cards.get_card(w.ws.id, c.id, 1002)
    assert rolled.state is S.PENDING and rolled.version == decided.version
    with pytest.raises(Refusal) as refused:
        store.cards.commit_card(complete(rolled, 1003, note({"text": "replayed"})))
    assert (refused.value.reason, refused.value.message) == (RefusalReason.ALREADY_ANSWERED, SPENT_MESSAGE)
    assert store.docs.get_doc(w.ws.id, "note", "n1") is None
    assert [e.event for e in store.cards.audit_trail(w.ws.id, c.id)] == ["filed", first.value]


def test_settings_name_and_role_writes_hold_only_if_unchanged(store):
    w = World(store)
    member = w.add_person()
    c = w.file(created_at=1000)
    store.cards.commit_card(complete(c, 1001, SettingWrite("ask_before_drafting", True, False),
                               RoleWrite(member.id, "member", "admin")))
    store.docs.write_docs(w.ws.id, [WorkspaceNameWrite("Acme", "Acme Ltd")])
    ws = store.workspaces.get_workspace(w.ws.id)
    assert (ws.name, ws.setting("ask_before_drafting")) == ("Acme Ltd", False)
    assert store.workspaces.get_person(w.ws.id, member.id).role == "admin"
    for stale in (SettingWrite("ask_before_drafting", True, False), WorkspaceNameWrite("Acme", "Other"),
                  RoleWrite(member.id, "member", "approver")):
        later = w.file(created_at=1002)
        with pytest.raises(Conflict):
            store.cards.commit_card(complete(later, 1003, stale))
        assert store.cards.get_card(w.ws.id, later.id, 1004).state is S.PENDING
    ws = store.workspaces.get_workspace(w.ws.id)
    assert (ws.name, ws.setting("ask_before_drafting")) == ("Acme Ltd", False)
    assert store.workspaces.get_person(w.ws.id, member.id).role == "admin"


def test_an_action_of_several_steps_records_each_and_only_its_runner_can(store):
    w = World(store)
    c = w.file(created_at=1000)
    run = {"steps": ["publish", "launch"], "done": 1}
    first = store.cards.commit_card(CardCommit(c, S.RUNNING, 1001, (audit(c, "running", 1001),),
                                         writes=(note({"text": "published"}),), run=run, lease_until=1061))
    with pytest.raises(Refusal) as refused:  # anyone else sees a card being confirmed
        store.cards.transition_card(w.ws.id, c.id, S.RUNNING, 1002, audit(c, "running", 1002))
    assert refused.value.reason is RefusalReason.BEING_CONFIRMED
    done = store.cards.commit_card(CardCommit(first, S.COMPLETED, 1003, (audit(c, "completed", 1003),),
                                        writes=(note({"text": "launched"}, doc_id="n2"),),
                                        run=dict(run, done=2), result={"ok": True}))
    assert (done.state, done.run, done.lease_until) == (S.COMPLETED, {"steps": ["publish", "launch"], "done": 2}, None)
    with pytest.raises(Refusal):  # a stale step from the first version
        store.cards.commit_card(CardCommit(first, S.RUNNING, 1004, (), run=run, lease_until=1064, step=True))
    assert [e.event for e in store.cards.audit_trail(w.ws.id, c.id)] == ["filed", "running", "completed"]


def test_a_step_is_recorded_with_its_writes_by_the_version_holder(store):
    w = World(store)
    c = w.file(created_at=1000)
    first = store.cards.commit_card(
        CardCommit(c, S.RUNNING, 1001, (), run={"steps": ["a", "b", "c"], "done": 1}, lease_until=1061)
    )
    second = store.cards.commit_card(CardCommit(first, S.RUNNING, 1002, (), writes=(note({"text": "b"}),),
                                          run={"steps": ["a", "b", "c"], "done": 2}, lease_until=1062, step=True))
    assert (second.version, second.run["done"], second.lease_until) == (3, 2, 1062)
    assert store.cards.get_card(w.ws.id, c.id, 1003) == second


def test_bad_writes_are_refused_before_anything_is_written(store):
    from countersign.store.errors import BadInput

    w = World(store)
    c = w.file(created_at=1000)
    with pytest.raises(BadInput):
        store.cards.commit_card(complete(c, 1001, note({"a": 1}), note({"a": 2})))  # the same doc twice
    assert store.cards.get_card(w.ws.id, c.id, 1002) == c


def test_a_decline_spends_the_ticket_and_releases_the_request(store):
    w = World(store)
    c = w.file(created_at=1000)
    declined = store.cards.commit_card(CardCommit(c, S.DECLINED, 1001, (audit(c, "declined", 1001),),
                                                  decline_reason="no"))
    assert store.cards.latest_card(w.ws.id, w.person.id, c.tool, c.fingerprint, 1002) == declined
    from tests.store._factories import filed

    early = replace(c, id=c.id + "y", ticket=c.ticket + "y", created_at=1002, expires_at=1002 + 3600, updated_at=1002)
    assert store.cards.file_card(early, filed(early)).id == c.id  # the answer is remembered: that card answers
    at = 1001 + ANSWER_MEMORY_SECONDS  # then the request is released
    twin = replace(c, id=c.id + "x", ticket=c.ticket + "x", created_at=at, expires_at=at + 3600, updated_at=at)
    assert store.cards.file_card(twin, filed(twin)) == twin
