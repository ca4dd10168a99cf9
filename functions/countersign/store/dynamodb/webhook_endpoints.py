"""A workspace's webhook endpoints, on DynamoDB (the :mod:`countersign.store.webhook_endpoints` role).

Items (see :mod:`countersign.store.table`)::

    endpoint            WS#<ws>             WEBHOOK#<endpoint id>
    endpoint count      WS#<ws>             WS                  (webhook_endpoints, on the workspace's item:
                                                                 kept with every add and removal)

A card is filed knowing from the count whether its events are owed (the workspace as the filing
request read it: :attr:`~countersign.store.workspaces.Workspace.webhooks`), and keeps the answer on
its item (:attr:`~countersign.store.cards.Card.webhooks`), so neither its filing nor its moves read
anything more. Only a card filed before the answer was kept costs one consistent ``GetItem`` per
move (:func:`has_endpoints`). The events and deliveries are :mod:`.webhook_deliveries`.
"""

from __future__ import annotations

from typing import Any

from ..errors import BadInput, Conflict, NotFound
from ..webhook_endpoints import (
    MAX_ENDPOINTS,
    WebhookEndpoint,
    WebhookEndpointStore,
    check_endpoint,
    check_taken,
    disabled_reason,
    stored_events,
)
from . import codec
from .client import Cancelled, Table

RECORD_ATTEMPTS = 5  # an endpoint's counters are updated on the values read; a race reads again

ENDPOINT_FIELDS = ("id", "workspace_id", "url", "events", "secret_sealed", "created_at", "created_by", "enabled",
                   "disabled_at", "disabled_reason", "failing_since", "failures", "last_success_at")


def endpoint_key(ws: str, endpoint_id: str) -> codec.Item:
    return codec.key(f"WS#{ws}", f"WEBHOOK#{endpoint_id}")


def _endpoint_from(v: dict[str, Any]) -> WebhookEndpoint:
    values: dict[str, Any] = {k: v.get(k) for k in ENDPOINT_FIELDS}
    values["events"] = stored_events(v.get("events"), bool(v.get("events_exact")))
    values["enabled"] = bool(v.get("enabled"))
    values["failures"] = int(v.get("failures") or 0)
    return WebhookEndpoint(**values)


def has_endpoints(table: Table, workspace_id: str) -> bool:
    """Whether card events of ``workspace_id`` are owed to anyone (one consistent read)."""
    found = table.get(codec.workspace_key(workspace_id))
    return bool(found and int(found.get("webhook_endpoints") or 0) > 0)


class DynamoWebhookEndpoints(WebhookEndpointStore):
    def __init__(self, table: Table):
        self.table = table

    # -- endpoints ---------------------------------------------------------------------------------

    def add_endpoint(self, endpoint: WebhookEndpoint) -> WebhookEndpoint:
        check_endpoint(endpoint)
        values = {k: getattr(endpoint, k) for k in ENDPOINT_FIELDS}
        values["events"] = list(endpoint.events)
        values["events_exact"] = True  # its list means that list (store.webhook_endpoints.BEFORE_EDITED)
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

    def set_endpoint_events(self, workspace_id: str, endpoint_id: str, events: tuple[str, ...]) -> WebhookEndpoint:
        taken = check_taken(events)
        out = self.table.update(  # the endpoint's item only: the workspace's count of endpoints is unchanged
            endpoint_key(workspace_id, endpoint_id), UpdateExpression="SET events = :events, events_exact = :exact",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeValues=codec.values({":events": list(taken), ":exact": True}), ReturnValues="ALL_NEW")
        if not out:
            raise NotFound("webhook endpoint", endpoint_id)
        return _endpoint_from(out)

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
