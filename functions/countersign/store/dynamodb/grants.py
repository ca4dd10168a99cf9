"""OAuth grants and their tokens on DynamoDB.

Items (see :mod:`countersign.store.table`): each record is its canonical JSON in ``data`` beside
the attributes its conditions read. Tokens carry ``expires_at``, so the table's TTL removes them;
reads apply expiry themselves (TTL deletes lazily). A refresh token is spent by one conditional
write with its replacements.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import StoreError
from ..grants import REFRESH, GrantStore, IssuedToken, OAuthGrant
from . import codec
from .client import Cancelled, Table


def token_key(token_hash: str) -> codec.Item:
    return codec.single_key("OAUTHTOKEN", token_hash)


def grant_key(workspace_id: str, connection_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", f"GRANT#{connection_id}")


def issued_token_from(found: dict[str, Any] | None, now: int) -> IssuedToken | None:
    """A token's item as its record; None when absent or expired at ``now``."""
    if found is None or not codec.live(found, now):
        return None
    return codec.record_from(IssuedToken, found, used_at=found.get("used_at"))


class DynamoGrants(GrantStore):
    def __init__(self, table: Table):
        self.table = table

    def put_oauth_grant(self, grant: OAuthGrant) -> None:
        # ``code_hash`` is an attribute of its own, not in ``data``: a release that predates it
        # reads the grant unchanged (and one that rewrites the grant drops it: read as connected).
        self.table.put(grant_key(grant.workspace_id, grant.connection_id),
                  {"data": codec.record_data(grant), "person_id": grant.person_id,
                   "created_at": grant.created_at, "code_hash": grant.code_hash})

    def list_oauth_grants(self, workspace_id: str, person_id: str | None = None) -> list[OAuthGrant]:
        found = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=codec.values({":pk": f"WS#{workspace_id}", ":prefix": "GRANT#"}),
            ConsistentRead=True,
        )
        grants = [codec.record_from(OAuthGrant, v, code_hash=v.get("code_hash")) for v in found
                  if person_id is None or v["person_id"] == person_id]
        return sorted(grants, key=lambda g: (g.created_at, g.connection_id))

    def forget_grant_code(self, workspace_id: str, connection_id: str) -> None:
        self.table.update(grant_key(workspace_id, connection_id), UpdateExpression="REMOVE code_hash",
                          ConditionExpression="attribute_exists(pk)")

    @staticmethod
    def _token_put(token: IssuedToken) -> dict[str, Any]:
        item = {**token_key(token.token_hash),
                **codec.item({"data": codec.record_data(token), "kind": token.kind, "expires_at": token.expires_at})}
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
