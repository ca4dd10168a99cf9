"""A store that cannot take the write during a confirm (the file turned read-only, the disk
filled): nothing is written, the card still waits, the error says so and that a retry is safe, and
the same click runs once when the store is back (SQLite, a real SQLITE_READONLY)."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.store.errors import StoreUnavailable
from countersign.store.sqlite import SQLiteStore
from tests.gate.world import GateWorld


@pytest.fixture
def world(tmp_path):
    store = SQLiteStore(str(tmp_path / "faulty.db"))
    yield GateWorld(store)
    store.close()


def refuse_writes(store: SQLiteStore, on: bool) -> None:
    """This thread's connection may read but not write (what a read-only or full file gives)."""
    store.database.connection().execute(f"PRAGMA query_only = {'ON' if on else 'OFF'}")


def test_a_store_that_cannot_write_during_a_confirm_writes_nothing_and_the_retry_runs_once(world):
    card_id = world.held()["confirmationId"]
    refuse_writes(world.store, True)
    with pytest.raises(StoreUnavailable) as refused:
        world.click(card_id)
    assert "nothing was written" in refused.value.message and "calling again with the same arguments is safe" in (
        refused.value.message)
    refuse_writes(world.store, False)
    assert world.card(card_id).state is CardState.PENDING and world.bakeries() == 0
    assert world.events(card_id) == ["filed"]
    assert world.click(card_id).state is CardState.COMPLETED
    assert world.bakeries() == 1
