"""Workspaces, persons, connections, sign-in tokens and sessions on DynamoDB."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NoReturn

from .. import checks
from ..errors import Conflict, NotFound, StoreError
from ..interface import AccountStore
from ..records import Connection, Person, Session, SignInToken, Workspace
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


class DynamoAccounts(AccountStore):
    def __init__(self, table: Table):
        self.table = table

    # -- workspaces -------------------------------------------------------------------------------

    def create_workspace(self, workspace: Workspace, owner: Person | None = None) -> None:
        if owner is None:
            if not self.table.put_new(codec.workspace_item(workspace)):
                raise Conflict(f"A workspace with id {workspace.id!r} already exists.")
            return
        checks.check_new_person(owner, workspace.id)
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
        name = checks.check_workspace_name(name)
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
        checks.check_settings(changes)
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
        checks.check_new_person(person)
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

    def _in_workspace(self, workspace_id: str, prefix: str) -> list[dict[str, Any]]:
        found = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=codec.values({":pk": f"WS#{workspace_id}", ":prefix": prefix}),
            ConsistentRead=True,
        )
        return sorted(found, key=lambda v: (v["created_at"], v["id"]))

    def list_persons(self, workspace_id: str) -> list[Person]:
        return [codec.person_from(v) for v in self._in_workspace(workspace_id, "PERSON#")]

    def update_person(self, workspace_id: str, person_id: str, **changes: Any) -> Person:
        checks.check_person_changes(changes)
        if not changes:
            return self.get_person(workspace_id, person_id)
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

    # -- connections ------------------------------------------------------------------------------

    def create_connection(self, connection: Connection) -> None:
        raw = codec.connection_item(connection)
        pointer = {**raw, **codec.token_key(connection.token_hash)}  # a full copy: one read per request
        try:
            self.table.transact([
                {"Put": {"Item": raw, "ConditionExpression": "attribute_not_exists(pk)"}},
                {"Put": {"Item": pointer, "ConditionExpression": "attribute_not_exists(pk)"}},
            ])
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                raise Conflict(f"A connection with id {connection.id!r} already exists.") from None
            if cancelled.code(1) == "ConditionalCheckFailed":
                raise Conflict("A connection with this token already exists.") from None
            raise StoreError(f"Could not create the connection: {cancelled}") from None

    def get_connection(self, workspace_id: str, connection_id: str) -> Connection:
        found = self.table.get(codec.connection_key(workspace_id, connection_id))
        if found is None:
            raise NotFound("connection", connection_id)
        return codec.connection_from(found)

    def get_connection_by_token_hash(self, token_hash: str) -> Connection | None:
        found = self.table.get(codec.token_key(token_hash))
        return None if found is None else codec.connection_from(found)

    def list_connections(self, workspace_id: str, person_id: str | None = None) -> list[Connection]:
        found = [codec.connection_from(v) for v in self._in_workspace(workspace_id, "CONN#")]
        return [c for c in found if person_id is None or c.person_id == person_id]

    def revoke_connection(self, workspace_id: str, connection_id: str, now: int) -> Connection:
        for _ in range(3):
            current = self.get_connection(workspace_id, connection_id)
            if current.revoked:
                return current
            update = {
                "UpdateExpression": "SET revoked_at = :now",
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(revoked_at)",
                "ExpressionAttributeValues": codec.values({":now": now}),
            }
            try:
                self.table.transact([
                    {"Update": {"Key": codec.connection_key(workspace_id, connection_id), **update}},
                    {"Update": {"Key": codec.token_key(current.token_hash), **update}},
                ])
            except Cancelled:
                continue
            return replace(current, revoked_at=now)
        raise StoreError(f"Could not revoke connection {connection_id!r}; try again.")

    # -- sign-in tokens and sessions --------------------------------------------------------------

    def put_signin_token(self, token: SignInToken) -> None:
        self.table.client.put_item(TableName=self.table.name, Item=codec.signin_item(token))

    def consume_signin_token(self, token_hash: str, now: int) -> SignInToken | None:
        try:
            out = self.table.client.delete_item(
                TableName=self.table.name,
                Key=codec.single_key("SIGNIN", token_hash),
                ConditionExpression="expires_at > :now",
                ExpressionAttributeValues=codec.values({":now": now}),
                ReturnValues="ALL_OLD",
            )
        except self.table.errors.ConditionalCheckFailedException:
            return None
        raw = out.get("Attributes")
        return codec.signin_from(codec.plain(raw)) if raw else None

    def create_session(self, session: Session) -> None:
        if not self.table.put_new(codec.session_item(session)):
            raise Conflict("That session already exists.")

    def get_session(self, session_hash: str, now: int) -> Session | None:
        found = self.table.get(codec.single_key("SESSION", session_hash))
        if found is None or found["expires_at"] <= now:
            return None
        return codec.session_from(found)

    def delete_session(self, session_hash: str) -> None:
        self.table.client.delete_item(TableName=self.table.name, Key=codec.single_key("SESSION", session_hash))
