"""Toolset documents on SQLite, and the writes of an effect (docs, settings, names, roles)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from ..docs import (
    Doc,
    DocStore,
    DocWrite,
    RoleWrite,
    SettingWrite,
    WorkspaceNameWrite,
    Write,
    check_doc_keys,
    check_doc_writes,
    id_range,
    moved,
    write_target,
)
from ..errors import Conflict
from ..standing_grants import StandingGrantWrite
from . import schema
from .database import Database
from .standing_grants import grant_exists, insert_grant


class SQLiteDocs(DocStore):
    def __init__(self, db: Database):
        self.db = db

    def get_doc(self, workspace_id: str, kind: str, doc_id: str) -> Doc | None:
        row = self.db.one(
            "SELECT * FROM docs WHERE workspace_id = ? AND kind = ? AND id = ?", workspace_id, kind, doc_id
        )
        return schema.doc(row) if row else None

    def get_docs(self, workspace_id: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Doc]:
        wanted = list(dict.fromkeys(keys))
        check_doc_keys(wanted)
        if not wanted:
            return {}
        # each term names the whole primary key, so each is one index search; with workspace_id
        # outside the terms SQLite scans every doc of the workspace for three keys or more
        terms = " OR ".join("(workspace_id = ? AND kind = ? AND id = ?)" for _ in wanted)
        found = self.db.all(f"SELECT * FROM docs WHERE {terms}",
                            *(part for key in wanted for part in (workspace_id, *key)))
        return {(r["kind"], r["id"]): schema.doc(r) for r in found}

    def list_docs(self, workspace_id: str, kind: str, prefix: str = "", *, start: str | None = None,
                  stop: str | None = None, limit: int | None = None, descending: bool = False) -> list[Doc]:
        low, high = id_range(prefix, start, stop, limit)
        sql = "SELECT * FROM docs WHERE workspace_id = ? AND kind = ? AND id >= ?"
        args: list[object] = [workspace_id, kind, low]
        if high is not None:
            sql += " AND id < ?"
            args.append(high)
        sql += " ORDER BY id DESC" if descending else " ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return [schema.doc(r) for r in self.db.all(sql, *args)]

    def write_docs(self, workspace_id: str, writes: Iterable[Write]) -> None:
        writes = list(writes)
        check_doc_writes(writes)
        with self.db.write() as db:
            apply_writes(db, workspace_id, writes)


def apply_writes(db: sqlite3.Connection, workspace_id: str, writes: list[Write]) -> None:
    """Inside an open transaction: check every write's expectation, then write them all.

    :class:`Conflict` (naming the record) before anything is written if one expectation failed.
    """
    for w in writes:
        if not _holds(db, workspace_id, w):
            kind, ident = write_target(w)
            raise Conflict(moved(w), kind=kind, id=ident or workspace_id)
    for w in writes:
        if isinstance(w, DocWrite):
            if w.data is None:
                db.execute(
                    "DELETE FROM docs WHERE workspace_id = ? AND kind = ? AND id = ?", (workspace_id, w.kind, w.id)
                )
            else:
                db.execute(
                    "INSERT OR REPLACE INTO docs (workspace_id, kind, id, data, version) VALUES (?, ?, ?, ?, ?)",
                    (workspace_id, w.kind, w.id, schema.to_json(w.data), w.expected_version + 1),
                )
        elif isinstance(w, SettingWrite):
            row = db.execute("SELECT settings FROM workspaces WHERE id = ?", (workspace_id,)).fetchone()
            settings = {**schema.from_json(row["settings"]), w.name: w.stored()}
            db.execute("UPDATE workspaces SET settings = ? WHERE id = ?", (schema.to_json(settings), workspace_id))
        elif isinstance(w, WorkspaceNameWrite):
            db.execute("UPDATE workspaces SET name = ? WHERE id = ?", (w.name, workspace_id))
        elif isinstance(w, StandingGrantWrite):
            insert_grant(db, w.grant)
        else:
            db.execute(
                "UPDATE persons SET role = ? WHERE id = ? AND workspace_id = ?", (w.role, w.person_id, workspace_id)
            )


def _holds(db: sqlite3.Connection, workspace_id: str, w: Write) -> bool:
    """Whether the stored record is still what ``w`` expects."""
    if isinstance(w, DocWrite):
        row = db.execute(
            "SELECT version FROM docs WHERE workspace_id = ? AND kind = ? AND id = ?", (workspace_id, w.kind, w.id)
        ).fetchone()
        return (row["version"] if row else 0) == w.expected_version
    if isinstance(w, RoleWrite):
        row = db.execute(
            "SELECT role FROM persons WHERE id = ? AND workspace_id = ?", (w.person_id, workspace_id)
        ).fetchone()
        return row is not None and row["role"] == w.expected
    if isinstance(w, StandingGrantWrite):
        return w.grant.workspace_id == workspace_id and not grant_exists(db, w.grant.id)
    row = db.execute("SELECT * FROM workspaces WHERE id = ?", (workspace_id,)).fetchone()
    if row is None:
        return False
    if isinstance(w, SettingWrite):
        value = schema.workspace(row).setting(w.name)
        if isinstance(w.expected, tuple):  # a list setting: its rules, in order
            return isinstance(value, list | tuple) and tuple(value) == w.expected
        return (bool(value) if isinstance(w.expected, bool) else value) == w.expected
    return row["name"] == w.expected
