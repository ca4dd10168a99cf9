"""Workspaces and their members on SQLite."""

from __future__ import annotations

from typing import Any

from ..errors import Conflict, NotFound
from ..workspaces import (
    Person,
    Workspace,
    WorkspaceStore,
    channels_off_text,
    check_new_person,
    check_person_changes,
    check_settings,
    check_workspace_name,
    email_key,
    quiet_hours_text,
    stored_person_changes,
)
from . import schema
from .database import Database, unique


class SQLiteWorkspaces(WorkspaceStore):
    def __init__(self, db: Database):
        self.db = db

    # -- workspaces -------------------------------------------------------------------------------

    def create_workspace(self, workspace: Workspace, owner: Person | None = None) -> None:
        if owner is not None:
            check_new_person(owner, workspace.id)
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
        name = check_workspace_name(name)
        with self.db.write() as db:
            found = db.execute(
                "UPDATE workspaces SET name = ? WHERE id = ? RETURNING *", (name, workspace_id)
            ).fetchall()
        if not found:
            raise NotFound("workspace", workspace_id)
        return schema.workspace(found[0])

    def update_workspace_settings(self, workspace_id: str, changes: dict[str, Any]) -> Workspace:
        check_settings(changes)
        with self.db.write() as db:
            workspace = self.get_workspace(workspace_id)
            settings = {**workspace.settings, **changes}
            db.execute("UPDATE workspaces SET settings = ? WHERE id = ?", (schema.to_json(settings), workspace_id))
        return Workspace(workspace.id, workspace.name, settings, workspace.created_at)

    # -- persons ----------------------------------------------------------------------------------

    def create_person(self, person: Person) -> None:
        check_new_person(person)
        with self.db.write() as db:
            self.get_workspace(person.workspace_id)
            self._insert_person(db, person)

    def _insert_person(self, db, person: Person) -> None:
        if self.db.one("SELECT 1 FROM persons WHERE id = ?", person.id):
            raise Conflict(f"A person with id {person.id!r} already exists.")
        if self.db.one("SELECT 1 FROM persons WHERE email_key = ?", email_key(person.email)):
            raise Conflict(f"The email {person.email!r} already belongs to a member.")
        db.execute(
            "INSERT INTO persons (id, workspace_id, email, email_key, role, name, agent_requests_email, created_at,"
            " quiet_hours, channels_off) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (person.id, person.workspace_id, person.email, email_key(person.email), person.role,
             person.name, int(person.agent_requests_email), person.created_at, quiet_hours_text(person.quiet_hours),
             channels_off_text(person.channels_off)),
        )

    def get_person(self, workspace_id: str, person_id: str) -> Person:
        row = self.db.one("SELECT * FROM persons WHERE id = ? AND workspace_id = ?", person_id, workspace_id)
        if row is None:
            raise NotFound("person", person_id)
        return schema.person(row)

    def get_person_by_email(self, email: str) -> Person | None:
        row = self.db.one("SELECT * FROM persons WHERE email_key = ?", email_key(email))
        return schema.person(row) if row else None

    def list_persons(self, workspace_id: str) -> list[Person]:
        found = self.db.all("SELECT * FROM persons WHERE workspace_id = ? ORDER BY created_at, id", workspace_id)
        return [schema.person(r) for r in found]

    def update_person(self, workspace_id: str, person_id: str, **changes: Any) -> Person:
        check_person_changes(changes)
        with self.db.write() as db:
            self.get_person(workspace_id, person_id)
            if changes:
                stored = stored_person_changes(changes)
                columns = ", ".join(f"{name} = ?" for name in stored)
                db.execute(f"UPDATE persons SET {columns} WHERE id = ?", (*stored.values(), person_id))
            return self.get_person(workspace_id, person_id)

    def remove_person(self, workspace_id: str, person_id: str, expected_role: str) -> Person:
        with self.db.write() as db:
            person = self.get_person(workspace_id, person_id)
            if person.role != expected_role:
                raise Conflict(f"{person.email} is {person.role} now, not {expected_role}; nobody was removed.")
            db.execute("DELETE FROM persons WHERE id = ? AND workspace_id = ?", (person_id, workspace_id))
        return person
