"""The events cards owe webhook endpoints, and their deliveries, on DynamoDB (the
:mod:`countersign.store.webhook_deliveries` role).

Items (see :mod:`countersign.store.table`)::

    event               WHEVENT#<event id>  WHEVENT             (TTL: a month after it happened)
    delivery            WHOOK#<endpoint id> LOG#<created_at:012d>#<delivery id>   (TTL: a month)

A card's events ride in the card's own transactions (:func:`event_puts`), when the card owes them
(:mod:`.webhook_endpoints`). The table's stream carries each new event to the notifier function.
Until done, an event sits in the sparse gsi1 partition ``WHEVENT`` keyed by its due time, and a
delivery not finished in ``WHDELIVERY`` keyed by its next try (or its lease's end), so the sweeper
finds what is owed with one query each; the index projects neither, so each is then read whole.
"""

from __future__ import annotations

from typing import Any

from ..errors import BadInput, NotFound
from ..table import GSI1
from ..webhook_deliveries import (
    DELIVERED,
    DROPPED,
    GAVE_UP,
    LOG_SIZE,
    PENDING,
    SENDING,
    WebhookDelivery,
    WebhookDeliveryStore,
    WebhookEvent,
)
from . import codec
from .client import Cancelled, Table
from .webhook_endpoints import endpoint_key

RETENTION = 30 * 24 * 3600  # events and deliveries are purged a month after they happened
EVENT_PARTITION = "WHEVENT"
DELIVERY_PARTITION = "WHDELIVERY"
STATE = {"#st": "state"}

EVENT_FIELDS = ("id", "workspace_id", "card_id", "event", "state", "at", "due_at", "done")
DELIVERY_FIELDS = ("id", "endpoint_id", "workspace_id", "event_id", "event", "card_id", "created_at", "payload",
                   "state", "attempts", "due_at", "lease_until", "status_code", "last_attempt_at", "error")


def event_key(event_id: str) -> codec.Item:
    return codec.key(f"WHEVENT#{event_id}", "WHEVENT")


def delivery_key(d: WebhookDelivery) -> codec.Item:
    return codec.key(f"WHOOK#{d.endpoint_id}", f"LOG#{d.created_at:012d}#{d.id}")


def _event_from(v: dict[str, Any]) -> WebhookEvent:
    return WebhookEvent(**{k: v[k] for k in EVENT_FIELDS if k != "done"}, done=bool(v.get("done")))


def _delivery_from(v: dict[str, Any]) -> WebhookDelivery:
    values: dict[str, Any] = {k: v.get(k) for k in DELIVERY_FIELDS}
    for name in ("attempts", "due_at", "lease_until"):
        values[name] = int(values[name] or 0)
    return WebhookDelivery(**values)


def event_from_image(v: dict[str, Any]) -> WebhookEvent | None:
    """The event a stream record's new image holds (plain values), or None if it is no event item."""
    if v.get("sk") != "WHEVENT" or not v.get("id") or v.get("pk") != f"WHEVENT#{v.get('id')}":
        return None
    return _event_from(v)


def event_puts(events: list[WebhookEvent]) -> list[dict[str, Any]]:
    """The Puts of a card transaction that record ``events`` (a deadline's ``card.lapsed`` is
    replaced by a withdrawal's: one lapse per card)."""
    return [{"Put": {"Item": _event_item(e)}} for e in events]


def _event_item(e: WebhookEvent) -> codec.Item:
    values: dict[str, Any] = {k: getattr(e, k) for k in EVENT_FIELDS}
    values["expires_at"] = e.at + RETENTION
    if not e.done:
        values.update(gsi1pk=EVENT_PARTITION, gsi1sk=codec.time_key(e.due_at, e.id))
    return {**event_key(e.id), **codec.item(values)}


