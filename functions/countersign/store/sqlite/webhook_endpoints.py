"""A workspace's webhook endpoints, on SQLite (the :mod:`countersign.store.webhook_endpoints` role).

The events cards owe them and their deliveries are :mod:`.webhook_deliveries`, in the same
database; removing an endpoint removes its finished deliveries in the same transaction.
"""

from __future__ import annotations

import sqlite3

from ...core.canonical import canonical_json
from ..errors import BadInput, NotFound
from ..webhook_deliveries import PENDING, SENDING
from ..webhook_endpoints import (
    MAX_ENDPOINTS,
    WebhookEndpoint,
    WebhookEndpointStore,
    check_endpoint,
    check_taken,
    disabled_reason,
    stored_events,
)
from . import schema
from .database import Database, unique

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL,
    secret_sealed TEXT NOT NULL, created_at INTEGER NOT NULL, created_by TEXT NOT NULL, enabled INTEGER NOT NULL,
    disabled_at INTEGER, disabled_reason TEXT, failing_since INTEGER, failures INTEGER NOT NULL,
    last_success_at INTEGER, events_exact INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS webhook_endpoints_by_workspace ON webhook_endpoints (workspace_id, created_at, id);
"""

ENDPOINT_FIELDS = ("id", "workspace_id", "url", "events", "secret_sealed", "created_at", "created_by", "enabled",
                   "disabled_at", "disabled_reason", "failing_since", "failures", "last_success_at")


def _endpoint(row: sqlite3.Row) -> WebhookEndpoint:
    values = {k: row[k] for k in ENDPOINT_FIELDS}
    values["events"] = stored_events(schema.from_json(row["events"]), bool(row["events_exact"]))
    values["enabled"] = bool(row["enabled"])
    return WebhookEndpoint(**values)


def endpoint_exists(db: Database, workspace_id: str, endpoint_id: str) -> bool:
    return db.one("SELECT 1 FROM webhook_endpoints WHERE id = ? AND workspace_id = ?", endpoint_id,
                  workspace_id) is not None


def has_endpoints(db: sqlite3.Connection, workspace_id: str) -> bool:
    """Inside the caller's transaction: whether card events of ``workspace_id`` are owed to anyone."""
    return db.execute("SELECT 1 FROM webhook_endpoints WHERE workspace_id = ? LIMIT 1", (workspace_id,)).fetchone() \
        is not None


class SQLiteWebhookEndpoints(WebhookEndpointStore):
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
            values.update(events=canonical_json(list(endpoint.events)), enabled=int(endpoint.enabled), events_exact=1)
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

    def set_endpoint_events(self, workspace_id: str, endpoint_id: str, events: tuple[str, ...]) -> WebhookEndpoint:
        taken = check_taken(events)
        with self.db.write() as db:
            found = db.execute("UPDATE webhook_endpoints SET events = ?, events_exact = 1"
                               " WHERE id = ? AND workspace_id = ? RETURNING *",
                               (canonical_json(list(taken)), endpoint_id, workspace_id)).fetchall()
        if not found:
            raise NotFound("webhook endpoint", endpoint_id)
        return _endpoint(found[0])

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
