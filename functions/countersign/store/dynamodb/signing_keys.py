"""The signing keys in use on DynamoDB.

Two layouts, both read: ``KEYS``/``<key id>`` (until, raised by a conditional update: the
operator's note) and ``KEYS``/``<key id>#<until>`` (a Put that cannot fail, written with a
filing in its transaction; TTL removes it once ``until`` has passed). The key's until is the
latest of its items.
"""

from __future__ import annotations

from ..signing_keys import SigningKeyStore
from . import codec
from .client import Table


class DynamoSigningKeys(SigningKeyStore):
    def __init__(self, table: Table):
        self.table = table

    def note_signing_key(self, key_id: str, until: int) -> None:
        self.table.update(
            codec.signing_key_key(key_id),
            UpdateExpression="SET #until = :until",
            ConditionExpression="attribute_not_exists(#until) OR #until < :until",
            ExpressionAttributeNames={"#until": "until"},
            ExpressionAttributeValues=codec.values({":until": until}),
        )

    def signing_keys_in_use(self, now: int) -> dict[str, int]:
        found = self.table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=codec.values({":pk": "KEYS"}),
            ConsistentRead=True,
        )
        in_use: dict[str, int] = {}
        for v in found:
            key_id = v["sk"].split("#", 1)[0]
            if v.get("until", 0) > now:
                in_use[key_id] = max(in_use.get(key_id, 0), v["until"])
        return in_use

    def forget_signing_key(self, key_id: str) -> None:
        found = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :key)",
            ExpressionAttributeValues=codec.values({":pk": "KEYS", ":key": key_id}),
            ConsistentRead=True,
        )
        for v in list(found):
            if v["sk"].split("#", 1)[0] == key_id:
                self.table.client.delete_item(TableName=self.table.name, Key=codec.key("KEYS", v["sk"]))


def key_note_item(key_id: str, until: int) -> codec.Item:
    """``note_signing_key`` as a Put that never fails (so it can ride in a filing's transaction)."""
    return {**codec.key("KEYS", f"{key_id}#{until:012d}"), **codec.item({"until": until, "expires_at": until})}
