"""Standing grants (both stores): made by the commit of the card that grants them, used by the commit
of a card they run — one conditional write in the card's own transaction — listed with each use,
revoked at once; every refusal writes nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.store.cards import CardCommit
from countersign.store.connections import Connection
from countersign.store.docs import DocWrite
from countersign.store.errors import BadInput, Conflict, GrantUnavailable, NotFound
from countersign.store.standing_grants import GrantUse, StandingGrant, StandingGrantUse, StandingGrantWrite
from tests.store._factories import DAY, World, audit, card, connection

NOW = 10_000


def _grant(w: World, **kw) -> StandingGrant:
    values = dict(id=new_id("sg_"), workspace_id=w.ws.id, connection_id=w.conn.id, person_id=w.person.id,
                  tool="buy_credits", name="Credits top-up", limits={"credits": {"max": 100_000}}, max_uses=2,
                  created_at=NOW, expires_at=NOW + 7 * DAY, cap=150_000,
                  terms=("Credits bought: at most 100 credits a call",))
    values.update(kw)
    return StandingGrant(**values)


def _read(w: World) -> Connection:
    """The world's connection as a plan reads it (what a grant's write carries)."""
    return w.store.connections.get_connection(w.ws.id, w.conn.id)


def _make(w: World, grant: StandingGrant) -> StandingGrant:
    """Grant it as the card that grants it does: its write, committed with the card's completion."""
    c = card(w.ws, w.person, w.conn, created_at=NOW - 10, tool="create_standing_grant")
    w.store.cards.file_card(c, audit(c, "filed", NOW - 10))
    w.store.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW - 5, (audit(c, "completed", NOW - 5),),
                                         writes=(StandingGrantWrite(grant, _read(w)),)))
    return grant


def _run(w: World, grant: StandingGrant, amount: int, at: int = NOW + 60, conn_id: str | None = None,
         writes=()) -> tuple:
    """A call the grant runs: a new card filed completed, the use consumed in its commit."""
    c = card(w.ws, w.person, w.conn, created_at=at, tool="buy_credits")
    use = GrantUse(grant.id, w.ws.id, conn_id or w.conn.id, at, amount, grant.cap)
    done = w.store.cards.commit_card(CardCommit(c, CardState.COMPLETED, at, (audit(c, "completed", at),),
                                                writes=tuple(writes), new=True, channel="grant", grant_use=use))
    return c, done


def test_a_grant_is_made_by_its_cards_commit_and_read_back(store):
    w = World(store)
    grant = _make(w, _grant(w))
    assert store.standing_grants.get_standing_grant(w.ws.id, grant.id) == grant
    assert store.standing_grants.list_standing_grants(w.ws.id) == [grant]
    assert store.standing_grants.list_standing_grants(w.ws.id, connection_id=w.conn.id) == [grant]
    assert store.standing_grants.list_standing_grants(w.ws.id, connection_id="c_other") == []
    assert store.standing_grants.list_standing_grants(w.ws.id, person_id=w.person.id) == [grant]
    assert store.standing_grants.list_standing_grant_uses(w.ws.id, grant.id) == []
    assert grant.state_at(NOW) == "active" and grant.uses_left == 2 and grant.cap_left == 150_000


def test_newest_grant_is_listed_first_and_another_workspace_finds_none(store):
    w, other = World(store), World(store, "Other")
    older = _make(w, _grant(w, created_at=NOW - 100, name="Older"))
    newer = _make(w, _grant(w, name="Newer"))
    assert [g.name for g in store.standing_grants.list_standing_grants(w.ws.id)] == ["Newer", "Older"]
    assert store.standing_grants.list_standing_grants(other.ws.id) == []
    for read in (store.standing_grants.get_standing_grant, store.standing_grants.list_standing_grant_uses):
        with pytest.raises(NotFound):
            read(other.ws.id, newer.id)
    with pytest.raises(NotFound):
        store.standing_grants.revoke_standing_grant(other.ws.id, older.id, "person:x", NOW)
    assert store.standing_grants.get_standing_grant(w.ws.id, older.id).revoked_at is None


@pytest.mark.parametrize("change, field", [
    ({"name": "  "}, "name"), ({"max_uses": 0}, "uses"), ({"max_uses": 1001}, "uses"),
    ({"expires_at": NOW + 30 * DAY + 1}, "expires_at"), ({"expires_at": NOW}, "expires_at"),
    ({"cap": 0}, "cap"), ({"limits": {}}, "limits"),
])
def test_a_bad_grant_is_refused_and_nothing_is_written(store, change, field):
    w = World(store)
    bad = _grant(w, **change)
    c = card(w.ws, w.person, w.conn, created_at=NOW - 10, tool="create_standing_grant")
    store.cards.file_card(c, audit(c, "filed", NOW - 10))
    with pytest.raises(BadInput) as refused:
        store.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW, (audit(c, "completed", NOW),),
                                           writes=(StandingGrantWrite(bad, _read(w)),)))
    assert refused.value.field == field
    assert store.standing_grants.list_standing_grants(w.ws.id) == []
    assert store.cards.get_card(w.ws.id, c.id, NOW).state is CardState.PENDING


