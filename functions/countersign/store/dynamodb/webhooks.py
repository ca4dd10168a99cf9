"""Webhook endpoints, the events cards owe them, and their deliveries, on DynamoDB.

Items (see :mod:`countersign.store.table`)::

    endpoint            WS#<ws>             WEBHOOK#<endpoint id>
    endpoint count      WS#<ws>             WS                  (webhook_endpoints, on the workspace's item:
                                                                 kept with every add and removal)
    event               WHEVENT#<event id>  WHEVENT             (TTL: a month after it happened)
    delivery            WHOOK#<endpoint id> LOG#<created_at:012d>#<delivery id>   (TTL: a month)

A card is filed knowing from the count whether its events are owed (the workspace as the filing
request read it: :attr:`~countersign.store.workspaces.Workspace.webhooks`), and keeps the answer on
its item (:attr:`~countersign.store.cards.Card.webhooks`), so neither its filing nor its moves read
anything more; its events ride in the card's own transactions (:func:`event_puts`). Only a card
filed before the answer was kept costs one consistent ``GetItem`` per move. The table's stream carries each new
event to the notifier function. Until done, an event sits in the sparse gsi1 partition
``WHEVENT`` keyed by its due time, and a delivery not finished in ``WHDELIVERY`` keyed by its next
try (or its lease's end), so the sweeper finds what is owed with one query each; the index
projects neither, so each is then read whole.
"""

from __future__ import annotations

from typing import Any

from ..errors import BadInput, Conflict, NotFound
from ..table import GSI1
from ..webhooks import (
    DELIVERED,
    DROPPED,
    GAVE_UP,
    LOG_SIZE,
    MAX_ENDPOINTS,
    PENDING,
    SENDING,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookStore,
    check_endpoint,
    disabled_reason,
)
from . import codec
from .client import Cancelled, Table

RETENTION = 30 * 24 * 3600  # events and deliveries are purged a month after they happened
EVENT_PARTITION = "WHEVENT"
DELIVERY_PARTITION = "WHDELIVERY"
STATE = {"#st": "state"}
RECORD_ATTEMPTS = 5  # an endpoint's counters are updated on the values read; a race reads again

ENDPOINT_FIELDS = ("id", "workspace_id", "url", "events", "secret_sealed", "created_at", "created_by", "enabled",
                   "disabled_at", "disabled_reason", "failing_since", "failures", "last_success_at")
EVENT_FIELDS = ("id", "workspace_id", "card_id", "event", "state", "at", "due_at", "done")
DELIVERY_FIELDS = ("id", "endpoint_id", "workspace_id", "event_id", "event", "card_id", "created_at", "payload",
                   "state", "attempts", "due_at", "lease_until", "status_code", "last_attempt_at", "error")


def endpoint_key(ws: str, endpoint_id: str) -> codec.Item:
    return codec.key(f"WS#{ws}", f"WEBHOOK#{endpoint_id}")


def event_key(event_id: str) -> codec.Item:
    return codec.key(f"WHEVENT#{event_id}", "WHEVENT")


def delivery_key(d: WebhookDelivery) -> codec.Item:
    return codec.key(f"WHOOK#{d.endpoint_id}", f"LOG#{d.created_at:012d}#{d.id}")


def _endpoint_from(v: dict[str, Any]) -> WebhookEndpoint:
    values: dict[str, Any] = {k: v.get(k) for k in ENDPOINT_FIELDS}
    values["events"] = tuple(v.get("events") or ())
    values["enabled"] = bool(v.get("enabled"))
    values["failures"] = int(v.get("failures") or 0)
    return WebhookEndpoint(**values)


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


def has_endpoints(table: Table, workspace_id: str) -> bool:
    """Whether card events of ``workspace_id`` are owed to anyone (one consistent read)."""
    found = table.get(codec.workspace_key(workspace_id))
    return bool(found and int(found.get("webhook_endpoints") or 0) > 0)


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


