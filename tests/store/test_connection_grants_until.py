"""A connection says, with every read of it, which tools it was given standing grants for and until
when (``Connection.grants_until``), so a held call reads the connection's grants only when one of
them could cover it or be named in its held reply (both stores).

The hint may say more than the grants (a grant that ended stays in it until its expiry), never
less: every read of a connection after a grant's card committed names the grant's tool until at
least the grant's expiry. On DynamoDB the hint is kept on the connection's two items in the
grant's own transaction, on condition that it is still as the grant's plan read it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.store.callers import Owner
from countersign.store.cards import CardCommit
from countersign.store.connections import Connection
from countersign.store.errors import BadInput, Conflict
from countersign.store.grants import ACCESS, IssuedToken
from countersign.store.hashes import secret_hash
from countersign.store.standing_grants import GrantUse, StandingGrant, StandingGrantWrite
from tests.store._factories import DAY, World, audit, card

NOW = 10_000


def _grant(w: World, tool: str = "buy_credits", days: int = 7, conn: Connection | None = None) -> StandingGrant:
    conn = conn or w.conn
    return StandingGrant(id=new_id("sg_"), workspace_id=w.ws.id, connection_id=conn.id, person_id=conn.person_id,
                         tool=tool, name="Top-up", limits={"credits": {"max": 100_000}}, max_uses=1,
                         created_at=NOW, expires_at=NOW + days * DAY)


def _read(w: World, connection_id: str | None = None) -> Connection:
    """The connection as a plan reads it (the world's own unless named)."""
    return w.store.connections.get_connection(w.ws.id, connection_id or w.conn.id)


def _make(w: World, grant: StandingGrant, read: Connection | None = None) -> StandingGrant:
    """Made by its card's commit, the write carrying the connection as read (now, unless ``read``)."""
    c = card(w.ws, w.person, w.conn, created_at=NOW - 10, tool="create_standing_grant")
    w.store.cards.file_card(c, audit(c, "filed", NOW - 10))
    connection = read or _read(w, grant.connection_id)
    w.store.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW - 5, (audit(c, "completed", NOW - 5),),
                                         writes=(StandingGrantWrite(grant, connection),)))
    return grant


def _access(w: World) -> IssuedToken:
    token = IssuedToken(token_hash=secret_hash(new_id("csa_")), kind=ACCESS, connection_id=w.conn.id,
                        workspace_id=w.ws.id, person_id=w.person.id, client_id="client-1",
                        resource="https://cs.example/mcp", created_at=0, expires_at=NOW + 3600, scopes=("mcp",))
    w.store.grants.put_issued_tokens([token])
    return token


def every_read(w: World) -> list[dict[str, int] | None]:
    """``grants_until`` as each read of the connection answers it: by id, by token, in the list,
    and as the callers' reads (a connection token's, an OAuth access token's) give it."""
    store, conn = w.store, w.conn
    token = _access(w)
    return [
        store.connections.get_connection(w.ws.id, conn.id).grants_until,
        store.connections.get_connection_by_token_hash(conn.token_hash).grants_until,
        [c for c in store.connections.list_connections(w.ws.id) if c.id == conn.id][0].grants_until,
        store.callers.get_connection_as(conn.token_hash, Owner(w.ws.id, w.person.id))[0].grants_until,
        store.callers.get_access_as(token.token_hash, Owner(w.ws.id, w.person.id, conn.id), NOW)[1].grants_until,
    ]


def test_a_new_connection_was_given_no_grant_and_every_read_says_so(store):
    assert every_read(World(store)) == [{}] * 5


def test_each_grant_moves_its_tool_on_to_its_expiry_and_never_back(store):
    w = World(store)
    week = _make(w, _grant(w, days=7))
    assert every_read(w) == [{"buy_credits": week.expires_at}] * 5
    _make(w, _grant(w, days=1))  # an earlier expiry for the same tool leaves the later one
    month = _make(w, _grant(w, "set_category_budget", days=30))
    assert every_read(w) == [{"buy_credits": week.expires_at, "set_category_budget": month.expires_at}] * 5
    longer = _make(w, _grant(w, days=20))
    assert _read(w).grants_until == {"buy_credits": longer.expires_at, "set_category_budget": month.expires_at}


