"""Passkeys and WebAuthn challenges on DynamoDB.

A passkey is one ``PASSKEY#<credential id>`` item (found by credential id for a discoverable
sign-in) plus a pointer ``PASSKEYOF#<person>#<credential id>`` in its workspace's partition (the
person's list); both are written and removed in one transaction. A challenge is a
``PKCHALLENGE#<hash>`` item, deleted by the call that spends it (TTL purges the rest).
"""

from __future__ import annotations

from ..errors import Conflict, NotFound, StoreError
from ..passkeys import (
    Passkey,
    PasskeyChallenge,
    PasskeyStore,
    challenge_fields,
    challenge_from,
    check_passkey_name,
    passkey_fields,
    passkey_from,
)
from . import codec
from .client import Cancelled, Table


def _main(credential_id: str) -> codec.Item:
    return codec.key(f"PASSKEY#{credential_id}", "PASSKEY")


def _pointer(workspace_id: str, person_id: str, credential_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", f"PASSKEYOF#{person_id}#{credential_id}")


OWNER = "workspace_id = :ws AND person_id = :person"


class DynamoPasskeys(PasskeyStore):
    def __init__(self, table: Table):
        self.table = table

    def put_passkey(self, passkey: Passkey) -> None:
        fields = dict(passkey_fields(passkey), name=check_passkey_name(passkey.name))
        pointer = {**_pointer(passkey.workspace_id, passkey.person_id, passkey.credential_id),
                   **codec.item({"credential_id": passkey.credential_id})}
        try:
            self.table.transact([
                {"Put": {"Item": {**_main(passkey.credential_id), **codec.item(fields)},
                         "ConditionExpression": "attribute_not_exists(pk)"}},
                {"Put": {"Item": pointer}},
            ])
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                raise Conflict("This passkey is registered already.") from None
            raise StoreError(f"Could not register the passkey: {cancelled}") from None

    def get_passkey(self, credential_id: str) -> Passkey | None:
        found = self.table.get(_main(credential_id))
        return passkey_from(found) if found else None

    def list_passkeys(self, workspace_id: str, person_id: str) -> list[Passkey]:
        pointers = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)", ConsistentRead=True,
            ExpressionAttributeValues=codec.values({":pk": f"WS#{workspace_id}", ":prefix": f"PASSKEYOF#{person_id}#"}),
        )
        found = [self.get_passkey(p["credential_id"]) for p in pointers]
        mine = [p for p in found if p is not None and p.workspace_id == workspace_id and p.person_id == person_id]
        return sorted(mine, key=lambda p: (p.created_at, p.credential_id))

    def rename_passkey(self, workspace_id: str, person_id: str, credential_id: str, name: str) -> Passkey:
        name = check_passkey_name(name)
        out = self.table.update(
            _main(credential_id), UpdateExpression="SET #name = :name",
            ConditionExpression=f"attribute_exists(pk) AND {OWNER}", ExpressionAttributeNames={"#name": "name"},
            ExpressionAttributeValues=codec.values({":name": name, ":ws": workspace_id, ":person": person_id}),
            ReturnValues="ALL_NEW",
        )
        if out is None:
            raise NotFound("passkey", credential_id)
        return passkey_from(out)

    def remove_passkey(self, workspace_id: str, person_id: str, credential_id: str) -> None:
        try:
            self.table.transact([
                {"Delete": {"Key": _main(credential_id), "ConditionExpression": f"attribute_exists(pk) AND {OWNER}",
                            "ExpressionAttributeValues": codec.values({":ws": workspace_id, ":person": person_id})}},
                {"Delete": {"Key": _pointer(workspace_id, person_id, credential_id)}},
            ])
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                raise NotFound("passkey", credential_id) from None
            raise StoreError(f"Could not remove the passkey: {cancelled}") from None

    def note_passkey_use(self, credential_id: str, sign_count: int, now: int) -> None:
        self.table.update(
            _main(credential_id), UpdateExpression="SET last_used_at = :now, sign_count = :count",
            ConditionExpression="attribute_exists(pk) AND sign_count <= :count",
            ExpressionAttributeValues=codec.values({":now": now, ":count": sign_count}),
        ) or self.table.update(
            _main(credential_id), UpdateExpression="SET last_used_at = :now",
            ConditionExpression="attribute_exists(pk)", ExpressionAttributeValues=codec.values({":now": now}),
        )

    def put_passkey_challenge(self, challenge: PasskeyChallenge) -> None:
        self.table.client.put_item(
            TableName=self.table.name,
            Item={**codec.single_key("PKCHALLENGE", challenge.challenge_hash),
                  **codec.item(challenge_fields(challenge))},
        )

    def take_passkey_challenge(self, challenge_hash: str, now: int) -> PasskeyChallenge | None:
        out = self.table.client.delete_item(
            TableName=self.table.name, Key=codec.single_key("PKCHALLENGE", challenge_hash), ReturnValues="ALL_OLD")
        raw = out.get("Attributes")
        if not raw:
            return None
        record = codec.plain(raw)
        if record["expires_at"] <= now:
            return None
        return challenge_from(record)
