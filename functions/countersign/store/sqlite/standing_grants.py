"""Standing grants and their uses on SQLite.

The role keeps its own tables (created on open). A grant is inserted by the commit of the card that
made it (:func:`insert_grant`, from :func:`~.docs.apply_writes`) and used by the commit of a card it
runs (:func:`consume_use`, from :meth:`~.cards.SQLiteCards.commit_card`): one ``UPDATE ... WHERE``
that holds every condition, inside the card's ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import sqlite3

from ..errors import Conflict, GrantUnavailable, NotFound
from ..standing_grants import GrantUse, StandingGrant, StandingGrantStore, StandingGrantUse, grant_fields, grant_from
from . import schema
from .database import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS standing_grants (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, connection_id TEXT NOT NULL, person_id TEXT NOT NULL,
    data TEXT NOT NULL, max_uses INTEGER NOT NULL, cap INTEGER, expires_at INTEGER NOT NULL,
    uses INTEGER NOT NULL DEFAULT 0, spent INTEGER NOT NULL DEFAULT 0, revoked_at INTEGER, revoked_by TEXT,
    created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS standing_grants_by_workspace ON standing_grants (workspace_id, created_at, id);
CREATE TABLE IF NOT EXISTS standing_grant_uses (
    grant_id TEXT NOT NULL, workspace_id TEXT NOT NULL, card_id TEXT NOT NULL, at INTEGER NOT NULL,
    amount INTEGER NOT NULL, PRIMARY KEY (grant_id, card_id));
"""

# Kept in their own columns (the conditions read them), not in ``data``.
COLUMNS = ("max_uses", "cap", "expires_at", "uses", "spent", "revoked_at", "revoked_by")


def _grant(row: sqlite3.Row) -> StandingGrant:
    values = schema.from_json(row["data"])
    values.update({k: row[k] for k in COLUMNS})
    return grant_from(values)


def insert_grant(db: sqlite3.Connection, grant: StandingGrant) -> None:
    """Inside an open transaction (a card's commit): :class:`Conflict` if the id exists."""
    data = {k: v for k, v in grant_fields(grant).items() if k not in COLUMNS}
    try:
        db.execute(
            "INSERT INTO standing_grants (id, workspace_id, connection_id, person_id, data, max_uses, cap, expires_at,"
            " uses, spent, revoked_at, revoked_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (grant.id, grant.workspace_id, grant.connection_id, grant.person_id, schema.to_json(data), grant.max_uses,
             grant.cap, grant.expires_at, grant.uses, grant.spent, grant.revoked_at, grant.revoked_by,
             grant.created_at),
        )
    except sqlite3.IntegrityError:
        raise Conflict(f"A standing grant with id {grant.id!r} exists already.", kind="standing_grant",
                       id=grant.id) from None


def grant_exists(db: sqlite3.Connection, grant_id: str) -> bool:
    return db.execute("SELECT 1 FROM standing_grants WHERE id = ?", (grant_id,)).fetchone() is not None


def consume_use(db: sqlite3.Connection, use: GrantUse, card_id: str) -> None:
    """Inside an open transaction (the card's commit): one conditional update takes the use, or
    :class:`GrantUnavailable` (the caller's transaction then rolls back, nothing written)."""
    took = db.execute(
        "UPDATE standing_grants SET uses = uses + 1, spent = spent + ? WHERE id = ? AND workspace_id = ?"
        " AND connection_id = ? AND revoked_at IS NULL AND expires_at > ? AND uses < max_uses"
        " AND (cap IS NULL OR spent <= cap - ?)",
        (use.amount, use.grant_id, use.workspace_id, use.connection_id, use.at, use.amount),
    ).rowcount
    if took != 1:
        raise GrantUnavailable()
    db.execute(
        "INSERT INTO standing_grant_uses (grant_id, workspace_id, card_id, at, amount) VALUES (?, ?, ?, ?, ?)",
        (use.grant_id, use.workspace_id, card_id, use.at, use.amount),
    )


class SQLiteStandingGrants(StandingGrantStore):
    def __init__(self, db: Database):
        self.db = db
        with self.db.write() as conn:
            schema.create_tables(conn, SCHEMA)

    def get_standing_grant(self, workspace_id: str, grant_id: str) -> StandingGrant:
        row = self.db.one("SELECT * FROM standing_grants WHERE id = ? AND workspace_id = ?", grant_id, workspace_id)
        if row is None:
            raise NotFound("standing grant", grant_id)
        return _grant(row)

    def list_standing_grants(self, workspace_id: str, *, person_id: str | None = None,
                             connection_id: str | None = None) -> list[StandingGrant]:
        rows = self.db.all(
            "SELECT * FROM standing_grants WHERE workspace_id = ? AND (? IS NULL OR person_id = ?)"
            " AND (? IS NULL OR connection_id = ?) ORDER BY created_at DESC, id DESC",
            workspace_id, person_id, person_id, connection_id, connection_id)
        return [_grant(r) for r in rows]

    def list_standing_grant_uses(self, workspace_id: str, grant_id: str) -> list[StandingGrantUse]:
        self.get_standing_grant(workspace_id, grant_id)
        rows = self.db.all("SELECT * FROM standing_grant_uses WHERE grant_id = ? AND workspace_id = ?"
                           " ORDER BY at, card_id", grant_id, workspace_id)
        return [StandingGrantUse(r["grant_id"], r["workspace_id"], r["card_id"], r["at"], r["amount"]) for r in rows]

    def revoke_standing_grant(self, workspace_id: str, grant_id: str, by: str, now: int) -> StandingGrant:
        with self.db.write() as db:
            db.execute("UPDATE standing_grants SET revoked_at = ?, revoked_by = ? WHERE id = ? AND workspace_id = ?"
                       " AND revoked_at IS NULL", (now, by, grant_id, workspace_id))
        return self.get_standing_grant(workspace_id, grant_id)
