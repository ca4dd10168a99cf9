"""Real concurrency on one SQLite file: of many simultaneous callers exactly one wins.

These tests open their own :class:`SQLiteStore` (not the parametrized ``store`` fixture), so they
run for SQLite only; every test name carries ``sqlite`` so ``-k sqlite`` selects them.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.core.codes import CodeRecord, code_hash, new_code
from countersign.core.ids import new_id
from countersign.store.sqlite import SQLiteStore
from tests.store._factories import World, audit

THREADS = 32
PROCESSES = 8
ROUNDS = 20  # one round can miss a lost update by luck of scheduling; twenty in a row do not


@pytest.fixture
def sqlite_store(tmp_path):
    s = SQLiteStore(str(tmp_path / "races.db"))
    yield s
    s.close()


def race(call: Callable[[], Any], n: int = THREADS) -> list[Any]:
    """Run ``call`` on ``n`` threads released together; each outcome is a return value or the exception."""
    barrier = threading.Barrier(n)

    def one() -> Any:
        barrier.wait()
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return exc

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda _: one(), range(n)))


def assert_one_confirmed(store: SQLiteStore, w: World, card_id: str, outcomes: list[Any]) -> None:
    won = [o for o in outcomes if not isinstance(o, Exception)]
    lost = [o for o in outcomes if isinstance(o, Exception)]
    assert len(won) == 1 and won[0].state is CardState.RUNNING
    assert all(isinstance(o, Refusal) for o in lost), lost
    assert {o.reason for o in lost} <= {RefusalReason.BEING_CONFIRMED, RefusalReason.ALREADY_ANSWERED}
    assert store.cards.get_card(w.ws.id, card_id, now=1001).state is CardState.RUNNING
    assert [e.event for e in store.cards.audit_trail(w.ws.id, card_id)] == ["filed", "running"]


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_sqlite_threads_confirming_one_card_one_wins(sqlite_store, round_):
    w = World(sqlite_store)
    card = w.file(created_at=1000)
    outcomes = race(
        lambda: sqlite_store.cards.transition_card(
            w.ws.id, card.id, CardState.RUNNING, 1001, audit(card, "running", 1001), channel="page"
        )
    )
    assert_one_confirmed(sqlite_store, w, card.id, outcomes)


def test_sqlite_threads_confirming_and_withdrawing_one_card_one_wins(sqlite_store):
    w = World(sqlite_store)
    card = w.file(created_at=1000)
    targets = iter([CardState.RUNNING, CardState.WITHDRAWN, CardState.DECLINED] * THREADS)
    lock = threading.Lock()

    def move() -> Any:
        with lock:
            target = next(targets)
        return sqlite_store.cards.transition_card(w.ws.id, card.id, target, 1001, audit(card, target.value, 1001))

    outcomes = race(move)
    won = [o for o in outcomes if not isinstance(o, Exception)]
    assert len(won) == 1
    assert all(isinstance(o, Refusal) for o in outcomes if o not in won)
    trail = sqlite_store.cards.audit_trail(w.ws.id, card.id)
    assert [e.event for e in trail] == ["filed", won[0].state.value]


def test_sqlite_threads_spending_one_nonce_one_wins(sqlite_store):
    nonce = new_id("n_")
    assert race(lambda: sqlite_store.limits.use_nonce(nonce, expires_at=100, now=1)).count(True) == 1


def test_sqlite_threads_taking_one_code_one_wins(sqlite_store):
    record = CodeRecord(code_hash=code_hash(new_code()), workspace_id=new_id("ws_"), fingerprint="fp", expires_at=600)
    sqlite_store.limits.put_code(record)
    outcomes = race(lambda: sqlite_store.limits.take_code(record.code_hash, now=1))
    assert outcomes.count(record) == 1
    assert outcomes.count(None) == THREADS - 1


def test_sqlite_threads_claiming_one_email_slot_one_wins(sqlite_store):
    pid = new_id("p_")
    outcomes = race(lambda: sqlite_store.limits.claim_email_slot(pid, now=1, interval=900))
    assert outcomes.count(True) == 1 and outcomes.count(False) == THREADS - 1


def test_sqlite_threads_hitting_one_rate_limit_count_every_hit(sqlite_store):
    key = "k:" + new_id()
    outcomes = race(lambda: sqlite_store.limits.hit_rate_limit(key, now=5, window=60, limit=10))
    assert outcomes.count(True) == 10


# -- several processes on one file ---------------------------------------------------------------


def _confirm_in_process(path: str, workspace_id: str, card_id: str, entry, start) -> str:
    """Runs in a child process: its own store on the shared file."""
    store = SQLiteStore(path)
    start.wait()
    try:
        store.cards.transition_card(workspace_id, card_id, CardState.RUNNING, 1001, entry)
        return "won"
    except Refusal as refused:
        return refused.reason.value
    finally:
        store.close()


@pytest.mark.slow
def test_sqlite_processes_confirming_one_card_one_wins(tmp_path):
    path = str(tmp_path / "shared.db")
    store = SQLiteStore(path)
    w = World(store)
    card = w.file(created_at=1000)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(PROCESSES) as pool:
        start = manager.Barrier(PROCESSES)
        args = [(path, w.ws.id, card.id, audit(card, "running", 1001), start)] * PROCESSES
        outcomes = pool.starmap(_confirm_in_process, args)
    assert outcomes.count("won") == 1
    assert set(outcomes) - {"won"} <= {RefusalReason.BEING_CONFIRMED.value, RefusalReason.ALREADY_ANSWERED.value}
    assert [e.event for e in store.cards.audit_trail(w.ws.id, card.id)] == ["filed", "running"]
    store.close()


# -- identical requests at the same moment: one card ------------------------------------------------


@pytest.mark.parametrize("round_", range(5))
def test_sqlite_threads_filing_one_request_file_one_card(sqlite_store, round_):
    from tests.store._factories import card as new_card, filed

    w = World(sqlite_store)
    fingerprint = new_id("fp_")
    outcomes = race(lambda: (lambda c: sqlite_store.cards.file_card(c, filed(c)))(
        new_card(w.ws, w.person, w.conn, created_at=1000, fingerprint=fingerprint)))
    assert not [o for o in outcomes if isinstance(o, Exception)]
    assert len({o.id for o in outcomes}) == 1
    pending, _ = sqlite_store.cards.list_pending_cards(w.ws.id, w.person.id, now=1001)
    assert [c.id for c in pending] == [outcomes[0].id]
    assert len(sqlite_store.outbox.due_notifications(now=1001)) == 1


def _file_in_process(path: str, ws, person, conn, fingerprint: str, start) -> str:
    from tests.store._factories import card as new_card, filed

    store = SQLiteStore(path)
    start.wait()
    try:
        c = new_card(ws, person, conn, created_at=1000, fingerprint=fingerprint)
        return store.cards.file_card(c, filed(c)).id
    finally:
        store.close()


@pytest.mark.slow
def test_sqlite_processes_filing_one_request_file_one_card_every_round(tmp_path):
    """Two server processes on one file, twenty rounds of identical simultaneous filings."""
    path = str(tmp_path / "shared.db")
    store = SQLiteStore(path)
    w = World(store)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(2) as pool:
        for _ in range(ROUNDS):
            start = manager.Barrier(2)
            fingerprint = new_id("fp_")
            ids = pool.starmap(_file_in_process, [(path, w.ws, w.person, w.conn, fingerprint, start)] * 2)
            assert ids[0] == ids[1]
    pending, _ = store.cards.list_pending_cards(w.ws.id, w.person.id, now=1001, limit=100)
    assert len(pending) == ROUNDS
    store.close()
