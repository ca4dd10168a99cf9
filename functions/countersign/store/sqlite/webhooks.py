"""Webhook endpoints, the events cards owe them, and their deliveries, on SQLite.

Events are written by :mod:`.cards` inside the card's own ``BEGIN IMMEDIATE`` transaction
(:func:`insert_events`), only when the workspace has an endpoint. Each endpoint keeps its
latest :data:`~countersign.store.webhooks.LOG_SIZE` finished deliveries (older ones are removed as
new ones finish).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ...core.canonical import canonical_json
from ..errors import BadInput, NotFound
from ..webhooks import (
    DELIVERED,
    DROPPED,
    GAVE_UP,
    LOG_SIZE,
    MAX_ENDPOINTS,
    PENDING,
    SENDING,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookStore,
    check_endpoint,
    disabled_reason,
)
from . import schema
from .database import Database, unique

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL,
    secret_sealed TEXT NOT NULL, created_at INTEGER NOT NULL, created_by TEXT NOT NULL, enabled INTEGER NOT NULL,
    disabled_at INTEGER, disabled_reason TEXT, failing_since INTEGER, failures INTEGER NOT NULL,
    last_success_at INTEGER);
CREATE INDEX IF NOT EXISTS webhook_endpoints_by_workspace ON webhook_endpoints (workspace_id, created_at, id);
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

ENDPOINT_FIELDS = ("id", "workspace_id", "url", "events", "secret_sealed", "created_at", "created_by", "enabled",
                   "disabled_at", "disabled_reason", "failing_since", "failures", "last_success_at")
EVENT_FIELDS = ("id", "workspace_id", "card_id", "event", "state", "at", "due_at", "done")
DELIVERY_FIELDS = ("id", "endpoint_id", "workspace_id", "event_id", "event", "card_id", "created_at", "payload",
                   "state", "attempts", "due_at", "lease_until", "status_code", "last_attempt_at", "error")


def _endpoint(row: sqlite3.Row) -> WebhookEndpoint:
    values = {k: row[k] for k in ENDPOINT_FIELDS}
    values["events"] = tuple(schema.from_json(row["events"]))
    values["enabled"] = bool(row["enabled"])
    return WebhookEndpoint(**values)


def _event(row: sqlite3.Row) -> WebhookEvent:
    return WebhookEvent(**{k: row[k] for k in EVENT_FIELDS if k != "done"}, done=bool(row["done"]))


def _delivery(row: sqlite3.Row) -> WebhookDelivery:
    return WebhookDelivery(**{k: row[k] for k in DELIVERY_FIELDS})


def has_endpoints(db: sqlite3.Connection, workspace_id: str) -> bool:
    """Inside the caller's transaction: whether card events of ``workspace_id`` are owed to anyone."""
    return db.execute("SELECT 1 FROM webhook_endpoints WHERE workspace_id = ? LIMIT 1", (workspace_id,)).fetchone() \
        is not None


def insert_events(db: sqlite3.Connection, events: Sequence[WebhookEvent]) -> None:
    """Inside the transaction that moves the card. A card's ``card.lapsed`` for its deadline is
    replaced by one for its withdrawal (one lapse per card)."""
    for e in events:
        db.execute(
            f"INSERT OR REPLACE INTO webhook_events ({', '.join(EVENT_FIELDS)})"
            f" VALUES ({', '.join('?' * len(EVENT_FIELDS))})",
            (e.id, e.workspace_id, e.card_id, e.event, e.state, e.at, e.due_at, int(e.done)),
        )


