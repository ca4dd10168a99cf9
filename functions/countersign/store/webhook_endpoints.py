"""The webhook endpoints role: where a workspace's card events are posted, and how each endpoint's
attempts have gone. The events and their deliveries are the :mod:`.webhook_deliveries` role.

:class:`WebhookEndpointStore` is the interface both stores implement; :class:`WebhookEndpoint` its
record; :func:`check_endpoint` and :func:`check_events` its checks. An endpoint whose attempts have
all failed for long enough is turned off (:meth:`WebhookEndpointStore.record_attempt`), and so is
one an owner turns off (:func:`turned_off_by`). The rules every role keeps are stated in
:mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..core.times import iso
from .errors import BadInput
from .webhook_deliveries import EDITED, EVENTS

MAX_ENDPOINTS = 5  # per workspace
MAX_URL = 2048


# -- records ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WebhookEndpoint:
    """Where a workspace's card events are posted, signed with the endpoint's own secret.

    ``secret_sealed`` is the signing secret sealed with the server's request-state keys
    (:mod:`countersign.core.sealing`); it is shown once, when made, and never again. An endpoint
    whose attempts have all failed for long enough is turned off (``enabled`` false,
    ``disabled_at``, ``disabled_reason``) until an owner turns it on again."""

    id: str
    workspace_id: str
    url: str
    events: tuple[str, ...]  # in the order of EVENTS; empty: every event, those added later too
    secret_sealed: str
    created_at: int
    created_by: str  # the person who added it
    enabled: bool = True
    disabled_at: int | None = None
    disabled_reason: str | None = None
    failing_since: int | None = None  # the first failed attempt since the last success
    failures: int = 0  # failed attempts in a row
    last_success_at: int | None = None

    def takes(self, event: str) -> bool:
        """Whether ``event`` is posted to it."""
        return not self.events or event in self.events

    @property
    def events_taken(self) -> tuple[str, ...]:
        """The events it is sent now (every one, for an endpoint that takes every event)."""
        return self.events or EVENTS


# Every event there was before card.edited. An endpoint written before its events were stored
# exactly (no ``events_exact`` mark) with exactly these was added when "every event" was stored as
# the list of them, so it takes every event (card.edited and any later). Every endpoint added or
# changed since is marked, and its list means that list: every event but card.edited is a choice.
BEFORE_EDITED = tuple(e for e in EVENTS if e != EDITED)


def stored_events(events: Any, exact: bool) -> tuple[str, ...]:
    """An endpoint's events as a store read them; ``exact``: the endpoint's ``events_exact`` mark
    (see :data:`BEFORE_EDITED`)."""
    events = tuple(events or ())
    return () if not exact and events == BEFORE_EDITED else events


def disabled_reason(failures: int, since: int) -> str:
    """Why an endpoint was turned off, as its owner is told."""
    return f"every attempt failed since {iso(since)} ({failures} in a row)"


TURNED_OFF_BY = "turned off by "


def turned_off_by(email: str) -> str:
    """Why an endpoint an owner turned off is off (:meth:`WebhookEndpointStore.disable_endpoint`)."""
    return TURNED_OFF_BY + email


def turned_off_by_an_owner(endpoint: WebhookEndpoint) -> bool:
    """Whether an owner turned ``endpoint`` off (else its failures did, and the owners were emailed)."""
    return not endpoint.enabled and (endpoint.disabled_reason or "").startswith(TURNED_OFF_BY)


# -- the role ---------------------------------------------------------------------------------------


class WebhookEndpointStore(abc.ABC):
    """A workspace's webhook endpoints."""

    # -- endpoints ---------------------------------------------------------------------------------

    @abc.abstractmethod
    def add_endpoint(self, endpoint: WebhookEndpoint) -> WebhookEndpoint:
        """Store a new endpoint (:func:`check_endpoint` first). :class:`BadInput` (field ``url``) if
        the workspace has :data:`MAX_ENDPOINTS` already — counted in the same transaction, so two
        additions at once cannot both pass the limit — and nothing is written."""

    @abc.abstractmethod
    def list_endpoints(self, workspace_id: str) -> list[WebhookEndpoint]:
        """The workspace's endpoints, oldest first."""

    @abc.abstractmethod
    def get_endpoint(self, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
        """:class:`NotFound` if unknown or in another workspace."""

    @abc.abstractmethod
    def remove_endpoint(self, workspace_id: str, endpoint_id: str) -> None:
        """Delete it (its deliveries still owed are dropped when next tried); :class:`NotFound` if unknown."""

    @abc.abstractmethod
    def set_endpoint_events(self, workspace_id: str, endpoint_id: str, events: tuple[str, ...]) -> WebhookEndpoint:
        """Change the events an endpoint takes (:func:`check_taken` first; ``()``: every event, those
        added later too, as :meth:`add_endpoint` stores it), in one conditional write: its URL,
        secret, on/off state, failures and delivery log stay as they were, and so does the
        workspace's count of endpoints that tells a filed card whether it owes events
        (:attr:`~countersign.store.cards.Card.webhooks`): an endpoint still takes at least one
        event. Events fanned out from then on follow the new list; deliveries made already stay.
        :class:`NotFound` if unknown or in another workspace; :class:`BadInput` (field
        ``events``) for an unknown event, and nothing is written."""

    @abc.abstractmethod
    def enable_endpoint(self, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
        """Turn a disabled endpoint on again, its failures forgotten; :class:`NotFound` if unknown."""

    @abc.abstractmethod
    def disable_endpoint(self, workspace_id: str, endpoint_id: str, now: int, reason: str) -> WebhookEndpoint:
        """Turn an endpoint off (an owner's choice; ``reason`` as :func:`turned_off_by` says it):
        no new deliveries are made for it and those still owed are dropped when next tried, until
        it is turned on again. An endpoint off already stays as it was. :class:`NotFound` if unknown."""

    @abc.abstractmethod
    def record_attempt(self, workspace_id: str, endpoint_id: str, now: int, ok: bool, *,
                       disable_after: int, min_failures: int) -> tuple[WebhookEndpoint, bool] | None:
        """Count one attempt: a success clears the failures; a failure adds one, and if every
        attempt since ``failing_since`` failed, for at least ``disable_after`` seconds and
        ``min_failures`` attempts, turns the endpoint off. Returns (the endpoint, whether this very
        attempt turned it off: exactly one caller is told), or None if the endpoint is gone."""


# -- checks -----------------------------------------------------------------------------------------


def check_events(events: Any) -> tuple[str, ...]:
    """The events an endpoint takes, in the order of :data:`EVENTS` (none given: ``()``, every
    one, those added later too; a list names exactly those it takes)."""
    if events is None:
        return ()
    if not isinstance(events, (list, tuple)) or not all(isinstance(e, str) for e in events):
        raise BadInput("events", f"a list of event names: {', '.join(EVENTS)}.")
    unknown = [e for e in events if e not in EVENTS]
    if unknown:
        raise BadInput("events", f"{unknown[0]!r} is no event a webhook is sent for; the events are "
                                 f"{', '.join(EVENTS)}.")
    if not events:
        raise BadInput("events", f"name at least one of {', '.join(EVENTS)}.")
    return tuple(e for e in EVENTS if e in events)


def check_taken(events: Any) -> tuple[str, ...]:
    """The events an endpoint is to take, as a store is handed them (:meth:`WebhookEndpointStore.set_endpoint_events`):
    ``()`` for every event, else known event names, refused as :func:`check_events` refuses them,
    returned in the order of :data:`EVENTS`."""
    return () if isinstance(events, (list, tuple)) and not events else check_events(events)


def check_endpoint(endpoint: WebhookEndpoint) -> None:
    """What the store itself holds an endpoint to (where it may point is checked before, by the
    caller that resolves its host): an http(s) URL of at most :data:`MAX_URL` characters, known
    events, a sealed secret."""
    url = endpoint.url
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or len(url) > MAX_URL or parts.scheme not in ("https", "http") or not parts.hostname:
        raise BadInput("url", f"an https URL of at most {MAX_URL} characters.")
    if endpoint.events and tuple(endpoint.events) != check_events(list(endpoint.events)):
        raise BadInput("events", f"a list of event names: {', '.join(EVENTS)}.")
    if not endpoint.secret_sealed:
        raise BadInput("secret", "an endpoint needs its sealed signing secret.")
