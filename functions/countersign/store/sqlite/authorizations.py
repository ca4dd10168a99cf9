"""OAuth clients, authorization requests and codes on SQLite.

The role keeps its own tables (created on open, like the rest of the schema). Each record is one
row: its key and expiry as columns, the record itself as canonical JSON. Expired rows are removed
as new ones are written, so the tables do not grow without bound.
"""

from __future__ import annotations

from ..authorizations import AuthorizationStore, IssuedCode, OAuthClientRecord, PendingAuthorization
from . import schema
from .database import Database

NEVER = 2**62

SCHEMA = """
CREATE TABLE IF NOT EXISTS oauth_clients (client_id TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_requests (
    request_hash TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_codes (
    code_hash TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER);
"""


class SQLiteAuthorizations(AuthorizationStore):
    def __init__(self, db: Database):
        self.db = db
        with self.db.write() as conn:
            schema.create_tables(conn, SCHEMA)

    # -- clients ----------------------------------------------------------------------------------

    def put_oauth_client(self, client: OAuthClientRecord) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM oauth_clients WHERE expires_at <= ?", (client.created_at,))
            db.execute("INSERT OR REPLACE INTO oauth_clients (client_id, data, expires_at) VALUES (?, ?, ?)",
                       (client.client_id, schema.record_json(client),
                        NEVER if client.expires_at is None else client.expires_at))

    def get_oauth_client(self, client_id: str, now: int) -> OAuthClientRecord | None:
        row = self.db.one("SELECT data FROM oauth_clients WHERE client_id = ? AND expires_at > ?", client_id, now)
        return schema.record_from_json(OAuthClientRecord, row["data"]) if row else None

    # -- authorization requests and codes ---------------------------------------------------------

    def put_pending_authorization(self, pending: PendingAuthorization) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM oauth_requests WHERE expires_at <= ?", (pending.created_at,))
            db.execute("INSERT INTO oauth_requests (request_hash, data, expires_at) VALUES (?, ?, ?)",
                       (pending.request_hash, schema.record_json(pending), pending.expires_at))

    def get_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        row = self.db.one("SELECT data FROM oauth_requests WHERE request_hash = ? AND expires_at > ?",
                          request_hash, now)
        return schema.record_from_json(PendingAuthorization, row["data"]) if row else None

    def take_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        with self.db.write() as db:
            found = db.execute("DELETE FROM oauth_requests WHERE request_hash = ? RETURNING data, expires_at",
                               (request_hash,)).fetchall()
        if not found or found[0]["expires_at"] <= now:
            return None
        return schema.record_from_json(PendingAuthorization, found[0]["data"])

    def put_issued_code(self, code: IssuedCode) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM oauth_codes WHERE expires_at <= ?", (code.expires_at - 3600,))
            db.execute("INSERT INTO oauth_codes (code_hash, data, expires_at, used_at) VALUES (?, ?, ?, NULL)",
                       (code.code_hash, schema.record_json(code), code.expires_at))

    def get_issued_code(self, code_hash: str, now: int) -> IssuedCode | None:
        row = self.db.one("SELECT data, used_at FROM oauth_codes WHERE code_hash = ? AND expires_at > ?",
                          code_hash, now)
        return schema.record_from_json(IssuedCode, row["data"], used_at=row["used_at"]) if row else None

    def spend_issued_code(self, code_hash: str, now: int) -> bool:
        with self.db.write() as db:
            return db.execute(
                "UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?",
                (now, code_hash, now),
            ).rowcount == 1

    def issued_code_spent(self, code_hash: str) -> bool | None:
        row = self.db.one("SELECT used_at FROM oauth_codes WHERE code_hash = ?", code_hash)
        return None if row is None else row["used_at"] is not None
