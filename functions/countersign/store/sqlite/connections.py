"""Connections, and when each was last used, on SQLite."""

from __future__ import annotations

from ..connections import Connection, ConnectionStore
from ..errors import NotFound
from . import schema
from .database import Database, unique

SCHEMA = """
CREATE TABLE IF NOT EXISTS connection_uses (
    connection_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, last_used_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS connection_uses_by_workspace ON connection_uses (workspace_id);
"""

# Connection.grants_until, read from the standing grants with each connection (exact: the grants
# are in the same file): per tool, the latest expiry of the connection's grants for it.
GRANTS_UNTIL = (
    "(SELECT json_group_object(tool, until) FROM (SELECT json_extract(g.data, '$.tool') AS tool,"
    " MAX(g.expires_at) AS until FROM standing_grants g WHERE g.workspace_id = c.workspace_id"
    " AND g.connection_id = c.id GROUP BY 1)) AS grants_until"
)

# Columns this role added to the ``connections`` table (made with the core schema): a database of
# an earlier release gains them on open; that release reads the table by column name, unchanged.
ADDED_COLUMNS = {"connections": (("revoked_reason", "TEXT"),)}


class SQLiteConnections(ConnectionStore):
    def __init__(self, db: Database):
        self.db = db
        with self.db.write() as conn:
            schema.create_tables(conn, SCHEMA)
            schema.add_missing_columns(conn, ADDED_COLUMNS)

    def create_connection(self, connection: Connection) -> None:
        with self.db.write() as db, unique(f"A connection with id {connection.id!r} already exists."):
            db.execute(
                "INSERT INTO connections (id, workspace_id, person_id, name, token_hash, created_at, revoked_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (connection.id, connection.workspace_id, connection.person_id, connection.name,
                 connection.token_hash, connection.created_at, connection.revoked_at),
            )

    def get_connection(self, workspace_id: str, connection_id: str) -> Connection:
        row = self.db.one(f"SELECT c.*, {GRANTS_UNTIL} FROM connections c WHERE c.id = ? AND c.workspace_id = ?",
                          connection_id, workspace_id)
        if row is None:
            raise NotFound("connection", connection_id)
        return schema.connection(row)

    def get_connection_by_token_hash(self, token_hash: str) -> Connection | None:
        row = self.db.one(f"SELECT c.*, {GRANTS_UNTIL} FROM connections c WHERE c.token_hash = ?", token_hash)
        return schema.connection(row) if row else None

    def list_connections(self, workspace_id: str, person_id: str | None = None) -> list[Connection]:
        sql = (
            f"SELECT c.*, {GRANTS_UNTIL} FROM connections c WHERE c.workspace_id = ? AND (? IS NULL OR c.person_id = ?)"
            " ORDER BY c.created_at, c.id"
        )
        return [schema.connection(r) for r in self.db.all(sql, workspace_id, person_id, person_id)]

    def revoke_connection(self, workspace_id: str, connection_id: str, now: int,
                          reason: str | None = None) -> Connection:
        with self.db.write() as db:
            db.execute(
                "UPDATE connections SET revoked_at = ?, revoked_reason = ?"
                " WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL",
                (now, reason, connection_id, workspace_id),
            )
            return self.get_connection(workspace_id, connection_id)

    # -- in use -----------------------------------------------------------------------------------

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
