"""OAuth clients, authorization requests and codes on DynamoDB.

Items (see :mod:`countersign.store.table`): each record is its canonical JSON in ``data`` beside
the attributes its conditions read. Requests, codes and cached metadata documents carry
``expires_at``, so the table's TTL removes them; reads apply expiry themselves (TTL deletes
lazily). Every single-use value is spent by one conditional write.
"""

from __future__ import annotations

from ..authorizations import AuthorizationStore, IssuedCode, OAuthClientRecord, PendingAuthorization
from ..errors import StoreError
from . import codec
from .client import Table


def client_key(client_id: str) -> codec.Item:
    return codec.single_key("OAUTHCLIENT", client_id)


def request_key(request_hash: str) -> codec.Item:
    return codec.single_key("OAUTHREQ", request_hash)


def code_key(code_hash: str) -> codec.Item:
    return codec.single_key("OAUTHCODE", code_hash)


class DynamoAuthorizations(AuthorizationStore):
    def __init__(self, table: Table):
        self.table = table

    # -- clients ----------------------------------------------------------------------------------

    def put_oauth_client(self, client: OAuthClientRecord) -> None:
        self.table.put(client_key(client.client_id),
                       {"data": codec.record_data(client), "expires_at": client.expires_at})

    def get_oauth_client(self, client_id: str, now: int) -> OAuthClientRecord | None:
        found = self.table.get(client_key(client_id))
        return codec.record_from(OAuthClientRecord, found) if found is not None and codec.live(found, now) else None

    # -- authorization requests and codes ---------------------------------------------------------

    def put_pending_authorization(self, pending: PendingAuthorization) -> None:
        values = {"data": codec.record_data(pending), "expires_at": pending.expires_at}
        if not self.table.put_new({**request_key(pending.request_hash), **codec.item(values)}):
            raise StoreError("That authorization request already exists.")

    def get_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        found = self.table.get(request_key(request_hash))
        return codec.record_from(PendingAuthorization, found) if found is not None and codec.live(found, now) else None

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
        return codec.record_from(PendingAuthorization, codec.plain(raw)) if raw else None

    def put_issued_code(self, code: IssuedCode) -> None:
        values = {"data": codec.record_data(code), "expires_at": code.expires_at}
        if not self.table.put_new({**code_key(code.code_hash), **codec.item(values)}):
            raise StoreError("That authorization code already exists.")

    def get_issued_code(self, code_hash: str, now: int) -> IssuedCode | None:
        found = self.table.get(code_key(code_hash))
        if found is None or not codec.live(found, now):
            return None
        return codec.record_from(IssuedCode, found, used_at=found.get("used_at"))

    def spend_issued_code(self, code_hash: str, now: int) -> bool:
        return self.table.update(
            code_key(code_hash), UpdateExpression="SET used_at = :now",
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(used_at) AND expires_at > :now",
            ExpressionAttributeValues=codec.values({":now": now}),
        ) is not None

    def issued_code_spent(self, code_hash: str) -> bool | None:
        found = self.table.get(code_key(code_hash))  # past its expiry too, until the TTL removes it
        return None if found is None else found.get("used_at") is not None
