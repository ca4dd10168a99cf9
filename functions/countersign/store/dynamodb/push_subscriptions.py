"""Push subscriptions on DynamoDB.

Items (see :mod:`countersign.store.table`)::

    push subscription    WS#<ws>                  PUSH#<person>#<subscription id>   (the record)
    endpoint's owner     PUSHSUB#<subscription id> PUSHSUB                         (workspace_id, person_id)
    person's devices     WS#<ws>                  PUSHADDS#<person>                 (adds: a version)

The owner item keeps an endpoint to one person: adding it for another person moves it, in one
transaction with the old record's removal.

The per-person limit holds inside the write: an add counts the person's devices (one query) at a
version of their devices item read first, and its transaction moves that version on, on the
condition that it is still the one read. Of two devices added at the same instant, both counted
before either wrote, one transaction commits and the other is cancelled; it counts again and is
refused if the person is now at the limit. A removal needs no version: it only lowers the count.
"""

from __future__ import annotations

from typing import Any

from ..errors import BadInput, StoreError
from ..push_subscriptions import MAX_SUBSCRIPTIONS, PushSubscription, PushSubscriptionStore, check_subscription
from . import codec
from .client import Cancelled, Table

FIELDS = ("id", "workspace_id", "person_id", "endpoint", "p256dh", "auth", "device", "created_at", "last_used_at",
          "signed_in_until")
ATTEMPTS = MAX_SUBSCRIPTIONS + 2  # a retry follows another add that committed (or an owner's move)


def record_key(workspace_id: str, person_id: str, subscription_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", f"PUSH#{person_id}#{subscription_id}")


def owner_key(subscription_id: str) -> codec.Item:
    return codec.single_key("PUSHSUB", subscription_id)


def adds_key(workspace_id: str, person_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", f"PUSHADDS#{person_id}")


def _version_check(workspace_id: str, person_id: str, version: int | None) -> dict[str, Any]:
    """Move the person's devices version on from ``version`` (None: never added), on the
    condition that no other add moved it since it was read."""
    if version is None:
        return {"Update": {"Key": adds_key(workspace_id, person_id), "UpdateExpression": "SET adds = :next",
                           "ConditionExpression": "attribute_not_exists(adds)",
                           "ExpressionAttributeValues": codec.values({":next": 1})}}
    return {"Update": {"Key": adds_key(workspace_id, person_id), "UpdateExpression": "SET adds = :next",
                       "ConditionExpression": "adds = :read",
                       "ExpressionAttributeValues": codec.values({":next": version + 1, ":read": version})}}


def _subscription(v: dict[str, Any]) -> PushSubscription:
    return PushSubscription(**codec.pick(v, FIELDS))


class DynamoPushSubscriptions(PushSubscriptionStore):
    def __init__(self, table: Table):
        self.table = table

    def add_subscription(self, subscription: PushSubscription) -> PushSubscription:
        check_subscription(subscription)
        s = subscription
        for _ in range(ATTEMPTS):
            counted = self.table.get(adds_key(s.workspace_id, s.person_id))  # the version the count is at
            version = None if counted is None else int(counted["adds"])
            others = [x for x in self.list_subscriptions(s.workspace_id, s.person_id) if x.id != s.id]
            if len(others) >= MAX_SUBSCRIPTIONS:
                raise BadInput("endpoint", f"at most {MAX_SUBSCRIPTIONS} devices get notifications; remove one in "
                                           "Settings first.")
            before = self.table.get(owner_key(s.id))
            owner = {**owner_key(s.id), **codec.item({"workspace_id": s.workspace_id, "person_id": s.person_id})}
            if before is None:
                claim: dict[str, Any] = {"Put": {"Item": owner, "ConditionExpression": "attribute_not_exists(pk)"}}
            else:
                claim = {"Put": {"Item": owner, "ConditionExpression": "workspace_id = :ws AND person_id = :p",
                                 "ExpressionAttributeValues": codec.values(
                                     {":ws": before["workspace_id"], ":p": before["person_id"]})}}
            items = [claim, {"Put": {"Item": {**record_key(s.workspace_id, s.person_id, s.id),
                                              **codec.item({k: getattr(s, k) for k in FIELDS})}}},
                     _version_check(s.workspace_id, s.person_id, version)]
            if before is not None and (before["workspace_id"], before["person_id"]) != (s.workspace_id, s.person_id):
                items.append({"Delete": {"Key": record_key(before["workspace_id"], before["person_id"], s.id)}})
            try:
                self.table.transact(items)
                return subscription
            except Cancelled as cancelled:
                if "ConditionalCheckFailed" not in (cancelled.code(0), cancelled.code(2)):
                    raise StoreError(f"Could not add the push subscription: {cancelled}") from None
                # moved meanwhile, or another device of the person's was added: count and read again
        raise StoreError("The push subscription kept changing; try again.")

    def list_subscriptions(self, workspace_id: str, person_id: str) -> list[PushSubscription]:
        found = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=codec.values({":pk": f"WS#{workspace_id}", ":prefix": f"PUSH#{person_id}#"}),
            ConsistentRead=True,
        )
        return sorted((_subscription(v) for v in found), key=lambda s: (s.created_at, s.id))

    def remove_subscription(self, workspace_id: str, person_id: str, subscription_id: str) -> bool:
        out = self.table.client.delete_item(TableName=self.table.name,
                                            Key=record_key(workspace_id, person_id, subscription_id),
                                            ReturnValues="ALL_OLD")
        if not out.get("Attributes"):
            return False
        try:  # the owner item, unless the endpoint moved to someone else meanwhile
            self.table.client.delete_item(
                TableName=self.table.name, Key=owner_key(subscription_id),
                ConditionExpression="workspace_id = :ws AND person_id = :p",
                ExpressionAttributeValues=codec.values({":ws": workspace_id, ":p": person_id}))
        except self.table.errors.ConditionalCheckFailedException:
            pass
        return True

    def renew_subscription(self, workspace_id: str, person_id: str, subscription_id: str,
                           signed_in_until: int) -> bool:
        return self.table.update(record_key(workspace_id, person_id, subscription_id),
                                 UpdateExpression="SET signed_in_until = :until",
                                 ConditionExpression="attribute_exists(pk)",
                                 ExpressionAttributeValues=codec.values({":until": signed_in_until})) is not None

    def touch_subscription(self, workspace_id: str, person_id: str, subscription_id: str, now: int) -> None:
        self.table.update(record_key(workspace_id, person_id, subscription_id),
                          UpdateExpression="SET last_used_at = :now", ConditionExpression="attribute_exists(pk)",
                          ExpressionAttributeValues=codec.values({":now": now}))
