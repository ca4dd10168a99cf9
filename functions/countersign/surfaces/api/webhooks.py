"""The workspace's signed webhooks (docs/channels.md, "Webhooks"): its endpoints, adding one (its
signing secret in that answer only), changing the events one takes, removing one, turning one on
again after it was turned off, and each endpoint's delivery log. Owners only; the checks are
:mod:`..webhook_endpoints`' (the CLI's too). Nothing here sends anything: deliveries are the
webhook deliverer's work."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field, StrictBool
from pydantic.json_schema import JsonDict

from ...store.webhook_deliveries import EVENTS
from ...store.webhook_endpoints import MAX_URL, turned_off_by
from .. import webhook_endpoints as endpoints
from .errors import ApiError
from .schemas import Strict, errors
from .session import Acting, SignedIn, runtime_of

router = APIRouter(tags=["settings"])
ENDPOINT_ID = Path(max_length=64, description="The endpoint's id (wh_…)")


class EndpointView(BaseModel):
    id: str
    url: str
    events: list[str] = Field(description="The events it is sent now")
    everyEvent: bool = Field(description="Added without naming events: it is sent every event, those added later "
                                         "too")
    enabled: bool
    createdAt: str
    disabledAt: str | None
    disabledReason: str | None
    disabledBy: str | None = Field(description="Off: owner (an owner turned it off) or failures (a day of failed "
                                               "deliveries turned it off, and the owners were emailed); on: null")
    failuresInARow: int
    lastSuccessAt: str | None


class EndpointList(BaseModel):
    endpoints: list[EndpointView]
    events: list[str]
    limit: int


class AddedEndpoint(BaseModel):
    endpoint: EndpointView
    secret: str = Field(description="The signing secret (whsec_…): shown this once, never again")


class DeliveryView(BaseModel):
    id: str = Field(description="The webhook-id header: the same on every retry")
    event: str
    cardId: str
    state: str = Field(description="pending, sending, delivered, failed (given up) or dropped")
    statusCode: int | None
    attempts: int
    createdAt: str
    lastAttemptAt: str | None
    nextRetryAt: str | None
    error: str | None


class DeliveryList(BaseModel):
    deliveries: list[DeliveryView]


class AddEndpointBody(Strict):
    url: str = Field(max_length=MAX_URL, description="Where events are posted: https, on a public address")
    events: list[str] | None = Field(
        default=None, max_length=len(EVENTS),
        description=f"The events to send (default: every event, those added later too): {', '.join(EVENTS)}")


def _event_names(schema: dict[str, Any]) -> None:
    """What the server enforces of a list of events past pydantic (the store's check_events),
    written into the document: at least one, each a known event."""
    for branch in schema.get("anyOf", [schema]):
        if branch.get("type") == "array":
            branch.update(minItems=1, items={"type": "string", "enum": list(EVENTS)})


#: Exactly one of a list of events and everyEvent: true (checked by webhook_endpoints.set_events).
_EVENTS_GIVEN: JsonDict = {"required": ["events"], "properties": {"events": {"type": "array"}}}
_EVERY_EVENT: JsonDict = {"required": ["everyEvent"], "properties": {"everyEvent": {"const": True}}}


class EndpointEventsBody(Strict):
    model_config = ConfigDict(**Strict.model_config, json_schema_extra={
        "anyOf": [_EVENTS_GIVEN, _EVERY_EVENT], "not": {"allOf": [_EVENTS_GIVEN, _EVERY_EVENT]}})
    events: list[str] | None = Field(
        default=None, max_length=len(EVENTS), json_schema_extra=_event_names,
        description=f"The events to send from now on, at least one of {', '.join(EVENTS)}. Send this or "
                    "everyEvent: true, not both")
    everyEvent: StrictBool | None = Field(
        default=None, description="true: every event, those added later too (as an endpoint added without "
                                  "events). Send this or events, not both")


def _owner(signed) -> None:
    if not endpoints.may_manage(signed.person):
        raise ApiError(403, "forbidden", endpoints.ONLY_OWNERS)


@router.get("/settings/webhooks", response_model=EndpointList, responses=errors(401, 403))
def list_webhooks(request: Request, signed: SignedIn) -> dict:
    """The workspace's webhook endpoints, the events there are, and how many endpoints it may have."""
    _owner(signed)
    return endpoints.listing(runtime_of(request).store.webhook_endpoints, signed.workspace.id)


@router.post("/settings/webhooks", response_model=AddedEndpoint, status_code=201, responses=errors(401, 403, 422))
def add_webhook(request: Request, signed: Acting, body: AddEndpointBody) -> dict:
    """Add an endpoint. The answer holds its signing secret, which is never shown again."""
    _owner(signed)
    runtime = runtime_of(request)
    added, secret = endpoints.add_endpoint(runtime.store.webhook_endpoints, runtime.state_keys,
                                           runtime.desk.settings, signed.person, body.url, body.events,
                                           runtime.desk.now())
    return {"endpoint": endpoints.endpoint_view(added), "secret": secret}


@router.delete("/settings/webhooks/{endpoint_id}", response_model=EndpointList, responses=errors(401, 403, 404))
def remove_webhook(request: Request, signed: Acting, endpoint_id: str = ENDPOINT_ID) -> dict:
    """Remove an endpoint: nothing more is sent to it, deliveries still owed included."""
    _owner(signed)
    webhook_endpoints = runtime_of(request).store.webhook_endpoints
    webhook_endpoints.remove_endpoint(signed.workspace.id, endpoint_id)
    return endpoints.listing(webhook_endpoints, signed.workspace.id)


@router.patch("/settings/webhooks/{endpoint_id}", response_model=EndpointView, responses=errors(401, 403, 404, 422))
def set_webhook_events(request: Request, signed: Acting, body: EndpointEventsBody,
                       endpoint_id: str = ENDPOINT_ID) -> dict:
    """Change the events an endpoint is sent, in place: its URL, signing secret, on/off state and
    delivery log stay. Events fanned out after the change follow the new list (those of earlier
    card moves already delivered or owed are not sent again, nor taken back)."""
    _owner(signed)
    changed = endpoints.set_events(runtime_of(request).store.webhook_endpoints, signed.person, endpoint_id,
                                   body.events, body.everyEvent is True)
    return endpoints.endpoint_view(changed)


@router.post("/settings/webhooks/{endpoint_id}/enable", response_model=EndpointView,
             responses=errors(401, 403, 404))
def enable_webhook(request: Request, signed: Acting, endpoint_id: str = ENDPOINT_ID) -> dict:
    """Turn on again an endpoint that was turned off after a day of failed deliveries."""
    _owner(signed)
    enabled = runtime_of(request).store.webhook_endpoints.enable_endpoint(signed.workspace.id, endpoint_id)
    return endpoints.endpoint_view(enabled)


@router.post("/settings/webhooks/{endpoint_id}/disable", response_model=EndpointView,
             responses=errors(401, 403, 404))
def disable_webhook(request: Request, signed: Acting, endpoint_id: str = ENDPOINT_ID) -> dict:
    """Turn an endpoint off: nothing more is sent to it (deliveries still owed are dropped) until it
    is turned on again. One off already stays as it was."""
    _owner(signed)
    runtime = runtime_of(request)
    return endpoints.endpoint_view(runtime.store.webhook_endpoints.disable_endpoint(
        signed.workspace.id, endpoint_id, runtime.desk.now(), turned_off_by(signed.person.email)))


@router.get("/settings/webhooks/{endpoint_id}/deliveries", response_model=DeliveryList,
            responses=errors(401, 403, 404))
def webhook_deliveries(request: Request, signed: SignedIn, endpoint_id: str = ENDPOINT_ID) -> dict:
    """The endpoint's latest deliveries (at most 50), newest first: event, card, state, status code,
    attempts, when last tried and when it is tried next."""
    _owner(signed)
    found = runtime_of(request).store.webhook_deliveries.list_deliveries(signed.workspace.id, endpoint_id)
    return {"deliveries": [endpoints.delivery_view(d) for d in found]}

