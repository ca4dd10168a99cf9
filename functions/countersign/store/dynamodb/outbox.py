"""The transactional outbox on DynamoDB: ``OUTBOX#<card>`` items, written with their card.

Until done, an item sits in the sparse gsi1 partition ``OUTBOX`` keyed by when it may next be
tried (its due time while pending, its lease's end while sending), so a sweeper finds what a
crashed or failed sender left with one query. The table's stream also carries each new item to
the notifier function, which delivers it at once.
"""

from __future__ import annotations

from ..outbox import (
    MAX_LISTED,
    NOTIFY_DONE,
    NOTIFY_PENDING,
    NOTIFY_SENDING,
    Notification,
    OutboxStore,
    check_notification,
    check_quiet_wait,
)
from ..table import GSI1
from . import codec
from .client import Table

STATE = {"#st": "state"}
RETENTION = 7 * 24 * 3600  # a digest check is kept this long after it is due (as a card's notification)


class DynamoOutbox(OutboxStore):
    def __init__(self, table: Table):
        self.table = table

    def get_notification(self, card_id: str) -> Notification | None:
        found = self.table.get(codec.outbox_key(card_id))
        return None if found is None else codec.notification_from(found)

    def lease_notification(self, card_id: str, now: int, lease_seconds: int) -> Notification | None:
        until = now + lease_seconds
        out = self.table.update(
            codec.outbox_key(card_id),
            UpdateExpression="SET #st = :sending, lease_until = :until, gsi1sk = :gsk",
            ConditionExpression="(#st = :pending AND due_at <= :now) OR (#st = :sending AND lease_until <= :now)",
            ExpressionAttributeNames=STATE,
            ExpressionAttributeValues=codec.values({
                ":sending": NOTIFY_SENDING, ":pending": NOTIFY_PENDING, ":until": until, ":now": now,
                ":gsk": codec.time_key(until, card_id),
            }),
            ReturnValues="ALL_NEW",
        )
        return None if not out else codec.notification_from(out)

    def finish_notification(self, card_id: str, now: int, outcome: str) -> None:
        self.table.update(
            codec.outbox_key(card_id),
            UpdateExpression="SET #st = :done, outcome = :outcome, done_at = :now, lease_until = :zero"
                             " REMOVE gsi1pk, gsi1sk",
            ConditionExpression="#st = :sending",
            ExpressionAttributeNames=STATE,
            ExpressionAttributeValues=codec.values({
                ":done": NOTIFY_DONE, ":sending": NOTIFY_SENDING, ":outcome": outcome, ":now": now, ":zero": 0,
            }),
        )

    def retry_notification(self, card_id: str, now: int, due_at: int) -> None:
        self.table.update(
            codec.outbox_key(card_id),
            UpdateExpression="SET #st = :pending, due_at = :due, lease_until = :zero, gsi1sk = :gsk ADD attempts :one",
            ConditionExpression="#st = :sending",
            ExpressionAttributeNames=STATE,
            ExpressionAttributeValues=codec.values({
                ":pending": NOTIFY_PENDING, ":sending": NOTIFY_SENDING, ":due": due_at, ":zero": 0, ":one": 1,
                ":gsk": codec.time_key(due_at, card_id),
            }),
        )

    def add_notification(self, n: Notification) -> bool:
        check_notification(n)
        return self.table.put_new(codec.notification_item(n, n.due_at + RETENTION))

    def defer_notification(self, card_id: str, due_at: int) -> None:
        self.table.update(
            codec.outbox_key(card_id),
            UpdateExpression="SET #st = :pending, due_at = :due, lease_until = :zero, gsi1sk = :gsk",
            ConditionExpression="#st = :sending",
            ExpressionAttributeNames=STATE,
            ExpressionAttributeValues=codec.values({
                ":pending": NOTIFY_PENDING, ":sending": NOTIFY_SENDING, ":due": due_at, ":zero": 0,
                ":gsk": codec.time_key(due_at, card_id),
            }),
        )

    def hold_for_quiet_hours(self, wait: Notification, card_id: str) -> bool:
        check_quiet_wait(wait, card_id)
        # Created with every field if absent; else the card appended while the wait is pending, has
        # room and does not list it yet. A refused condition is told apart by reading the item.
        fresh = codec.plain(codec.notification_item(wait, wait.due_at + RETENTION))
        fields = {k: v for k, v in fresh.items() if k not in ("pk", "sk", "listed")}
        names = {f"#f{i}": k for i, k in enumerate(fields)}
        values = {f":f{i}": v for i, v in enumerate(fields.values())}
        sets = ", ".join(f"#f{i} = if_not_exists(#f{i}, :f{i})" for i in range(len(fields)))
        out = self.table.update(
            codec.outbox_key(wait.card_id),
            UpdateExpression=f"SET {sets}, listed = list_append(if_not_exists(listed, :none), :card)",
            ConditionExpression="attribute_not_exists(pk) OR (#st = :pending AND size(listed) < :max"
                                " AND NOT contains(listed, :id))",
            ExpressionAttributeNames={**names, **STATE},
            ExpressionAttributeValues=codec.values({**values, ":none": [], ":card": [card_id], ":id": card_id,
                                                    ":pending": NOTIFY_PENDING, ":max": MAX_LISTED}),
        )
        if out is not None:
            return True
        held = self.get_notification(wait.card_id)
        return held is not None and held.state == NOTIFY_PENDING and card_id in held.listed

    def take_notification(self, card_id: str, now: int, outcome: str) -> Notification | None:
        out = self.table.update(
            codec.outbox_key(card_id),
            UpdateExpression="SET #st = :done, outcome = :outcome, done_at = :now, lease_until = :zero"
                             " REMOVE gsi1pk, gsi1sk",
            ConditionExpression="#st = :pending AND due_at <= :now",
            ExpressionAttributeNames=STATE,
            ExpressionAttributeValues=codec.values({
                ":done": NOTIFY_DONE, ":pending": NOTIFY_PENDING, ":outcome": outcome, ":now": now, ":zero": 0,
            }),
            ReturnValues="ALL_NEW",
        )
        return None if not out else codec.notification_from(out)

    def due_notifications(self, now: int, limit: int = 50) -> list[Notification]:
        found = self.table.query(
            IndexName=GSI1,
            KeyConditionExpression="gsi1pk = :p AND gsi1sk < :b",
            ExpressionAttributeValues=codec.values({":p": codec.OUTBOX_PARTITION, ":b": codec.after_second(now)}),
            PaginationConfig={"PageSize": limit},
        )
        due = []
        for v in found:
            due.append(codec.notification_from(v))
            if len(due) >= limit:
                break
        return due
