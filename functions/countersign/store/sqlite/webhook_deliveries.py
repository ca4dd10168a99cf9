"""The events cards owe webhook endpoints, and their deliveries, on SQLite (the
:mod:`countersign.store.webhook_deliveries` role).

Events are written by :mod:`.cards` inside the card's own ``BEGIN IMMEDIATE`` transaction
(:func:`insert_events`), only when the workspace has an endpoint (:mod:`.webhook_endpoints`). Each
endpoint keeps its latest :data:`~countersign.store.webhook_deliveries.LOG_SIZE` finished
deliveries (older ones are removed as new ones finish).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..errors import BadInput, NotFound
from ..webhook_deliveries import (
    DELIVERED,
    DROPPED,
    GAVE_UP,
    LOG_SIZE,
    PENDING,
    SENDING,
    WebhookDelivery,
    WebhookDeliveryStore,
    WebhookEvent,
)
from . import schema
from .database import Database
from .webhook_endpoints import endpoint_exists

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_events (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, card_id TEXT NOT NULL, event TEXT NOT NULL, state TEXT NOT NULL,
    at INTEGER NOT NULL, due_at INTEGER NOT NULL, done INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS webhook_events_due ON webhook_events (due_at, id) WHERE done = 0;
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, workspace_id TEXT NOT NULL, event_id TEXT NOT NULL,
    event TEXT NOT NULL, card_id TEXT NOT NULL, created_at INTEGER NOT NULL, payload TEXT NOT NULL,
    state TEXT NOT NULL, attempts INTEGER NOT NULL, due_at INTEGER NOT NULL, lease_until INTEGER NOT NULL,
    status_code INTEGER, last_attempt_at INTEGER, error TEXT, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (state, due_at)
    WHERE state IN ('pending', 'sending');
CREATE INDEX IF NOT EXISTS webhook_deliveries_log ON webhook_deliveries (endpoint_id, created_at, seq);
"""

EVENT_FIELDS = ("id", "workspace_id", "card_id", "event", "state", "at", "due_at", "done")
DELIVERY_FIELDS = ("id", "endpoint_id", "workspace_id", "event_id", "event", "card_id", "created_at", "payload",
                   "state", "attempts", "due_at", "lease_until", "status_code", "last_attempt_at", "error")


def _event(row: sqlite3.Row) -> WebhookEvent:
    return WebhookEvent(**{k: row[k] for k in EVENT_FIELDS if k != "done"}, done=bool(row["done"]))


def _delivery(row: sqlite3.Row) -> WebhookDelivery:
    return WebhookDelivery(**{k: row[k] for k in DELIVERY_FIELDS})


def insert_events(db: sqlite3.Connection, events: Sequence[WebhookEvent]) -> None:
    """Inside the transaction that moves the card. A card's ``card.lapsed`` for its deadline is
    replaced by one for its withdrawal (one lapse per card)."""
    for e in events:
        db.execute(
            f"INSERT OR REPLACE INTO webhook_events ({', '.join(EVENT_FIELDS)})"
            f" VALUES ({', '.join('?' * len(EVENT_FIELDS))})",
            (e.id, e.workspace_id, e.card_id, e.event, e.state, e.at, e.due_at, int(e.done)),
        )


