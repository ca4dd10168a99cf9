"""Workspaces, persons, connections, sign-in tokens and sessions on SQLite."""

from __future__ import annotations

from typing import Any

from .. import checks
from ..errors import Conflict, NotFound
from ..interface import AccountStore
from ..records import Connection, Person, Session, SignInToken, Workspace
from . import schema
from .database import Database, unique


class SQLiteAccounts(AccountStore):
    def __init__(self, db: Database):
        self.db = db

    # -- workspaces, persons, connections -------------------------------------------------------

    def create_workspace(self, workspace: Workspace, owner: Person | None = None) -> None:
        if owner is not None:
            checks.check_new_person(owner, workspace.id)
        with self.db.write() as db:
            with unique(f"A workspace with id {workspace.id!r} already exists."):
                db.execute(
                    "INSERT INTO workspaces (id, name, settings, created_at) VALUES (?, ?, ?, ?)",
                    (workspace.id, workspace.name, schema.to_json(workspace.settings), workspace.created_at),
                )
            if owner is not None:  # in the same transaction: a refused owner leaves no workspace behind
                self._insert_person(db, owner)

    def get_workspace(self, workspace_id: str) -> Workspace:
        row = self.db.one("SELECT * FROM workspaces WHERE id = ?", workspace_id)
        if row is None:
            raise NotFound("workspace", workspace_id)
        return schema.workspace(row)

    def rename_workspace(self, workspace_id: str, name: str) -> Workspace:
        name = checks.check_workspace_name(name)
        with self.db.write() as db:
            found = db.execute(
                "UPDATE workspaces SET name = ? WHERE id = ? RETURNING *", (name, workspace_id)
            ).fetchall()
        if not found:
            raise NotFound("workspace", workspace_id)
        return schema.workspace(found[0])

    def update_workspace_settings(self, workspace_id: str, changes: dict[str, Any]) -> Workspace:
        checks.check_settings(changes)
        with self.db.write() as db:
            workspace = self.get_workspace(workspace_id)
            settings = {**workspace.settings, **changes}
            db.execute("UPDATE workspaces SET settings = ? WHERE id = ?", (schema.to_json(settings), workspace_id))
        return Workspace(workspace.id, workspace.name, settings, workspace.created_at)

    def create_person(self, person: Person) -> None:
        checks.check_new_person(person)
        with self.db.write() as db:
            self.get_workspace(person.workspace_id)
            self._insert_person(db, person)

    def _insert_person(self, db, person: Person) -> None:
        if self.db.one("SELECT 1 FROM persons WHERE id = ?", person.id):
            raise Conflict(f"A person with id {person.id!r} already exists.")
        if self.db.one("SELECT 1 FROM persons WHERE email_key = ?", checks.email_key(person.email)):
            raise Conflict(f"The email {person.email!r} already belongs to a member.")
        db.execute(
            "INSERT INTO persons (id, workspace_id, email, email_key, role, name, agent_requests_email, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (person.id, person.workspace_id, person.email, checks.email_key(person.email), person.role,
             person.name, int(person.agent_requests_email), person.created_at),
        )

    def get_person(self, workspace_id: str, person_id: str) -> Person:
        row = self.db.one("SELECT * FROM persons WHERE id = ? AND workspace_id = ?", person_id, workspace_id)
        if row is None:
            raise NotFound("person", person_id)
        return schema.person(row)

    def get_person_by_email(self, email: str) -> Person | None:
        row = self.db.one("SELECT * FROM persons WHERE email_key = ?", checks.email_key(email))
        return schema.person(row) if row else None

    def list_persons(self, workspace_id: str) -> list[Person]:
        found = self.db.all("SELECT * FROM persons WHERE workspace_id = ? ORDER BY created_at, id", workspace_id)
        return [schema.person(r) for r in found]

    def update_person(self, workspace_id: str, person_id: str, **changes: Any) -> Person:
        checks.check_person_changes(changes)
        with self.db.write() as db:
            self.get_person(workspace_id, person_id)
            if changes:
                columns = ", ".join(f"{name} = ?" for name in changes)
                db.execute(f"UPDATE persons SET {columns} WHERE id = ?", (*changes.values(), person_id))
            return self.get_person(workspace_id, person_id)

    def remove_person(self, workspace_id: str, person_id: str, expected_role: str) -> Person:
        with self.db.write() as db:
            person = self.get_person(workspace_id, person_id)
            if person.role != expected_role:
                raise Conflict(f"{person.email} is {person.role} now, not {expected_role}; nobody was removed.")
            db.execute("DELETE FROM persons WHERE id = ? AND workspace_id = ?", (person_id, workspace_id))
        return person

    def create_connection(self, connection: Connection) -> None:
        with self.db.write() as db, unique(f"A connection with id {connection.id!r} already exists."):
            db.execute(
                "INSERT INTO connections (id, workspace_id, person_id, name, token_hash, created_at, revoked_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (connection.id, connection.workspace_id, connection.person_id, connection.name,
                 connection.token_hash, connection.created_at, connection.revoked_at),
            )

    def get_connection(self, workspace_id: str, connection_id: str) -> Connection:
        row = self.db.one("SELECT * FROM connections WHERE id = ? AND workspace_id = ?", connection_id, workspace_id)
        if row is None:
            raise NotFound("connection", connection_id)
        return schema.connection(row)

    def get_connection_by_token_hash(self, token_hash: str) -> Connection | None:
        row = self.db.one("SELECT * FROM connections WHERE token_hash = ?", token_hash)
        return schema.connection(row) if row else None

    def list_connections(self, workspace_id: str, person_id: str | None = None) -> list[Connection]:
        sql = (
            "SELECT * FROM connections WHERE workspace_id = ? AND (? IS NULL OR person_id = ?) ORDER BY created_at, id"
        )
        return [schema.connection(r) for r in self.db.all(sql, workspace_id, person_id, person_id)]

    def revoke_connection(self, workspace_id: str, connection_id: str, now: int) -> Connection:
        with self.db.write() as db:
            db.execute(
                "UPDATE connections SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND workspace_id = ?",
                (now, connection_id, workspace_id),
            )
            return self.get_connection(workspace_id, connection_id)

    # -- sign-in tokens and sessions ------------------------------------------------------------

    def put_signin_token(self, token: SignInToken) -> None:
        with self.db.write() as db:
            db.execute(
                "INSERT OR REPLACE INTO signin_tokens (token_hash, person_id, workspace_id, expires_at) "
                "VALUES (?, ?, ?, ?)",
                (token.token_hash, token.person_id, token.workspace_id, token.expires_at),
            )

    def consume_signin_token(self, token_hash: str, now: int) -> SignInToken | None:
        with self.db.write() as db:
            found = db.execute("DELETE FROM signin_tokens WHERE token_hash = ? RETURNING *", (token_hash,)).fetchall()
        return schema.signin_token(found[0]) if found and now < found[0]["expires_at"] else None

    def create_session(self, session: Session) -> None:
        with self.db.write() as db, unique("That session already exists."):
            db.execute(
                "INSERT INTO sessions (session_hash, person_id, workspace_id, csrf_token, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session.session_hash, session.person_id, session.workspace_id, session.csrf_token,
                 session.created_at, session.expires_at),
            )

    def get_session(self, session_hash: str, now: int) -> Session | None:
        row = self.db.one("SELECT * FROM sessions WHERE session_hash = ? AND expires_at > ?", session_hash, now)
        return schema.session(row) if row else None

    def delete_session(self, session_hash: str) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM sessions WHERE session_hash = ?", (session_hash,))
