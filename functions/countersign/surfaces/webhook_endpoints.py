"""A workspace's webhook endpoints as its owners manage them: the same checks and views for the
Settings API (:mod:`.api.webhooks`) and ``countersign webhook`` (:mod:`countersign.cli.webhooks`).

Adding one checks where it points with the very rule the gateway holds upstream URLs to
(:func:`countersign.toolsets.gateway.config.check_url`: https, every address of the host public;
``COUNTERSIGN_UPSTREAM_PRIVATE`` allows http and private addresses, for tests and a home lab),
makes its signing secret (``whsec_`` + base64 of 32 random bytes), seals it with the
request-state keys and stores only the sealed text: the secret is in the answer to the addition
and nowhere else, ever. Every refusal is a :class:`~countersign.store.errors.BadInput` naming its
field, and nothing is written.
"""

from __future__ import annotations

from typing import Any

from ..core.ids import new_id
from ..core.times import iso
from ..notify.webhooks import new_secret, seal_secret, webhook_sealer
from ..settings import Settings
from ..store.errors import BadInput
from ..store.webhook_deliveries import EVENTS, PENDING, WebhookDelivery
from ..store.webhook_endpoints import (
    MAX_ENDPOINTS,
    MAX_URL,
    WebhookEndpoint,
    WebhookEndpointStore,
    check_events,
    turned_off_by_an_owner,
)
from ..store.workspaces import Person
from ..toolkit import ActionError

OWNER = "owner"
ONLY_OWNERS = "Only the workspace's owners manage its webhooks."


def may_manage(person: Person) -> bool:
    return person.role == OWNER


def add_endpoint(webhook_endpoints: WebhookEndpointStore, keys: list[bytes], settings: Settings, person: Person,
                 url: Any, events: Any, now: int) -> tuple[WebhookEndpoint, str]:
    """A new endpoint of ``person``'s workspace and its signing secret (shown once)."""
    # The gateway toolset's module when an endpoint is added, not at the API's cold start.
    from ..toolsets.gateway.config import check_url

    if not isinstance(url, str) or len(url) > MAX_URL:
        raise BadInput("url", f"an https URL of at most {MAX_URL} characters.")
    chosen = check_events(events)
    try:
        check_url(url, allow_private=settings.upstream_private, what="a webhook endpoint",
                  example="https://hooks.example.com/countersign",
                  credentials="a webhook URL carries no user name or password (check each request's signature "
                              "instead)")
    except ActionError as exc:
        raise BadInput("url", exc.message.removeprefix("url: ")) from None
    endpoint_id = new_id("wh_", now_ms=now * 1000)
    secret = new_secret()
    endpoint = WebhookEndpoint(
        id=endpoint_id, workspace_id=person.workspace_id, url=url, events=chosen,
        secret_sealed=seal_secret(webhook_sealer(keys), person.workspace_id, endpoint_id, secret),
        created_at=now, created_by=person.id,
    )
    return webhook_endpoints.add_endpoint(endpoint), secret


def set_events(webhook_endpoints: WebhookEndpointStore, person: Person, endpoint_id: str, events: Any,
               every_event: bool) -> WebhookEndpoint:
    """Change the events an endpoint of ``person``'s workspace takes, in place (its URL, secret,
    on/off state and delivery log stay): ``events``, a list checked as an addition checks it, or
    ``every_event`` (stored as an addition without events stores it: every event, those added
    later too), exactly one of them. Events fanned out after it follow the new list; deliveries
    already made are neither sent again nor taken back. :class:`~countersign.store.errors.NotFound`
    for an endpoint the workspace does not have."""
    if every_event and events is not None:
        raise BadInput("everyEvent", "send everyEvent: true (every event, those added later too) or a list of "
                                     "events, not both.")
    if not every_event and events is None:
        raise BadInput("events", f"name the events to send ({', '.join(EVENTS)}), or send everyEvent: true for "
                                 "every event, those added later too.")
    chosen = () if every_event else check_events(events)
    return webhook_endpoints.set_endpoint_events(person.workspace_id, endpoint_id, chosen)


def endpoint_view(e: WebhookEndpoint) -> dict[str, Any]:
    """What the Settings page and the CLI show of an endpoint (never its secret, sealed or not)."""
    return {
        "id": e.id, "url": e.url, "events": list(e.events_taken), "everyEvent": not e.events, "enabled": e.enabled,
        "createdAt": iso(e.created_at),
        "disabledAt": iso(e.disabled_at) if e.disabled_at is not None else None,
        "disabledReason": e.disabled_reason,
        "disabledBy": None if e.enabled else "owner" if turned_off_by_an_owner(e) else "failures",
        "failuresInARow": e.failures,
        "lastSuccessAt": iso(e.last_success_at) if e.last_success_at is not None else None,
    }


def delivery_view(d: WebhookDelivery) -> dict[str, Any]:
    """One line of an endpoint's delivery log."""
    return {
        "id": d.id, "event": d.event, "cardId": d.card_id, "state": d.state, "statusCode": d.status_code,
        "attempts": d.attempts, "createdAt": iso(d.created_at),
        "lastAttemptAt": iso(d.last_attempt_at) if d.last_attempt_at is not None else None,
        "nextRetryAt": iso(d.due_at) if d.state == PENDING and d.attempts else None,
        "error": d.error,
    }


def listing(webhook_endpoints: WebhookEndpointStore, workspace_id: str) -> dict[str, Any]:
    return {"endpoints": [endpoint_view(e) for e in webhook_endpoints.list_endpoints(workspace_id)],
            "events": list(EVENTS), "limit": MAX_ENDPOINTS}
