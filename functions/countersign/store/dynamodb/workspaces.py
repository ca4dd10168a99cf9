"""Workspaces and their members on DynamoDB."""

from __future__ import annotations

from typing import Any, NoReturn

from ..errors import Conflict, NotFound, StoreError
from ..workspaces import (
    Person,
    Workspace,
    WorkspaceStore,
    check_new_person,
    check_person_changes,
    check_settings,
    check_workspace_name,
    stored_person_changes,
)
from . import codec
from .client import Cancelled, Table


def _person_puts(person: Person) -> list[dict[str, Any]]:
    """A new person's record and the pointer from its email (which keeps emails unique)."""
    pointer = {**codec.email_key(person.email), **codec.item({"workspace_id": person.workspace_id,
                                                              "person_id": person.id})}
    return [{"Put": {"Item": codec.person_item(person), "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"Item": pointer, "ConditionExpression": "attribute_not_exists(pk)"}}]


def _person_refused(cancelled: Cancelled, person: Person, first: int) -> NoReturn:
    """Why the transaction that put :func:`_person_puts` at ``first`` was cancelled."""
    if cancelled.code(first) == "ConditionalCheckFailed":
        raise Conflict(f"A person with id {person.id!r} already exists.") from None
    if cancelled.code(first + 1) == "ConditionalCheckFailed":
        raise Conflict(f"The email {person.email!r} already belongs to a member.") from None
    raise StoreError(f"Could not create the person: {cancelled}") from None


class DynamoWorkspaces(WorkspaceStore):
    def __init__(self, table: Table):
        self.table = table

    # -- workspaces -------------------------------------------------------------------------------

    def create_workspace(self, workspace: Workspace, owner: Person | None = None) -> None:
        if owner is None:
            if not self.table.put_new(codec.workspace_item(workspace)):
                raise Conflict(f"A workspace with id {workspace.id!r} already exists.")
            return
        check_new_person(owner, workspace.id)
        # in one transaction: a refused owner leaves no workspace behind
        new_workspace = {"Put": {"Item": codec.workspace_item(workspace),
                                 "ConditionExpression": "attribute_not_exists(pk)"}}
        try:
            self.table.transact([new_workspace, *_person_puts(owner)])
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                raise Conflict(f"A workspace with id {workspace.id!r} already exists.") from None
            _person_refused(cancelled, owner, first=1)

    def get_workspace(self, workspace_id: str) -> Workspace:
        found = self.table.get(codec.workspace_key(workspace_id))
        if found is None:
            raise NotFound("workspace", workspace_id)
        return codec.workspace_from(found)

    def rename_workspace(self, workspace_id: str, name: str) -> Workspace:
        name = check_workspace_name(name)
        out = self.table.update(
            codec.workspace_key(workspace_id),
            UpdateExpression="SET #name = :name",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeNames={"#name": "name"},  # NAME is a DynamoDB reserved word
            ExpressionAttributeValues=codec.values({":name": name}),
            ReturnValues="ALL_NEW",
        )
        if out is None:
            raise NotFound("workspace", workspace_id)
        return codec.workspace_from(out)

    def update_workspace_settings(self, workspace_id: str, changes: dict[str, Any]) -> Workspace:
        check_settings(changes)
        if not changes:
            return self.get_workspace(workspace_id)
        out = self.table.update(
            codec.workspace_key(workspace_id),
            UpdateExpression="SET " + ", ".join(f"settings.#k{i} = :v{i}" for i in range(len(changes))),
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeNames={f"#k{i}": name for i, name in enumerate(changes)},
            ExpressionAttributeValues=codec.values({f":v{i}": value for i, value in enumerate(changes.values())}),
            ReturnValues="ALL_NEW",
        )
        if out is None:
            raise NotFound("workspace", workspace_id)
        return codec.workspace_from(out)

    # -- persons ----------------------------------------------------------------------------------

    def create_person(self, person: Person) -> None:
        check_new_person(person)
        self.get_workspace(person.workspace_id)  # read first: workspaces are never deleted
        try:
            self.table.transact(_person_puts(person))
        except Cancelled as cancelled:
            _person_refused(cancelled, person, first=0)

    def get_person(self, workspace_id: str, person_id: str) -> Person:
        found = self.table.get(codec.person_key(workspace_id, person_id))
        if found is None:
            raise NotFound("person", person_id)
        return codec.person_from(found)

    def get_member(self, workspace_id: str, person_id: str) -> tuple[Workspace, Person]:
        found = {item["sk"]: item for item in self.table.batch_get(
            [codec.workspace_key(workspace_id), codec.person_key(workspace_id, person_id)])}
        if "WS" not in found:
            raise NotFound("workspace", workspace_id)
        if f"PERSON#{person_id}" not in found:
            raise NotFound("person", person_id)
        return codec.workspace_from(found["WS"]), codec.person_from(found[f"PERSON#{person_id}"])

    def get_person_by_email(self, email: str) -> Person | None:
        pointer = self.table.get(codec.email_key(email))
        if pointer is None:
            return None
        found = self.table.get(codec.person_key(pointer["workspace_id"], pointer["person_id"]))
        return None if found is None else codec.person_from(found)

    def list_persons(self, workspace_id: str) -> list[Person]:
        return [codec.person_from(v) for v in self.table.workspace_records(workspace_id, "PERSON#")]

    def update_person(self, workspace_id: str, person_id: str, **changes: Any) -> Person:
        check_person_changes(changes)
        if not changes:
            return self.get_person(workspace_id, person_id)
        changes = stored_person_changes(changes)
        out = self.table.update(
            codec.person_key(workspace_id, person_id),
            UpdateExpression="SET " + ", ".join(f"#k{i} = :v{i}" for i in range(len(changes))),
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeNames={f"#k{i}": k for i, k in enumerate(changes)},
            ExpressionAttributeValues=codec.values({f":v{i}": v for i, v in enumerate(changes.values())}),
            ReturnValues="ALL_NEW",
        )
        if out is None:
            raise NotFound("person", person_id)
        return codec.person_from(out)

    def remove_person(self, workspace_id: str, person_id: str, expected_role: str) -> Person:
        person = self.get_person(workspace_id, person_id)
        try:
            self.table.transact([
                {"Delete": {"Key": codec.person_key(workspace_id, person_id),
                            "ConditionExpression": "attribute_exists(pk) AND #role = :role",
                            "ExpressionAttributeNames": {"#role": "role"},
                            "ExpressionAttributeValues": codec.values({":role": expected_role})}},
                {"Delete": {"Key": codec.email_key(person.email), "ConditionExpression": "person_id = :id",
                            "ExpressionAttributeValues": codec.values({":id": person_id})}},
            ])
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                now = self.get_person(workspace_id, person_id)  # NotFound if removed meanwhile
                raise Conflict(f"{now.email} is {now.role} now, not {expected_role}; nobody was removed.") from None
            raise StoreError(f"Could not remove the person: {cancelled}") from None
        return person
