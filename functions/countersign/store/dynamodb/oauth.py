"""OAuth clients, authorization requests, codes, grants, tokens and connection use on DynamoDB.

Items (see :mod:`countersign.store.table`): each record is its canonical JSON in ``data`` beside
the attributes its conditions read. Requests, codes, tokens and cached metadata documents carry
``expires_at``, so the table's TTL removes them; reads apply expiry themselves (TTL deletes
lazily). Every single-use value is spent by one conditional write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from ..errors import StoreError
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
from . import codec
from .client import Cancelled, Table

R = TypeVar("R")


def _single(kind: str, ident: str) -> codec.Item:
    return codec.key(f"{kind}#{ident}", kind)


def client_key(client_id: str) -> codec.Item:
    return _single("OAUTHCLIENT", client_id)


def request_key(request_hash: str) -> codec.Item:
    return _single("OAUTHREQ", request_hash)


def code_key(code_hash: str) -> codec.Item:
    return _single("OAUTHCODE", code_hash)


def token_key(token_hash: str) -> codec.Item:
    return _single("OAUTHTOKEN", token_hash)


def grant_key(workspace_id: str, connection_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", f"GRANT#{connection_id}")


def use_key(workspace_id: str, connection_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", f"USED#{connection_id}")


def _data(record: Any) -> str:
    return codec.J(data_fields(record))


def _record(cls: type[R], found: dict[str, Any], **override: Any) -> R:
    values = codec.unJ(found["data"])
    if "scopes" in values:
        values["scopes"] = tuple(values["scopes"])
    values.update(override)
    return cls(**known_fields(cls, values))


def _live(found: dict[str, Any] | None, now: int) -> bool:
    return found is not None and found.get("expires_at", now + 1) > now


def issued_token_from(found: dict[str, Any] | None, now: int) -> IssuedToken | None:
    """A token's item as its record; None when absent or expired at ``now``."""
    if found is None or not _live(found, now):
        return None
    return _record(IssuedToken, found, used_at=found.get("used_at"))


class DynamoOAuth(OAuthStore):
    def __init__(self, table: Table):
        self.table = table

    def _put(self, key: codec.Item, values: dict[str, Any]) -> None:
        self.table.client.put_item(TableName=self.table.name, Item={**key, **codec.item(values)})

    # -- clients ----------------------------------------------------------------------------------

    def put_oauth_client(self, client: OAuthClientRecord) -> None:
        self._put(client_key(client.client_id), {"data": _data(client), "expires_at": client.expires_at})

    def get_oauth_client(self, client_id: str, now: int) -> OAuthClientRecord | None:
        found = self.table.get(client_key(client_id))
        return _record(OAuthClientRecord, found) if found is not None and _live(found, now) else None

    # -- authorization requests and codes ---------------------------------------------------------

    def put_pending_authorization(self, pending: PendingAuthorization) -> None:
        if not self.table.put_new({**request_key(pending.request_hash),
                                   **codec.item({"data": _data(pending), "expires_at": pending.expires_at})}):
            raise StoreError("That authorization request already exists.")

    def get_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        found = self.table.get(request_key(request_hash))
        return _record(PendingAuthorization, found) if found is not None and _live(found, now) else None

    def take_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        try:
            out = self.table.client.delete_item(
                TableName=self.table.name, Key=request_key(request_hash),
                ConditionExpression="expires_at > :now", ExpressionAttributeValues=codec.values({":now": now}),
                ReturnValues="ALL_OLD",
            )
        except self.table.errors.ConditionalCheckFailedException:
            return None
        raw = out.get("Attributes")
        return _record(PendingAuthorization, codec.plain(raw)) if raw else None

    def put_issued_code(self, code: IssuedCode) -> None:
        if not self.table.put_new({**code_key(code.code_hash),
                                   **codec.item({"data": _data(code), "expires_at": code.expires_at})}):
            raise StoreError("That authorization code already exists.")

    def get_issued_code(self, code_hash: str, now: int) -> IssuedCode | None:
        found = self.table.get(code_key(code_hash))
        if found is None or not _live(found, now):
            return None
        return _record(IssuedCode, found, used_at=found.get("used_at"))

    def spend_issued_code(self, code_hash: str, now: int) -> bool:
        return self.table.update(
            code_key(code_hash), UpdateExpression="SET used_at = :now",
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(used_at) AND expires_at > :now",
            ExpressionAttributeValues=codec.values({":now": now}),
        ) is not None

    # -- grants and tokens ------------------------------------------------------------------------

    def issued_code_spent(self, code_hash: str) -> bool | None:
        found = self.table.get(code_key(code_hash))  # past its expiry too, until the TTL removes it
        return None if found is None else found.get("used_at") is not None

    def put_oauth_grant(self, grant: OAuthGrant) -> None:
        # ``code_hash`` is an attribute of its own, not in ``data``: a release that predates it
        # reads the grant unchanged (and one that rewrites the grant drops it: read as connected).
        self._put(grant_key(grant.workspace_id, grant.connection_id),
                  {"data": _data(grant), "person_id": grant.person_id,
                   "created_at": grant.created_at, "code_hash": grant.code_hash})

    def list_oauth_grants(self, workspace_id: str, person_id: str | None = None) -> list[OAuthGrant]:
        found = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=codec.values({":pk": f"WS#{workspace_id}", ":prefix": "GRANT#"}),
            ConsistentRead=True,
        )
        grants = [_record(OAuthGrant, v, code_hash=v.get("code_hash")) for v in found
                  if person_id is None or v["person_id"] == person_id]
        return sorted(grants, key=lambda g: (g.created_at, g.connection_id))

    def forget_grant_code(self, workspace_id: str, connection_id: str) -> None:
        self.table.update(grant_key(workspace_id, connection_id), UpdateExpression="REMOVE code_hash",
                          ConditionExpression="attribute_exists(pk)")

    @staticmethod
    def _token_put(token: IssuedToken) -> dict[str, Any]:
        item = {**token_key(token.token_hash),
                **codec.item({"data": _data(token), "kind": token.kind, "expires_at": token.expires_at})}
        return {"Put": {"Item": item, "ConditionExpression": "attribute_not_exists(pk)"}}

    def put_issued_tokens(self, tokens: Sequence[IssuedToken]) -> None:
        try:
            self.table.transact([self._token_put(t) for t in tokens])
        except Cancelled as cancelled:
            raise StoreError(f"Could not store the tokens: {cancelled}") from None

    def get_issued_token(self, token_hash: str, now: int) -> IssuedToken | None:
        return issued_token_from(self.table.get(token_key(token_hash)), now)

    def rotate_refresh_token(self, token_hash: str, now: int, replacements: Sequence[IssuedToken]) -> bool:
        spend = {"Update": {
            "Key": token_key(token_hash), "UpdateExpression": "SET used_at = :now",
            "ConditionExpression": ("attribute_exists(pk) AND attribute_not_exists(used_at) AND expires_at > :now"
                                    " AND #kind = :refresh"),
            "ExpressionAttributeNames": {"#kind": "kind"},
            "ExpressionAttributeValues": codec.values({":now": now, ":refresh": REFRESH}),
        }}
        try:
            self.table.transact([spend, *(self._token_put(t) for t in replacements)])
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                return False
            raise StoreError(f"Could not rotate the refresh token: {cancelled}") from None
        return True

    # -- connections in use -------------------------------------------------------------------------

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