class SQLiteWebhooks(WebhookStore):
    def __init__(self, db: Database):
        self.db = db
        with self.db.write() as conn:
            schema.create_tables(conn, SCHEMA)

    # -- endpoints ---------------------------------------------------------------------------------

    def add_endpoint(self, endpoint: WebhookEndpoint) -> WebhookEndpoint:
        check_endpoint(endpoint)
        with self.db.write() as db, unique(f"A webhook endpoint with id {endpoint.id!r} already exists."):
            (count,) = db.execute("SELECT COUNT(*) FROM webhook_endpoints WHERE workspace_id = ?",
                                  (endpoint.workspace_id,)).fetchone()
            if count >= MAX_ENDPOINTS:
                raise BadInput("url", f"this workspace has {MAX_ENDPOINTS} webhook endpoints already, the most it "
                                      "may have; remove one first.")
            values = {k: getattr(endpoint, k) for k in ENDPOINT_FIELDS}
            values.update(events=canonical_json(list(endpoint.events)), enabled=int(endpoint.enabled))
            db.execute(f"INSERT INTO webhook_endpoints ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                       tuple(values.values()))
        return endpoint

    def list_endpoints(self, workspace_id: str) -> list[WebhookEndpoint]:
        rows = self.db.all("SELECT * FROM webhook_endpoints WHERE workspace_id = ? ORDER BY created_at, id",
                           workspace_id)
        return [_endpoint(r) for r in rows]

    def get_endpoint(self, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
        row = self.db.one("SELECT * FROM webhook_endpoints WHERE id = ? AND workspace_id = ?", endpoint_id,
                          workspace_id)
        if row is None:
            raise NotFound("webhook endpoint", endpoint_id)
        return _endpoint(row)

    def remove_endpoint(self, workspace_id: str, endpoint_id: str) -> None:
        with self.db.write() as db:
            gone = db.execute("DELETE FROM webhook_endpoints WHERE id = ? AND workspace_id = ?",
                              (endpoint_id, workspace_id)).rowcount
            if not gone:
                raise NotFound("webhook endpoint", endpoint_id)
            db.execute("DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND state NOT IN (?, ?)",
                       (endpoint_id, PENDING, SENDING))

    def enable_endpoint(self, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
        with self.db.write() as db:
            found = db.execute(
                "UPDATE webhook_endpoints SET enabled = 1, disabled_at = NULL, disabled_reason = NULL,"
                " failing_since = NULL, failures = 0 WHERE id = ? AND workspace_id = ? RETURNING *",
                (endpoint_id, workspace_id)).fetchall()
        if not found:
            raise NotFound("webhook endpoint", endpoint_id)
        return _endpoint(found[0])

    def disable_endpoint(self, workspace_id: str, endpoint_id: str, now: int, reason: str) -> WebhookEndpoint:
        with self.db.write() as db:
            db.execute("UPDATE webhook_endpoints SET enabled = 0, disabled_at = ?, disabled_reason = ?"
                       " WHERE id = ? AND workspace_id = ? AND enabled = 1", (now, reason, endpoint_id, workspace_id))
            row = db.execute("SELECT * FROM webhook_endpoints WHERE id = ? AND workspace_id = ?",
                             (endpoint_id, workspace_id)).fetchone()
        if row is None:
            raise NotFound("webhook endpoint", endpoint_id)
        return _endpoint(row)

    def record_attempt(self, workspace_id: str, endpoint_id: str, now: int, ok: bool, *,
                       disable_after: int, min_failures: int) -> tuple[WebhookEndpoint, bool] | None:
        with self.db.write() as db:
            row = db.execute("SELECT * FROM webhook_endpoints WHERE id = ? AND workspace_id = ?",
                             (endpoint_id, workspace_id)).fetchone()
            if row is None:
                return None
            before = _endpoint(row)
            if ok:
                found = db.execute("UPDATE webhook_endpoints SET failing_since = NULL, failures = 0,"
                                   " last_success_at = ? WHERE id = ? RETURNING *", (now, endpoint_id)).fetchall()
                return _endpoint(found[0]), False
            since = before.failing_since if before.failing_since is not None else now
            failures = before.failures + 1
            turn_off = before.enabled and now - since >= disable_after and failures >= min_failures
            found = db.execute(
                "UPDATE webhook_endpoints SET failing_since = ?, failures = ?, enabled = ?, disabled_at = ?,"
                " disabled_reason = ? WHERE id = ? RETURNING *",
                (since, failures, 0 if turn_off else int(before.enabled),
                 now if turn_off else before.disabled_at,
                 disabled_reason(failures, since) if turn_off else before.disabled_reason, endpoint_id),
            ).fetchall()
            return _endpoint(found[0]), turn_off

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
        self.get_endpoint(workspace_id, endpoint_id)
        rows = self.db.all("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND workspace_id = ?"
                           " ORDER BY created_at DESC, seq DESC LIMIT ?", endpoint_id, workspace_id, limit)
        return [_delivery(r) for r in rows]

