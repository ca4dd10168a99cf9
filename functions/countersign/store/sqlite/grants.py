"""OAuth grants and their tokens on SQLite.

The role keeps its own tables (created on open, like the rest of the schema). Each record is one
row: its key and expiry as columns, the record itself as canonical JSON. Expired tokens are
removed as new ones are written, so the table does not grow without bound.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..grants import REFRESH, GrantStore, IssuedToken, OAuthGrant
from . import schema
from .database import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS oauth_grants (
    connection_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, data TEXT NOT NULL,
    created_at INTEGER NOT NULL, code_hash TEXT);
CREATE INDEX IF NOT EXISTS oauth_grants_by_workspace ON oauth_grants (workspace_id, created_at, connection_id);
CREATE TABLE IF NOT EXISTS oauth_tokens (
    token_hash TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER);
"""

# Columns added to the role's tables since they were first made (a database of an earlier release
# gains them on open).
ADDED_COLUMNS = {"oauth_grants": (("code_hash", "TEXT"),)}


class SQLiteGrants(GrantStore):
    def __init__(self, db: Database):
        self.db = db
        with self.db.write() as conn:
            schema.create_tables(conn, SCHEMA)
            schema.add_missing_columns(conn, ADDED_COLUMNS)

    # -- grants and tokens ------------------------------------------------------------------------

    def put_oauth_grant(self, grant: OAuthGrant) -> None:
        with self.db.write() as db:
            db.execute(
                "INSERT OR REPLACE INTO oauth_grants (connection_id, workspace_id, person_id, data, created_at,"
                " code_hash) VALUES (?, ?, ?, ?, ?, ?)",
                (grant.connection_id, grant.workspace_id, grant.person_id,
                 schema.record_json(grant), grant.created_at, grant.code_hash),
            )

    def list_oauth_grants(self, workspace_id: str, person_id: str | None = None) -> list[OAuthGrant]:
        rows = self.db.all(
            "SELECT data, code_hash FROM oauth_grants WHERE workspace_id = ? AND (? IS NULL OR person_id = ?)"
            " ORDER BY created_at, connection_id", workspace_id, person_id, person_id)
        return [schema.record_from_json(OAuthGrant, row["data"], code_hash=row["code_hash"]) for row in rows]

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
                       (token.token_hash, schema.record_json(token), token.expires_at))

    def get_issued_token(self, token_hash: str, now: int) -> IssuedToken | None:
        row = self.db.one("SELECT data, used_at FROM oauth_tokens WHERE token_hash = ? AND expires_at > ?",
                          token_hash, now)
        return schema.record_from_json(IssuedToken, row["data"], used_at=row["used_at"]) if row else None

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
