"""Real concurrency on a standing grant's last use and the last of its cap: of many simultaneous
commits, each filing its own card with a use of the grant, exactly one runs; the others write
nothing. On SQLite (one file, one connection per thread) and on DynamoDB (moto).

On DynamoDB (moto) only the transactions are serialized, as DynamoDB's are
(tests/support/serial_moto.py): the condition expression inside the transaction decides.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.store.cards import CardCommit
from countersign.store.docs import DocWrite
from countersign.store.errors import GrantUnavailable
from countersign.store.sqlite import SQLiteStore
from countersign.store.standing_grants import GrantUse, StandingGrant, StandingGrantWrite
from tests.store._factories import DAY, World, audit, card
from tests.support.serial_moto import serialized_transactions

THREADS = 16
ROUNDS = 5
NOW = 10_000


@pytest.fixture(params=["sqlite", "dynamodb"])
def racing_store(request, tmp_path) -> Iterator[Any]:
    if request.param == "sqlite":
        s = SQLiteStore(str(tmp_path / "grant-races.db"))
        yield s
        s.close()
        return
    from tests.support.aws import moto_dynamodb_store

    with moto_dynamodb_store() as s, serialized_transactions():
        yield s


def race(call: Callable[[int], Any], n: int = THREADS) -> list[Any]:
    barrier = threading.Barrier(n)

    def one(i: int) -> Any:
        barrier.wait()
        try:
            return call(i)
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return exc

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, range(n)))


def _granted(w: World, max_uses: int, cap: int | None) -> StandingGrant:
    grant = StandingGrant(id=new_id("sg_"), workspace_id=w.ws.id, connection_id=w.conn.id, person_id=w.person.id,
                          tool="buy_credits", name="Top-up", limits={"credits": {"max": 100_000}}, max_uses=max_uses,
                          created_at=NOW, expires_at=NOW + DAY, cap=cap)
    c = card(w.ws, w.person, w.conn, created_at=NOW, tool="create_standing_grant")
    w.store.cards.file_card(c, audit(c, "filed", NOW))
    connection = w.store.connections.get_connection(w.ws.id, w.conn.id)  # as the plan read it
    w.store.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW, (audit(c, "completed", NOW),),
                                         writes=(StandingGrantWrite(grant, connection),)))
    return grant


def _use(w: World, grant: StandingGrant, amount: int, i: int):
    """Thread ``i``'s call: its own card (its own request), a doc of its own, and the grant's use."""
    at = NOW + 100
    c = card(w.ws, w.person, w.conn, created_at=at, tool="buy_credits")
    return w.store.cards.commit_card(CardCommit(
        c, CardState.COMPLETED, at, (audit(c, "completed", at),), new=True, channel="grant",
        writes=(DocWrite("purchase", f"p{i}", {"amount": amount}, 0),),
        grant_use=GrantUse(grant.id, w.ws.id, w.conn.id, at, amount, grant.cap)))


def _exactly_one_ran(store, w: World, grant: StandingGrant, outcomes: list[Any], uses: int, spent: int) -> None:
    won = [o for o in outcomes if not isinstance(o, Exception)]
    lost = [o for o in outcomes if isinstance(o, Exception)]
    assert len(won) == 1, outcomes
    assert all(isinstance(o, GrantUnavailable) for o in lost), lost
    after = store.standing_grants.get_standing_grant(w.ws.id, grant.id)
    assert (after.uses, after.spent) == (uses, spent)
    ran = [d.id for d in store.docs.list_docs(w.ws.id, "purchase")]
    assert len(ran) == 1  # only the winner's effect was written
    assert [u.card_id for u in store.standing_grants.list_standing_grant_uses(w.ws.id, grant.id)][-1] == won[0].id


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_calls_racing_for_the_last_use_exactly_one_runs(racing_store, round_):
    w = World(racing_store)
    grant = _granted(w, max_uses=3, cap=None)
    for i in range(2):
        _use(w, grant, 1_000, 100 + i)
    for d in racing_store.docs.list_docs(w.ws.id, "purchase"):  # (only the race's effects are counted)
        racing_store.docs.write_docs(w.ws.id, [DocWrite("purchase", d.id, None, d.version)])
    outcomes = race(lambda i: _use(w, grant, 1_000, i))
    _exactly_one_ran(racing_store, w, grant, outcomes, uses=3, spent=3_000)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_calls_racing_for_the_last_of_the_cap_exactly_one_runs(racing_store, round_):
    w = World(racing_store)
    grant = _granted(w, max_uses=100, cap=100_000)
    outcomes = race(lambda i: _use(w, grant, 60_000, i))
    _exactly_one_ran(racing_store, w, grant, outcomes, uses=1, spent=60_000)
