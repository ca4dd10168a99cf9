"""Real threads on one SQLite file: clicks and in-client answers for one request, all at once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from countersign.core.card_states import CardState, Refusal
from countersign.store.sqlite import SQLiteStore
from tests.gate.world import GateWorld

THREADS = 16


@pytest.fixture
def world(tmp_path):
    store = SQLiteStore(str(tmp_path / "threads.db"))
    yield GateWorld(store)
    store.close()


@pytest.mark.parametrize("round_", range(3))
def test_clicks_and_in_client_answers_at_once_run_the_request_once(world, round_):
    forms = [world.question() for _ in range(THREADS // 2)]  # questions put before the card existed
    card_id = world.held()["confirmationId"]
    barrier = threading.Barrier(THREADS)

    def go(i: int):
        barrier.wait()
        try:
            return world.click(card_id) if i % 2 else world.answer(forms[i // 2])
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return exc

    with ThreadPoolExecutor(THREADS) as pool:
        outcomes = list(pool.map(go, range(THREADS)))
    won = [o for o in outcomes if not isinstance(o, Exception)]
    assert len(won) == 1, outcomes
    assert all(isinstance(o, Refusal) for o in outcomes if isinstance(o, Exception)), outcomes
    assert world.card(card_id).state is CardState.COMPLETED
    assert world.bakeries() == 1 and world.events(card_id) == ["filed", "completed"]
