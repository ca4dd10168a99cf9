"""Whether a write could take the store's write lock now without waiting (Store.write_lock_free): what
the local server asks before deciding a call on its event loop (countersign.gate.offload)."""

from __future__ import annotations

import sqlite3
import threading

from countersign.store.sqlite import SQLiteStore
from tests.store._factories import World


def test_free_unless_another_writer_holds_it_and_the_store_still_waits_for_its_own_writes(store):
    assert store.write_lock_free()
    if not isinstance(store, SQLiteStore):
        return  # DynamoDB has no write lock: every conditional write goes on its own
    other = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    # given up in 3 s: a look that waited for the lock (up to 30 s) would then find it free
    released = threading.Timer(3, other.execute, ("ROLLBACK",))
    released.start()
    try:
        assert not store.write_lock_free()
    finally:
        released.cancel()
        released.join()
        if other.in_transaction:
            other.execute("ROLLBACK")
        other.close()
    assert store.write_lock_free()
    busy = store.database.connection().execute("PRAGMA busy_timeout").fetchone()[0]
    assert busy == 30_000  # a write made after the look still waits for another writer, as before
    World(store)  # and writes