class DynamoWebhooks(WebhookStore):
    def __init__(self, table: Table):
        self.table = table

    # -- endpoints ---------------------------------------------------------------------------------

    def add_endpoint(self, endpoint: WebhookEndpoint) -> WebhookEndpoint:
        check_endpoint(endpoint)
        values = {k: getattr(endpoint, k) for k in ENDPOINT_FIELDS}
        values["events"] = list(endpoint.events)
        ws = endpoint.workspace_id
        try:
            self.table.transact([
                {"Update": {"Key": codec.workspace_key(ws), "UpdateExpression": "ADD webhook_endpoints :one",
                            "ConditionExpression": "attribute_exists(pk) AND (attribute_not_exists(webhook_endpoints)"
                                                   " OR webhook_endpoints < :most)",
                            "ExpressionAttributeValues": codec.values({":one": 1, ":most": MAX_ENDPOINTS})}},
                {"Put": {"Item": {**endpoint_key(ws, endpoint.id), **codec.item(values)},
                         "ConditionExpression": "attribute_not_exists(pk)"}},
            ])
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                if self.table.get(codec.workspace_key(ws)) is None:
                    raise NotFound("workspace", ws) from None
                raise BadInput("url", f"this workspace has {MAX_ENDPOINTS} webhook endpoints already, the most it "
                                      "may have; remove one first.") from None
            raise Conflict(f"A webhook endpoint with id {endpoint.id!r} already exists.") from None
        return endpoint

    def list_endpoints(self, workspace_id: str) -> list[WebhookEndpoint]:
        found = [_endpoint_from(v) for v in self.table.workspace_records(workspace_id, "WEBHOOK#")]
        return sorted(found, key=lambda e: (e.created_at, e.id))  # oldest first, as on SQLite

    def get_endpoint(self, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
        found = self.table.get(endpoint_key(workspace_id, endpoint_id))
        if found is None:
            raise NotFound("webhook endpoint", endpoint_id)
        return _endpoint_from(found)

    def remove_endpoint(self, workspace_id: str, endpoint_id: str) -> None:
        try:
            self.table.transact([
                {"Delete": {"Key": endpoint_key(workspace_id, endpoint_id),
                            "ConditionExpression": "attribute_exists(pk)"}},
                {"Update": {"Key": codec.workspace_key(workspace_id), "UpdateExpression": "ADD webhook_endpoints :less",
                            "ExpressionAttributeValues": codec.values({":less": -1})}},
            ])
        except Cancelled:
            raise NotFound("webhook endpoint", endpoint_id) from None

    def enable_endpoint(self, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
        out = self.table.update(
            endpoint_key(workspace_id, endpoint_id),
            UpdateExpression="SET enabled = :on, failures = :zero REMOVE disabled_at, disabled_reason, failing_since",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeValues=codec.values({":on": True, ":zero": 0}),
            ReturnValues="ALL_NEW",
        )
        if not out:
            raise NotFound("webhook endpoint", endpoint_id)
        return _endpoint_from(out)

    def disable_endpoint(self, workspace_id: str, endpoint_id: str, now: int, reason: str) -> WebhookEndpoint:
        key = endpoint_key(workspace_id, endpoint_id)
        out = self.table.update(
            key, UpdateExpression="SET enabled = :off, disabled_at = :now, disabled_reason = :why",
            ConditionExpression="attribute_exists(pk) AND enabled = :on",
            ExpressionAttributeValues=codec.values({":off": False, ":on": True, ":now": now, ":why": reason}),
            ReturnValues="ALL_NEW")
        if out:
            return _endpoint_from(out)
        found = self.table.get(key)  # unknown, or off already (and then left as it was)
        if found is None:
            raise NotFound("webhook endpoint", endpoint_id)
        return _endpoint_from(found)

    def record_attempt(self, workspace_id: str, endpoint_id: str, now: int, ok: bool, *,
                       disable_after: int, min_failures: int) -> tuple[WebhookEndpoint, bool] | None:
        key = endpoint_key(workspace_id, endpoint_id)
        for _ in range(RECORD_ATTEMPTS):
            found = self.table.get(key)
            if found is None:
                return None
            before = _endpoint_from(found)
            if ok:
                out = self.table.update(
                    key, UpdateExpression="SET failures = :zero, last_success_at = :now REMOVE failing_since",
                    ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeValues=codec.values({":zero": 0, ":now": now}), ReturnValues="ALL_NEW")
                return (_endpoint_from(out), False) if out else None
            since = before.failing_since if before.failing_since is not None else now
            failures = before.failures + 1
            turn_off = before.enabled and now - since >= disable_after and failures >= min_failures
            sets: dict[str, Any] = {":since": since, ":failures": failures, ":was": before.failures}
            expression = "SET failing_since = :since, failures = :failures"
            if turn_off:
                expression += ", enabled = :off, disabled_at = :now, disabled_reason = :why"
                sets.update({":off": False, ":now": now, ":why": disabled_reason(failures, since)})
            out = self.table.update(
                key, UpdateExpression=expression,
                ConditionExpression="attribute_exists(pk) AND (failures = :was OR attribute_not_exists(failures))",
                ExpressionAttributeValues=codec.values(sets), ReturnValues="ALL_NEW")
            if out:
                return _endpoint_from(out), turn_off
        return None  # contended throughout: this attempt is not counted (the next one is)

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
        self.get_endpoint(workspace_id, endpoint_id)
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