def test_a_grant_id_is_made_once_and_only_in_its_own_workspace(store):
    w, other = World(store), World(store, "Other")
    grant = _make(w, _grant(w))
    with pytest.raises(Conflict):
        _make(w, replace(grant, name="Again"))
    c = card(w.ws, w.person, w.conn, created_at=NOW, tool="create_standing_grant")
    store.cards.file_card(c, audit(c, "filed", NOW))
    with pytest.raises(Conflict):  # a grant of another workspace, written by this one's card
        store.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW, (audit(c, "completed", NOW),),
                                           writes=(StandingGrantWrite(_grant(other), _read(other)),)))
    assert store.standing_grants.list_standing_grants(other.ws.id) == []
    assert store.standing_grants.get_standing_grant(w.ws.id, grant.id).name == "Credits top-up"


def test_each_use_is_consumed_with_its_card_and_listed(store):
    w = World(store)
    grant = _make(w, _grant(w))
    first, _ = _run(w, grant, 50_000, at=NOW + 60)
    second, done = _run(w, grant, 100_000, at=NOW + 120)
    assert done.state is CardState.COMPLETED and done.channel == "grant"
    after = store.standing_grants.get_standing_grant(w.ws.id, grant.id)
    assert (after.uses, after.spent, after.uses_left, after.cap_left, after.state_at(NOW + 200)) == (
        2, 150_000, 0, 0, "used up")
    assert store.standing_grants.list_standing_grant_uses(w.ws.id, grant.id) == [
        StandingGrantUse(grant.id, w.ws.id, first.id, NOW + 60, 50_000),
        StandingGrantUse(grant.id, w.ws.id, second.id, NOW + 120, 100_000),
    ]


def test_the_last_use_is_taken_once_then_refused_with_nothing_written(store):
    w = World(store)
    grant = _make(w, _grant(w, max_uses=1, cap=None))
    _run(w, grant, 100_000)
    doc = DocWrite("ledger", "credits", {"balance": 1}, 0)
    c = card(w.ws, w.person, w.conn, created_at=NOW + 90, tool="buy_credits")
    with pytest.raises(GrantUnavailable):
        store.cards.commit_card(CardCommit(
            c, CardState.COMPLETED, NOW + 90, (audit(c, "completed", NOW + 90),), writes=(doc,), new=True,
            channel="grant", grant_use=GrantUse(grant.id, w.ws.id, w.conn.id, NOW + 90, 1_000, None)))
    with pytest.raises(NotFound):
        store.cards.get_card(w.ws.id, c.id, NOW + 90)
    assert store.docs.get_doc(w.ws.id, "ledger", "credits") is None
    assert store.cards.latest_card(w.ws.id, w.person.id, c.tool, c.fingerprint, NOW + 90) is None
    assert len(store.standing_grants.list_standing_grant_uses(w.ws.id, grant.id)) == 1
    assert store.standing_grants.get_standing_grant(w.ws.id, grant.id).uses == 1


@pytest.mark.parametrize("case", ["just over the cap", "expired", "revoked", "another connection"])
def test_a_use_the_grant_does_not_have_is_refused_with_nothing_written(store, case):
    w = World(store)
    grant = _make(w, _grant(w, max_uses=5, cap=150_000))
    _run(w, grant, 100_000)
    amount, at, conn_id = 50_000, NOW + 120, None
    if case == "just over the cap":
        amount = 50_001
    elif case == "expired":
        at = grant.expires_at
    elif case == "revoked":
        store.standing_grants.revoke_standing_grant(w.ws.id, grant.id, f"person:{w.person.id}", NOW + 100)
    else:
        other = connection(w.ws, w.person, name="Another agent")
        store.connections.create_connection(other)
        conn_id = other.id
    before = store.standing_grants.get_standing_grant(w.ws.id, grant.id)
    doc = DocWrite("ledger", "credits", {"balance": 1}, 0)
    with pytest.raises(GrantUnavailable):
        _run(w, grant, amount, at=at, conn_id=conn_id, writes=[doc])
    assert store.standing_grants.get_standing_grant(w.ws.id, grant.id) == before
    assert store.docs.get_doc(w.ws.id, "ledger", "credits") is None
    assert len(store.standing_grants.list_standing_grant_uses(w.ws.id, grant.id)) == 1


def test_exactly_the_rest_of_the_cap_is_allowed(store):
    w = World(store)
    grant = _make(w, _grant(w, max_uses=5, cap=150_000))
    _run(w, grant, 100_000)
    _run(w, grant, 50_000, at=NOW + 120)
    assert store.standing_grants.get_standing_grant(w.ws.id, grant.id).cap_left == 0


def test_revoking_is_at_once_and_kept_once(store):
    w = World(store)
    grant = _make(w, _grant(w))
    revoked = store.standing_grants.revoke_standing_grant(w.ws.id, grant.id, "person:a", NOW + 10)
    assert (revoked.revoked_at, revoked.revoked_by, revoked.state_at(NOW + 10)) == (NOW + 10, "person:a", "revoked")
    again = store.standing_grants.revoke_standing_grant(w.ws.id, grant.id, "person:b", NOW + 20)
    assert (again.revoked_at, again.revoked_by) == (NOW + 10, "person:a")
    with pytest.raises(NotFound):
        store.standing_grants.revoke_standing_grant(w.ws.id, "sg_unknown", "person:a", NOW)