def test_a_grant_revoked_or_used_up_stays_in_the_hint_until_its_expiry(store):
    w = World(store)
    used = _make(w, _grant(w))
    at = NOW + 60
    c = card(w.ws, w.person, w.conn, created_at=at, tool="buy_credits")
    store.cards.commit_card(CardCommit(c, CardState.COMPLETED, at, (audit(c, "completed", at),), new=True,
                                       channel="grant", grant_use=GrantUse(used.id, w.ws.id, w.conn.id, at, 50_000)))
    assert store.standing_grants.get_standing_grant(w.ws.id, used.id).state_at(at) == "used up"
    revoked = _make(w, _grant(w, "set_category_budget"))
    store.standing_grants.revoke_standing_grant(w.ws.id, revoked.id, f"person:{w.person.id}", at)
    # (a held reply names either until a day past its expiry: the hint must let it be read)
    assert _read(w).grants_until == {"buy_credits": used.expires_at, "set_category_budget": revoked.expires_at}


def test_another_connection_and_another_workspace_are_untouched(store):
    w, other = World(store), World(store, "Other")
    second = Connection(new_id("c_"), w.ws.id, w.person.id, "Second", secret_hash(new_id("tok_")))
    store.connections.create_connection(second)
    _make(w, _grant(w))
    assert _read(w, second.id).grants_until == {} and _read(other).grants_until == {}


def test_a_grant_made_on_a_read_from_before_another_grant_for_its_tool_never_leaves_the_hint_short(store):
    """Two grants for one tool of one connection confirmed at the same moment, each planned on the
    connection as it was before either: the later-expiring one commits first. DynamoDB refuses the
    second (Conflict, nothing written: the runner plans it again on a fresh read); SQLite reads the
    hint from the grants themselves. Either way the hint covers every grant there is."""
    w = World(store)
    before = _read(w)
    longer = _make(w, _grant(w, days=20), before)
    shorter = _grant(w, days=2)
    try:
        _make(w, shorter, before)
        planned_again = False
    except Conflict:
        assert store.standing_grants.list_standing_grants(w.ws.id) == [longer]
        planned_again = True
    made = store.standing_grants.list_standing_grants(w.ws.id)
    assert _read(w).grants_until == {"buy_credits": max(g.expires_at for g in made)} == {
        "buy_credits": longer.expires_at}
    if planned_again:  # on a fresh read: made, the hint as it was
        _make(w, shorter)
    assert len(store.standing_grants.list_standing_grants(w.ws.id)) == 2
    assert _read(w).grants_until == {"buy_credits": longer.expires_at}


def test_a_grant_written_with_another_connection_is_refused_and_nothing_is_written(store):
    w = World(store)
    second = Connection(new_id("c_"), w.ws.id, w.person.id, "Second", secret_hash(new_id("tok_")))
    store.connections.create_connection(second)
    with pytest.raises(BadInput) as refused:
        _make(w, _grant(w), _read(w, second.id))
    assert refused.value.field == "connection_id"
    assert store.standing_grants.list_standing_grants(w.ws.id) == []
    assert _read(w).grants_until == {} and _read(w, second.id).grants_until == {}


# -- DynamoDB: the hint on the connection's two items -------------------------------------------------


@pytest.fixture
def dynamo():
    from tests.support.aws import moto_dynamodb_store

    with moto_dynamodb_store() as s:
        yield s


def test_dynamodb_refuses_the_second_of_two_grants_planned_on_one_read(dynamo):
    w = World(dynamo)
    before = _read(w)
    _make(w, _grant(w, days=20), before)
    with pytest.raises(Conflict) as refused:
        _make(w, _grant(w, days=2), before)
    assert (refused.value.kind, refused.value.id) == ("connection", w.conn.id)
    assert len(dynamo.standing_grants.list_standing_grants(w.ws.id)) == 1


def test_dynamodb_a_connection_made_before_the_hint_was_kept_says_it_does_not_know(dynamo):
    """(Its grants may predate the hint: None, and a held call reads the grants, as before.)"""
    from countersign.store.dynamodb import codec

    w = World(dynamo)
    for key in (codec.connection_key(w.ws.id, w.conn.id), codec.token_key(w.conn.token_hash)):
        dynamo.client.update_item(TableName=dynamo.table.name, Key=key, UpdateExpression="REMOVE grants_until")
    assert every_read(w) == [None] * 5
    _make(w, _grant(w))
    assert every_read(w) == [None] * 5
    later = World(dynamo, "Later")  # a write carrying a connection read without a hint where the item has one:
    _make(later, _grant(later), replace(_read(later), grants_until=None))
    assert every_read(later) == [None] * 5  # it does not know, rather than say less than the grants
    assert len(dynamo.standing_grants.list_standing_grants(later.ws.id)) == 1
