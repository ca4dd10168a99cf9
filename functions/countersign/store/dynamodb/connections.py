"""Connections, and when each was last used, on DynamoDB."""

from __future__ import annotations

from dataclasses import replace

from ..connections import Connection, ConnectionStore
from ..errors import Conflict, NotFound, StoreError
from . import codec
from .client import Cancelled, Table


def use_key(workspace_id: str, connection_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", f"USED#{connection_id}")


class DynamoConnections(ConnectionStore):
    def __init__(self, table: Table):
        self.table = table

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
        found = [codec.connection_from(v) for v in self.table.workspace_records(workspace_id, "CONN#")]
        return [c for c in found if person_id is None or c.person_id == person_id]

    def revoke_connection(self, workspace_id: str, connection_id: str, now: int,
                          reason: str | None = None) -> Connection:
        for _ in range(3):
            current = self.get_connection(workspace_id, connection_id)
            if current.revoked:
                return current
            # On both copies (the token's pointer is a full copy of the connection).
            update = {
                "UpdateExpression": "SET revoked_at = :now" + (", revoked_reason = :why" if reason else ""),
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(revoked_at)",
                "ExpressionAttributeValues": codec.values({":now": now, **({":why": reason} if reason else {})}),
            }
            try:
                self.table.transact([
                    {"Update": {"Key": codec.connection_key(workspace_id, connection_id), **update}},
                    {"Update": {"Key": codec.token_key(current.token_hash), **update}},
                ])
            except Cancelled:
                continue
            return replace(current, revoked_at=now, revoked_reason=reason)
        raise StoreError(f"Could not revoke connection {connection_id!r}; try again.")

    # -- in use -----------------------------------------------------------------------------------

    def note_connection_use(self, workspace_id: str, connection_id: str, now: int, every: int = 60) -> None:
        self.table.update(
            use_key(workspace_id, connection_id), UpdateExpression="SET last_used_at = :now",
            ConditionExpression="attribute_not_exists(last_used_at) OR last_used_at <= :cutoff",
            ExpressionAttributeValues=codec.values({":now": now, ":cutoff": now - every}),
        )

    def connections_last_used(self, workspace_id: str) -> dict[str, int]:
        found = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=codec.values({":pk": f"WS#{workspace_id}", ":prefix": "USED#"}),
            ConsistentRead=True,
        )
        return {v["sk"][len("USED#"):]: v["last_used_at"] for v in found}