class SQLiteWebhookDeliveries(WebhookDeliveryStore):
    def __init__(self, db: Database):
        self.db = db
        with self.db.write() as conn:
            schema.create_tables(conn, SCHEMA)

    # -- events ------------------------------------------------------------------------------------

    def get_event(self, event_id: str) -> WebhookEvent | None:
        row = self.db.one("SELECT * FROM webhook_events WHERE id = ?", event_id)
        return _event(row) if row else None

    def due_events(self, now: int, limit: int = 50) -> list[WebhookEvent]:
        rows = self.db.all("SELECT * FROM webhook_events WHERE done = 0 AND due_at <= ? ORDER BY due_at, id LIMIT ?",
                           now, limit)
        return [_event(r) for r in rows]

    def fan_out(self, event: WebhookEvent, deliveries: list[WebhookDelivery]) -> bool:
        with self.db.write() as db:
            if not db.execute("UPDATE webhook_events SET done = 1 WHERE id = ? AND done = 0", (event.id,)).rowcount:
                return False
            for d in deliveries:
                values = {k: getattr(d, k) for k in DELIVERY_FIELDS}
                db.execute(
                    f"INSERT OR IGNORE INTO webhook_deliveries ({', '.join(values)}, seq)"
                    f" VALUES ({', '.join('?' * len(values))},"
                    " (SELECT COALESCE(MAX(seq), 0) + 1 FROM webhook_deliveries))",
                    tuple(values.values()),
                )
        return True

    # -- deliveries --------------------------------------------------------------------------------

    def get_delivery(self, delivery: WebhookDelivery) -> WebhookDelivery | None:
        row = self.db.one("SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?", delivery.id,
                          delivery.endpoint_id)
        return _delivery(row) if row else None

    def lease_delivery(self, delivery: WebhookDelivery, now: int, lease_seconds: int) -> WebhookDelivery | None:
        delivery_id, endpoint_id = delivery.id, delivery.endpoint_id
        with self.db.write() as db:
            found = db.execute(
                "UPDATE webhook_deliveries SET state = ?, lease_until = ? WHERE id = ? AND endpoint_id = ?"
                " AND ((state = ? AND due_at <= ?) OR (state = ? AND lease_until <= ?)) RETURNING *",
                (SENDING, now + lease_seconds, delivery_id, endpoint_id, PENDING, now, SENDING, now),
            ).fetchall()
        return _delivery(found[0]) if found else None

    def finish_delivery(self, delivery: WebhookDelivery, now: int, state: str, *, status_code: int | None = None,
                        error: str | None = None, attempted: bool = True) -> None:
        delivery_id, endpoint_id = delivery.id, delivery.endpoint_id
        if state not in (DELIVERED, GAVE_UP, DROPPED):
            raise BadInput("state", f"a delivery finishes {DELIVERED}, {GAVE_UP} or {DROPPED}, not {state!r}.")
        with self.db.write() as db:
            db.execute(
                "UPDATE webhook_deliveries SET state = ?, status_code = COALESCE(?, status_code), error = ?,"
                " attempts = attempts + ?, last_attempt_at = CASE WHEN ? THEN ? ELSE last_attempt_at END,"
                " lease_until = 0 WHERE id = ? AND endpoint_id = ? AND state = ?",
                (state, status_code, error, int(attempted), int(attempted), now, delivery_id, endpoint_id, SENDING),
            )
            # the log keeps the endpoint's latest LOG_SIZE finished deliveries
            db.execute(
                "DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND state NOT IN (?, ?) AND seq NOT IN"
                " (SELECT seq FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at DESC, seq DESC"
                " LIMIT ?)",
                (endpoint_id, PENDING, SENDING, endpoint_id, LOG_SIZE),
            )

    def retry_delivery(self, delivery: WebhookDelivery, now: int, due_at: int, *, status_code: int | None,
                       error: str | None) -> None:
        delivery_id, endpoint_id = delivery.id, delivery.endpoint_id
        with self.db.write() as db:
            db.execute(
                "UPDATE webhook_deliveries SET state = ?, due_at = ?, attempts = attempts + 1, lease_until = 0,"
                " status_code = ?, error = ?, last_attempt_at = ? WHERE id = ? AND endpoint_id = ? AND state = ?",
                (PENDING, due_at, status_code, error, now, delivery_id, endpoint_id, SENDING),
            )

    def due_deliveries(self, now: int, limit: int = 50) -> list[WebhookDelivery]:
        rows = self.db.all(
            "SELECT * FROM webhook_deliveries WHERE (state = ? AND due_at <= ?) OR (state = ? AND lease_until <= ?)"
            " ORDER BY due_at, id LIMIT ?", PENDING, now, SENDING, now, limit)
        return [_delivery(r) for r in rows]

    def list_deliveries(self, workspace_id: str, endpoint_id: str, limit: int = LOG_SIZE) -> list[WebhookDelivery]:
        if not endpoint_exists(self.db, workspace_id, endpoint_id):
            raise NotFound("webhook endpoint", endpoint_id)
        rows = self.db.all("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND workspace_id = ?"
                           " ORDER BY created_at DESC, seq DESC LIMIT ?", endpoint_id, workspace_id, limit)
        return [_delivery(r) for r in rows]