class DynamoWebhookDeliveries(WebhookDeliveryStore):
    def __init__(self, table: Table):
        self.table = table

    # -- events ------------------------------------------------------------------------------------

    def get_event(self, event_id: str) -> WebhookEvent | None:
        found = self.table.get(event_key(event_id))
        return _event_from(found) if found else None

    def due_events(self, now: int, limit: int = 50) -> list[WebhookEvent]:
        due = []
        for v in self._index(EVENT_PARTITION, now, limit):
            found = self.table.get(codec.key(v["pk"], v["sk"]))
            if found is not None and not found.get("done"):
                due.append(_event_from(found))
            if len(due) >= limit:
                break
        return due

    def fan_out(self, event: WebhookEvent, deliveries: list[WebhookDelivery]) -> bool:
        items: list[dict[str, Any]] = [{"Update": {
            "Key": event_key(event.id), "UpdateExpression": "SET done = :yes REMOVE gsi1pk, gsi1sk",
            "ConditionExpression": "attribute_exists(pk) AND done = :no",
            "ExpressionAttributeValues": codec.values({":yes": True, ":no": False}),
        }}]
        items += [{"Put": {"Item": self._delivery_item(d)}} for d in deliveries]
        try:
            self.table.transact(items)
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                return False
            raise
        return True

    # -- deliveries --------------------------------------------------------------------------------

    @staticmethod
    def _delivery_item(d: WebhookDelivery) -> codec.Item:
        values: dict[str, Any] = {k: getattr(d, k) for k in DELIVERY_FIELDS}
        values["expires_at"] = d.created_at + RETENTION
        if d.state in (PENDING, SENDING):
            values.update(gsi1pk=DELIVERY_PARTITION,
                          gsi1sk=codec.time_key(d.due_at if d.state == PENDING else d.lease_until, d.id))
        return {**delivery_key(d), **codec.item(values)}

    def get_delivery(self, delivery: WebhookDelivery) -> WebhookDelivery | None:
        found = self.table.get(delivery_key(delivery))
        return _delivery_from(found) if found else None

    def lease_delivery(self, delivery: WebhookDelivery, now: int, lease_seconds: int) -> WebhookDelivery | None:
        until = now + lease_seconds
        out = self.table.update(
            delivery_key(delivery),
            UpdateExpression="SET #st = :sending, lease_until = :until, gsi1sk = :gsk",
            ConditionExpression="(#st = :pending AND due_at <= :now) OR (#st = :sending AND lease_until <= :now)",
            ExpressionAttributeNames=STATE,
            ExpressionAttributeValues=codec.values({
                ":sending": SENDING, ":pending": PENDING, ":until": until, ":now": now,
                ":gsk": codec.time_key(until, delivery.id),
            }),
            ReturnValues="ALL_NEW",
        )
        return _delivery_from(out) if out else None

    def finish_delivery(self, delivery: WebhookDelivery, now: int, state: str, *, status_code: int | None = None,
                        error: str | None = None, attempted: bool = True) -> None:
        if state not in (DELIVERED, GAVE_UP, DROPPED):
            raise BadInput("state", f"a delivery finishes {DELIVERED}, {GAVE_UP} or {DROPPED}, not {state!r}.")
        sets: dict[str, Any] = {":st": state, ":sending": SENDING, ":zero": 0, ":n": int(attempted)}
        expression = "SET #st = :st, lease_until = :zero"
        removes = ["gsi1pk", "gsi1sk"]
        if attempted:
            expression += ", last_attempt_at = :now"
            sets[":now"] = now
        if status_code is not None:
            expression += ", status_code = :code"
            sets[":code"] = status_code
        if error is not None:
            expression += ", #err = :err"
            sets[":err"] = error
        else:
            removes.append("#err")
        self.table.update(
            delivery_key(delivery),
            UpdateExpression=expression + " ADD attempts :n REMOVE " + ", ".join(removes),
            ConditionExpression="#st = :sending",
            ExpressionAttributeNames={**STATE, "#err": "error"},
            ExpressionAttributeValues=codec.values(sets),
        )

    def retry_delivery(self, delivery: WebhookDelivery, now: int, due_at: int, *, status_code: int | None,
                       error: str | None) -> None:
        sets: dict[str, Any] = {":pending": PENDING, ":sending": SENDING, ":due": due_at, ":zero": 0, ":one": 1,
                                ":now": now, ":gsk": codec.time_key(due_at, delivery.id)}
        expression = "SET #st = :pending, due_at = :due, lease_until = :zero, last_attempt_at = :now, gsi1sk = :gsk"
        removes = []
        for name, value in (("status_code", status_code), ("#err", error)):
            if value is None:
                removes.append(name)
            else:
                expression += f", {name} = :{name.lstrip('#')}"
                sets[f":{name.lstrip('#')}"] = value
        self.table.update(
            delivery_key(delivery),
            UpdateExpression=expression + " ADD attempts :one" + (" REMOVE " + ", ".join(removes) if removes else ""),
            ConditionExpression="#st = :sending",
            ExpressionAttributeNames={**STATE, "#err": "error"},
            ExpressionAttributeValues=codec.values(sets),
        )

    def due_deliveries(self, now: int, limit: int = 50) -> list[WebhookDelivery]:
        due = []
        for v in self._index(DELIVERY_PARTITION, now, limit):
            found = self.table.get(codec.key(v["pk"], v["sk"]))
            if found is not None and found.get("state") in (PENDING, SENDING):
                due.append(_delivery_from(found))
            if len(due) >= limit:
                break
        return due

    def list_deliveries(self, workspace_id: str, endpoint_id: str, limit: int = LOG_SIZE) -> list[WebhookDelivery]:
        if self.table.get(endpoint_key(workspace_id, endpoint_id)) is None:
            raise NotFound("webhook endpoint", endpoint_id)
        found = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :log)",
            ExpressionAttributeValues=codec.values({":pk": f"WHOOK#{endpoint_id}", ":log": "LOG#"}),
            ScanIndexForward=False, ConsistentRead=True, PaginationConfig={"PageSize": limit},
        )
        out = []
        for v in found:
            if v.get("workspace_id") == workspace_id:
                out.append(_delivery_from(v))
            if len(out) >= limit:
                break
        return out

    def _index(self, partition: str, now: int, page: int):
        return self.table.query(
            IndexName=GSI1,
            KeyConditionExpression="gsi1pk = :p AND gsi1sk < :b",
            ExpressionAttributeValues=codec.values({":p": partition, ":b": codec.after_second(now)}),
            PaginationConfig={"PageSize": page},
        )
