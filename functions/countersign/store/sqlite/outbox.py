"""The transactional outbox on SQLite: one notification per filed card, leased by its sender."""

from __future__ import annotations

import dataclasses
import sqlite3

from ..outbox import (
    MAX_LISTED,
    NOTIFY_DONE,
    NOTIFY_PENDING,
    NOTIFY_SENDING,
    Notification,
    OutboxStore,
    check_notification,
    check_quiet_wait,
)
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

    def add_notification(self, n: Notification) -> bool:
        check_notification(n)
        with self.db.write() as db:
            return insert_notification(db, n, unless_present=True)

    def defer_notification(self, card_id: str, due_at: int) -> None:
        with self.db.write() as db:
            db.execute(
                "UPDATE outbox SET state = ?, due_at = ?, lease_until = 0 WHERE card_id = ? AND state = ?",
                (NOTIFY_PENDING, due_at, card_id, NOTIFY_SENDING),
            )

    def hold_for_quiet_hours(self, wait: Notification, card_id: str) -> bool:
        check_quiet_wait(wait, card_id)
        with self.db.write() as db:
            row = db.execute("SELECT state, listed FROM outbox WHERE card_id = ?", (wait.card_id,)).fetchone()
            if row is None:
                return insert_notification(db, dataclasses.replace(wait, listed=(card_id,)))
            listed = list(schema.from_json(row["listed"]) or ())
            if row["state"] != NOTIFY_PENDING:
                return False
            if card_id in listed:
                return True
            if len(listed) >= MAX_LISTED:
                return False
            db.execute("UPDATE outbox SET listed = ? WHERE card_id = ? AND state = ?",
                       (schema.to_json([*listed, card_id]), wait.card_id, NOTIFY_PENDING))
            return True

    def take_notification(self, card_id: str, now: int, outcome: str) -> Notification | None:
        with self.db.write() as db:
            found = db.execute(
                "UPDATE outbox SET state = ?, outcome = ?, done_at = ?, lease_until = 0"
                " WHERE card_id = ? AND state = ? AND due_at <= ? RETURNING *",
                (NOTIFY_DONE, outcome, now, card_id, NOTIFY_PENDING, now),
            ).fetchall()
        return schema.notification(found[0]) if found else None

    def due_notifications(self, now: int, limit: int = 50) -> list[Notification]:
        found = self.db.all(
            "SELECT * FROM outbox WHERE (state = ? AND due_at <= ?) OR (state = ? AND lease_until <= ?)"
            " ORDER BY due_at, card_id LIMIT ?",
            NOTIFY_PENDING, now, NOTIFY_SENDING, now, limit,
        )
        return [schema.notification(r) for r in found]


def insert_notification(db: sqlite3.Connection, n: Notification, *, unless_present: bool = False) -> bool:
    """Inside the transaction that files the card (or, ``unless_present``, on its own: False when
    a notification of that id exists)."""
    columns = (*schema.NOTIFICATION_FIELDS, "listed")
    return db.execute(
        f"INSERT {'OR IGNORE ' if unless_present else ''}INTO outbox ({', '.join(columns)})"
        f" VALUES ({', '.join('?' * len(columns))})",
        schema.notification_row(n),
    ).rowcount == 1
