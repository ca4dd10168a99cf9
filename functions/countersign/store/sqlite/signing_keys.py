"""The signing keys in use on SQLite (one row per key: until when its tickets may be spent)."""

from __future__ import annotations

import sqlite3

from ..signing_keys import SigningKeyStore
from .database import Database


class SQLiteSigningKeys(SigningKeyStore):
    def __init__(self, db: Database):
        self.db = db

    def note_signing_key(self, key_id: str, until: int) -> None:
        with self.db.write() as db:
            note_key(db, key_id, until)

    def signing_keys_in_use(self, now: int) -> dict[str, int]:
        return {r["key_id"]: r["until"] for r in self.db.all("SELECT * FROM signing_keys WHERE until > ?", now)}

    def forget_signing_key(self, key_id: str) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM signing_keys WHERE key_id = ?", (key_id,))


def note_key(db: sqlite3.Connection, key_id: str, until: int) -> None:
    """Raise ``key_id``'s until to ``until`` in the transaction ``db`` (a filing's own)."""
    db.execute(
        "INSERT INTO signing_keys (key_id, until) VALUES (?, ?)"
        " ON CONFLICT (key_id) DO UPDATE SET until = max(until, excluded.until)",
        (key_id, until),
    )
