"""Suppressed addresses (bounces, complaints) on SQLite: one row per lower-cased address."""

from __future__ import annotations

from ..suppressions import Suppression, SuppressionStore, check_suppression
from ..workspaces import email_key
from .database import Database


class SQLiteSuppressions(SuppressionStore):
    def __init__(self, db: Database):
        self.db = db

    def suppress_address(self, suppression: Suppression) -> None:
        check_suppression(suppression)
        with self.db.write() as db:
            db.execute(
                "INSERT INTO suppressions (email, reason, at, detail) VALUES (?, ?, ?, ?) ON CONFLICT (email)"
                " DO UPDATE SET reason = excluded.reason, at = excluded.at, detail = excluded.detail",
                (suppression.email, suppression.reason, suppression.at, suppression.detail),
            )

    def address_suppression(self, email: str) -> Suppression | None:
        row = self.db.one("SELECT email, reason, at, detail FROM suppressions WHERE email = ?", email_key(email))
        return None if row is None else Suppression(row["email"], row["reason"], row["at"], row["detail"])

    def lift_suppression(self, email: str) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM suppressions WHERE email = ?", (email_key(email),))
