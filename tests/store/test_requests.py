"""One request, one live card: whatever files it, however many at once (both stores)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.core.card_states import ANSWER_MEMORY_SECONDS, CardState, Refusal, RefusalReason
from countersign.core.ids import new_id
from countersign.store.cards import CardCommit
from countersign.store.docs import DocWrite
from countersign.store.errors import Taken
from tests.store._factories import World, audit, card, filed

S = CardState


def twin(w: World, first, created_at: int):
    """A new card of the same request as ``first`` (same tool, fingerprint, person)."""
    c = card(w.ws, w.person, w.conn, created_at=created_at, tool=first.tool, fingerprint=first.fingerprint)
    return c


def test_an_identical_filing_returns_the_live_card_and_writes_nothing(store):
    w = World(store)
    first = w.file(created_at=1000)
    second = twin(w, first, 1010)
    held = store.cards.file_card(second, filed(second))
    assert held == first
    assert store.cards.latest_card(w.ws.id, w.person.id, first.tool, first.fingerprint, 1011).id == first.id
    assert [c.id for c in store.cards.list_pending_cards(w.ws.id, w.person.id, 1011)[0]] == [first.id]
    assert store.outbox.get_notification(second.id) is None  # no second email owed


def test_a_running_card_holds_its_request(store):
    w = World(store)
    first = w.file(created_at=1000)
    w.move(first, S.RUNNING, 1001)
    second = twin(w, first, 1002)
    assert store.cards.file_card(second, filed(second)).id == first.id


@pytest.mark.parametrize("target", [S.DECLINED, S.WITHDRAWN, S.COMPLETED, S.FAILED])
def test_once_decided_the_request_files_anew(store, target):
    w = World(store)
    first = w.file(created_at=1000)
    w.move(first, target, 1001)
    if target in (S.DECLINED, S.COMPLETED):  # answered: the request holds that answer for the answer memory
        early = twin(w, first, 1002)
        held = store.cards.file_card(early, filed(early))
        assert held.id == first.id and held.state is target
        assert store.cards.file_card(early, filed(early), replacing=first.id) == early  # a reopen files past it
        return
    second = twin(w, first, 1002)
    assert store.cards.file_card(second, filed(second)) == second
    assert store.cards.latest_card(w.ws.id, w.person.id, first.tool, first.fingerprint, 1003) == second


@pytest.mark.parametrize("target", [S.DECLINED, S.COMPLETED])
def test_an_answered_request_files_anew_after_the_answer_memory(store, target):
    w = World(store)
    first = w.file(created_at=1000)
    w.move(first, target, 1001)
    second = twin(w, first, 1001 + ANSWER_MEMORY_SECONDS)
    assert store.cards.file_card(second, filed(second)) == second
    assert store.cards.latest_card(w.ws.id, w.person.id, first.tool, first.fingerprint, second.created_at) == second


def test_once_lapsed_the_request_files_anew(store):
    w = World(store)
    first = w.file(created_at=1000, ttl=100)
    second = twin(w, first, 1100)  # the deadline of the first
    assert store.cards.file_card(second, filed(second)) == second


def test_the_same_fingerprint_for_another_person_or_tool_is_another_request(store):
    w = World(store)
    first = w.file(created_at=1000)
    other = w.add_person()
    theirs = card(w.ws, other, w.conn, created_at=1001, tool=first.tool, fingerprint=first.fingerprint)
    another_tool = card(w.ws, w.person, w.conn, created_at=1001, tool="other_tool", fingerprint=first.fingerprint)
    assert store.cards.file_card(theirs, filed(theirs)) == theirs
    assert store.cards.file_card(another_tool, filed(another_tool)) == another_tool


def test_a_decided_card_filed_new_is_taken_by_a_live_twin_and_writes_nothing(store):
    w = World(store)
    first = w.file(created_at=1000)
    second = twin(w, first, 1005)
    with pytest.raises(Taken) as taken:
        store.cards.commit_card(CardCommit(second, S.COMPLETED, 1005, (filed(second), audit(second, "completed", 1005)),
                                     writes=(DocWrite("note", "n1", {"t": "x"}, 0),), result={"ok": True}, new=True))
    assert taken.value.card == first
    assert store.docs.get_doc(w.ws.id, "note", "n1") is None
    assert store.cards.latest_card(w.ws.id, w.person.id, first.tool, first.fingerprint, 1006).id == first.id


def test_a_decided_card_filed_new_is_the_latest_of_its_request_and_its_ticket_is_spent(store):
    w = World(store)
    c = card(w.ws, w.person, w.conn, created_at=1000)
    done = store.cards.commit_card(CardCommit(c, S.COMPLETED, 1000, (filed(c), audit(c, "completed", 1000)),
                                        writes=(DocWrite("note", "n1", {"t": "x"}, 0),), result={"ok": True},
                                        channel="client", new=True))
    assert (done.state, done.version, done.channel) == (S.COMPLETED, 1, "client")
    assert store.cards.get_card(w.ws.id, c.id, 1001) == done
    assert store.docs.get_doc(w.ws.id, "note", "n1").data == {"t": "x"}
    assert store.cards.latest_card(w.ws.id, w.person.id, c.tool, c.fingerprint, 1001) == done
    assert [e.event for e in store.cards.audit_trail(w.ws.id, c.id)] == ["filed", "completed"]
    # its ticket is spent: the same card cannot be filed decided again, even once the request is free
    with pytest.raises(Refusal) as refused:
        store.cards.commit_card(CardCommit(replace(c, id=new_id("card_")), S.COMPLETED, 1000 + ANSWER_MEMORY_SECONDS,
                                           (),
                                     new=True))
    assert refused.value.reason is RefusalReason.ALREADY_ANSWERED
    # an answered card holds the request for the answer memory, then the next identical call files
    soon = twin(w, c, 1003)
    assert store.cards.file_card(soon, filed(soon)).id == c.id
    again = twin(w, c, 1000 + ANSWER_MEMORY_SECONDS)
    assert store.cards.file_card(again, filed(again)) == again
