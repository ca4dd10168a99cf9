"""Email slots, rate limits, confirmation codes and nonces on SQLite."""

from __future__ import annotations

import sqlite3

from ...core.codes import CodeRecord
from ..limits import LimitStore, OverLimit, RequestCounts
from . import schema
from .database import Database


class SQLiteLimits(LimitStore):
    def __init__(self, db: Database):
        self.db = db

    # -- single-use values: confirmation codes and answer nonces ---------------------------------

    def put_code(self, record: CodeRecord) -> None:
        with self.db.write() as db:
            db.execute(
                f"INSERT OR REPLACE INTO codes ({', '.join(schema.CODE_FIELDS)}) "
                f"VALUES ({', '.join('?' * len(schema.CODE_FIELDS))})",
                tuple(getattr(record, k) for k in schema.CODE_FIELDS),
            )

    def take_code(self, code_hash: str, now: int) -> CodeRecord | None:
        with self.db.write() as db:
            found = db.execute("DELETE FROM codes WHERE code_hash = ? RETURNING *", (code_hash,)).fetchall()
        return schema.code(found[0]) if found else None

    def use_nonce(self, nonce: str, expires_at: int, now: int) -> bool:
        """Insert, or take over a record that has expired (which reads as absent)."""
        with self.db.write() as db:
            return db.execute(
                "INSERT INTO nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO UPDATE"
                " SET expires_at = excluded.expires_at WHERE nonces.expires_at <= ?",
                (nonce, expires_at, now),
            ).rowcount == 1

    # -- rate limits ----------------------------------------------------------------------------

    def claim_email_slot(self, person_id: str, now: int, interval: int, claimer: str | None = None) -> bool:
        with self.db.write() as db:
            return db.execute(
                "INSERT INTO email_slots (person_id, claimed_at, claimer) VALUES (?, ?, ?) ON CONFLICT (person_id)"
                " DO UPDATE SET claimed_at = excluded.claimed_at, claimer = excluded.claimer"
                " WHERE email_slots.claimed_at + ? <= excluded.claimed_at OR email_slots.claimer = excluded.claimer",
                (person_id, now, claimer, interval),
            ).rowcount == 1

    def release_email_slot(self, person_id: str, claimed_at: int) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM email_slots WHERE person_id = ? AND claimed_at = ?", (person_id, claimed_at))

    def hit_rate_limit(self, key: str, now: int, window: int, limit: int) -> bool:
        start = now - now % window
        with self.db.write() as db:
            db.execute("DELETE FROM rate_hits WHERE bucket = ? AND window_start < ?", (key, start))
            (hits,) = db.execute(
                "INSERT INTO rate_hits (bucket, window_start, hits) VALUES (?, ?, 1)"
                " ON CONFLICT (bucket, window_start) DO UPDATE SET hits = hits + 1 RETURNING hits",
                (key, start),
            ).fetchall()[0]
        return hits <= limit

    def read_counts(self, counts: RequestCounts) -> None:
        read_counts(self.db.connection(), counts)

    def take_counts(self, counts: RequestCounts) -> bool:
        try:
            with self.db.write() as db:
                take_counts(db, counts)
        except OverLimit:
            return False
        counts.taken = True
        return True


def read_counts(db: sqlite3.Connection, counts: RequestCounts) -> None:
    """Each counter's hits in the window into ``counts.seen`` (one statement)."""
    keys = [key for key, _ in counts.counters]
    found = db.execute(
        f"SELECT bucket, hits FROM rate_hits WHERE window_start = ? AND bucket IN ({', '.join('?' * len(keys))})",
        (counts.window_start, *keys),
    ).fetchall()
    counts.seen = {bucket: hits for bucket, hits in found}


def take_counts(db: sqlite3.Connection, counts: RequestCounts) -> None:
    """Inside the caller's transaction: each counter one hit more; :class:`OverLimit` (the caller's
    transaction rolls back) if one is at its limit. The caller sets ``counts.taken`` once it commits."""
    start = counts.window_start
    for key, limit in counts.counters:
        db.execute("DELETE FROM rate_hits WHERE bucket = ? AND window_start < ?", (key, start))
        taken = db.execute(
            "INSERT INTO rate_hits (bucket, window_start, hits) VALUES (?, ?, 1)"
            " ON CONFLICT (bucket, window_start) DO UPDATE SET hits = hits + 1 WHERE hits < ?",
            (key, start, limit),
        ).rowcount
        if taken != 1:
            raise OverLimit(counts)
