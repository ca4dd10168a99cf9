"""The transactional outbox on SQLite: one notification per filed card, leased by its sender."""

from __future__ import annotations

import sqlite3

from ..outbox import NOTIFY_DONE, NOTIFY_PENDING, NOTIFY_SENDING, Notification, OutboxStore
from . import schema
from .database import Database


class SQLiteOutbox(OutboxStore):
    def __init__(self, db: Database):
        self.db = db

    def get_notification(self, card_id: str) -> Notification | None:
        row = self.db.one("SELECT * FROM outbox WHERE card_id = ?", card_id)
        return schema.notification(row) if row else None

    def lease_notification(self, card_id: str, now: int, lease_seconds: int) -> Notification | None:
        with self.db.write() as db:
            found = db.execute(
                "UPDATE outbox SET state = ?, lease_until = ? WHERE card_id = ?"
                " AND ((state = ? AND due_at <= ?) OR (state = ? AND lease_until <= ?)) RETURNING *",
                (NOTIFY_SENDING, now + lease_seconds, card_id, NOTIFY_PENDING, now, NOTIFY_SENDING, now),
            ).fetchall()
        return schema.notification(found[0]) if found else None

    def finish_notification(self, card_id: str, now: int, outcome: str) -> None:
        with self.db.write() as db:
            db.execute(
                "UPDATE outbox SET state = ?, outcome = ?, done_at = ?, lease_until = 0 "
                "WHERE card_id = ? AND state = ?",
                (NOTIFY_DONE, outcome, now, card_id, NOTIFY_SENDING),
            )

    def retry_notification(self, card_id: str, now: int, due_at: int) -> None:
        with self.db.write() as db:
            db.execute(
                "UPDATE outbox SET state = ?, due_at = ?, attempts = attempts + 1, lease_until = 0"
                " WHERE card_id = ? AND state = ?",
                (NOTIFY_PENDING, due_at, card_id, NOTIFY_SENDING),
            )

    def due_notifications(self, now: int, limit: int = 50) -> list[Notification]:
        found = self.db.all(
            "SELECT * FROM outbox WHERE (state = ? AND due_at <= ?) OR (state = ? AND lease_until <= ?)"
            " ORDER BY due_at, card_id LIMIT ?",
            NOTIFY_PENDING, now, NOTIFY_SENDING, now, limit,
        )
        return [schema.notification(r) for r in found]


def insert_notification(db: sqlite3.Connection, n: Notification) -> None:
    """Inside the transaction that files the card."""
    db.execute(
        f"INSERT INTO outbox ({', '.join(schema.NOTIFICATION_FIELDS)})"
        f" VALUES ({', '.join('?' * len(schema.NOTIFICATION_FIELDS))})",
        tuple(getattr(n, k) for k in schema.NOTIFICATION_FIELDS),
    )
