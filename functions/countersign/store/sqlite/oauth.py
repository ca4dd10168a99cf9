"""OAuth clients, authorization requests, codes, grants, tokens and connection use on SQLite.

The role keeps its own tables (created on open, like the rest of the schema). Each record is one
row: its key and expiry as columns, the record itself as canonical JSON. Expired rows are removed
as new ones are written, so the tables do not grow without bound.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from ..interface import OAuthStore
from ..oauth_records import (
    REFRESH,
    IssuedCode,
    IssuedToken,
    OAuthClientRecord,
    OAuthGrant,
    PendingAuthorization,
    data_fields,
    known_fields,
)
from . import schema
from .database import Database

NEVER = 2**62

SCHEMA = """
CREATE TABLE IF NOT EXISTS oauth_clients (client_id TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_requests (
    request_hash TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_codes (
    code_hash TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER);
CREATE TABLE IF NOT EXISTS oauth_grants (
    connection_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, data TEXT NOT NULL,
    created_at INTEGER NOT NULL, code_hash TEXT);
CREATE INDEX IF NOT EXISTS oauth_grants_by_workspace ON oauth_grants (workspace_id, created_at, connection_id);
CREATE TABLE IF NOT EXISTS oauth_tokens (
    token_hash TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER);
CREATE TABLE IF NOT EXISTS connection_uses (
    connection_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, last_used_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS connection_uses_by_workspace ON connection_uses (workspace_id);
"""

R = TypeVar("R")


def _dump(record: Any) -> str:
    return schema.to_json(data_fields(record))


def _load(cls: type[R], text: str, **override: Any) -> R:
    values = json.loads(text)
    if "scopes" in values:
        values["scopes"] = tuple(values["scopes"])
    values.update(override)
    return cls(**known_fields(cls, values))


# Columns added to the role's tables since they were first made (a database of an earlier release
# gains them on open).
ADDED_COLUMNS = {"oauth_grants": (("code_hash", "TEXT"),)}


class SQLiteOAuth(OAuthStore):
    def __init__(self, db: Database):
        self.db = db
        with self.db.write() as conn:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            schema.add_missing_columns(conn, ADDED_COLUMNS)

    # -- clients ----------------------------------------------------------------------------------

    def put_oauth_client(self, client: OAuthClientRecord) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM oauth_clients WHERE expires_at <= ?", (client.created_at,))
            db.execute("INSERT OR REPLACE INTO oauth_clients (client_id, data, expires_at) VALUES (?, ?, ?)",
                       (client.client_id, _dump(client), NEVER if client.expires_at is None else client.expires_at))

    def get_oauth_client(self, client_id: str, now: int) -> OAuthClientRecord | None:
        row = self.db.one("SELECT data FROM oauth_clients WHERE client_id = ? AND expires_at > ?", client_id, now)
        return _load(OAuthClientRecord, row["data"]) if row else None

    # -- authorization requests and codes ---------------------------------------------------------

    def put_pending_authorization(self, pending: PendingAuthorization) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM oauth_requests WHERE expires_at <= ?", (pending.created_at,))
            db.execute("INSERT INTO oauth_requests (request_hash, data, expires_at) VALUES (?, ?, ?)",
                       (pending.request_hash, _dump(pending), pending.expires_at))

    def get_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        row = self.db.one("SELECT data FROM oauth_requests WHERE request_hash = ? AND expires_at > ?",
                          request_hash, now)
        return _load(PendingAuthorization, row["data"]) if row else None

    def take_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        with self.db.write() as db:
            found = db.execute("DELETE FROM oauth_requests WHERE request_hash = ? RETURNING data, expires_at",
                               (request_hash,)).fetchall()
        return _load(PendingAuthorization, found[0]["data"]) if found and found[0]["expires_at"] > now else None

    def put_issued_code(self, code: IssuedCode) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM oauth_codes WHERE expires_at <= ?", (code.expires_at - 3600,))
            db.execute("INSERT INTO oauth_codes (code_hash, data, expires_at, used_at) VALUES (?, ?, ?, NULL)",
                       (code.code_hash, _dump(code), code.expires_at))

    def get_issued_code(self, code_hash: str, now: int) -> IssuedCode | None:
        row = self.db.one("SELECT data, used_at FROM oauth_codes WHERE code_hash = ? AND expires_at > ?",
                          code_hash, now)
        return _load(IssuedCode, row["data"], used_at=row["used_at"]) if row else None

    def spend_issued_code(self, code_hash: str, now: int) -> bool:
        with self.db.write() as db:
            return db.execute(
                "UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?",
                (now, code_hash, now),
            ).rowcount == 1

    def issued_code_spent(self, code_hash: str) -> bool | None:
        row = self.db.one("SELECT used_at FROM oauth_codes WHERE code_hash = ?", code_hash)
        return None if row is None else row["used_at"] is not None

    # -- grants and tokens ------------------------------------------------------------------------

    def put_oauth_grant(self, grant: OAuthGrant) -> None:
        with self.db.write() as db:
            db.execute(
                "INSERT OR REPLACE INTO oauth_grants (connection_id, workspace_id, person_id, data, created_at,"
                " code_hash) VALUES (?, ?, ?, ?, ?, ?)",
                (grant.connection_id, grant.workspace_id, grant.person_id,
                 _dump(grant), grant.created_at, grant.code_hash),
            )

    def list_oauth_grants(self, workspace_id: str, person_id: str | None = None) -> list[OAuthGrant]:
        rows = self.db.all(
            "SELECT data, code_hash FROM oauth_grants WHERE workspace_id = ? AND (? IS NULL OR person_id = ?)"
            " ORDER BY created_at, connection_id", workspace_id, person_id, person_id)
        return [_load(OAuthGrant, row["data"], code_hash=row["code_hash"]) for row in rows]

    def forget_grant_code(self, workspace_id: str, connection_id: str) -> None:
        with self.db.write() as db:
            db.execute("UPDATE oauth_grants SET code_hash = NULL WHERE connection_id = ? AND workspace_id = ?",
                       (connection_id, workspace_id))

    def put_issued_tokens(self, tokens: Sequence[IssuedToken]) -> None:
        with self.db.write() as db:
            self._insert_tokens(db, tokens)

    @staticmethod
    def _insert_tokens(db, tokens: Sequence[IssuedToken]) -> None:
        if tokens:
            db.execute("DELETE FROM oauth_tokens WHERE expires_at <= ?", (min(t.created_at for t in tokens),))
        for token in tokens:
            db.execute("INSERT INTO oauth_tokens (token_hash, data, expires_at, used_at) VALUES (?, ?, ?, NULL)",
                       (token.token_hash, _dump(token), token.expires_at))

    def get_issued_token(self, token_hash: str, now: int) -> IssuedToken | None:
        row = self.db.one("SELECT data, used_at FROM oauth_tokens WHERE token_hash = ? AND expires_at > ?",
                          token_hash, now)
        return _load(IssuedToken, row["data"], used_at=row["used_at"]) if row else None

    def rotate_refresh_token(self, token_hash: str, now: int, replacements: Sequence[IssuedToken]) -> bool:
        with self.db.write() as db:
            spent = db.execute(
                "UPDATE oauth_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?"
                " AND json_extract(data, '$.kind') = ?",
                (now, token_hash, now, REFRESH),
            ).rowcount == 1
            if spent:
                self._insert_tokens(db, replacements)
            return spent

    # -- connections in use -------------------------------------------------------------------------

    def note_connection_use(self, workspace_id: str, connection_id: str, now: int, every: int = 60) -> None:
        row = self.db.one("SELECT last_used_at FROM connection_uses WHERE connection_id = ?", connection_id)
        if row is not None and row["last_used_at"] > now - every:
            return  # recorded recently: no write (and no write lock) on every request
        with self.db.write() as db:
            db.execute(
                "INSERT INTO connection_uses (connection_id, workspace_id, last_used_at) VALUES (?, ?, ?)"
                " ON CONFLICT (connection_id) DO UPDATE SET last_used_at = excluded.last_used_at"
                " WHERE connection_uses.last_used_at <= excluded.last_used_at - ?",
                (connection_id, workspace_id, now, every),
            )

    def connections_last_used(self, workspace_id: str) -> dict[str, int]:
        rows = self.db.all("SELECT connection_id, last_used_at FROM connection_uses WHERE workspace_id = ?",
                           workspace_id)
        return {row["connection_id"]: row["last_used_at"] for row in rows}
