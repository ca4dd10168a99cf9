"""Push subscriptions on SQLite."""

from __future__ import annotations

import sqlite3

from ..errors import BadInput
from ..push_subscriptions import MAX_SUBSCRIPTIONS, PushSubscription, PushSubscriptionStore, check_subscription
from . import schema
from .database import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS push_subscriptions (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, endpoint TEXT NOT NULL,
    p256dh TEXT NOT NULL, auth TEXT NOT NULL, device TEXT NOT NULL, created_at INTEGER NOT NULL,
    last_used_at INTEGER, signed_in_until INTEGER);
CREATE INDEX IF NOT EXISTS push_subscriptions_by_person ON push_subscriptions (workspace_id, person_id, created_at, id);
"""

FIELDS = ("id", "workspace_id", "person_id", "endpoint", "p256dh", "auth", "device", "created_at", "last_used_at",
          "signed_in_until")


def _subscription(row: sqlite3.Row) -> PushSubscription:
    return PushSubscription(**{k: row[k] for k in FIELDS})


class SQLitePushSubscriptions(PushSubscriptionStore):
    def __init__(self, db: Database):
        self.db = db
        with self.db.write() as conn:
            schema.create_tables(conn, SCHEMA)

    def add_subscription(self, subscription: PushSubscription) -> PushSubscription:
        check_subscription(subscription)
        s = subscription
        with self.db.write() as db:
            (others,) = db.execute(
                "SELECT COUNT(*) FROM push_subscriptions WHERE workspace_id = ? AND person_id = ? AND id != ?",
                (s.workspace_id, s.person_id, s.id)).fetchone()
            if others >= MAX_SUBSCRIPTIONS:
                raise BadInput("endpoint", f"at most {MAX_SUBSCRIPTIONS} devices get notifications; remove one in "
                                           "Settings first.")
            db.execute(f"INSERT OR REPLACE INTO push_subscriptions ({', '.join(FIELDS)}) "
                       f"VALUES ({', '.join('?' * len(FIELDS))})", tuple(getattr(s, k) for k in FIELDS))
        return subscription

    def list_subscriptions(self, workspace_id: str, person_id: str) -> list[PushSubscription]:
        rows = self.db.all("SELECT * FROM push_subscriptions WHERE workspace_id = ? AND person_id = ?"
                           " ORDER BY created_at, id", workspace_id, person_id)
        return [_subscription(row) for row in rows]

    def remove_subscription(self, workspace_id: str, person_id: str, subscription_id: str) -> bool:
        with self.db.write() as db:
            return db.execute("DELETE FROM push_subscriptions WHERE id = ? AND workspace_id = ? AND person_id = ?",
                              (subscription_id, workspace_id, person_id)).rowcount == 1

    def renew_subscription(self, workspace_id: str, person_id: str, subscription_id: str,
                           signed_in_until: int) -> bool:
        with self.db.write() as db:
            return db.execute("UPDATE push_subscriptions SET signed_in_until = ? WHERE id = ? AND workspace_id = ?"
                              " AND person_id = ?", (signed_in_until, subscription_id, workspace_id,
                                                     person_id)).rowcount == 1

    def touch_subscription(self, workspace_id: str, person_id: str, subscription_id: str, now: int) -> None:
        with self.db.write() as db:
            db.execute("UPDATE push_subscriptions SET last_used_at = ? WHERE id = ? AND workspace_id = ?"
                       " AND person_id = ?", (now, subscription_id, workspace_id, person_id))
