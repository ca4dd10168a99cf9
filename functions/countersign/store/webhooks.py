"""The webhooks role: a workspace's webhook endpoints, the events its cards owe them (the webhook
outbox) and each delivery to each endpoint (its log).

:class:`WebhookStore` is the interface both stores implement; :class:`WebhookEndpoint`,
:class:`WebhookEvent` and :class:`WebhookDelivery` its records. An event is written by the card
store in the very transaction that moves its card (:meth:`~.cards.CardStore.file_card`,
:meth:`~.cards.CardStore.commit_card`, through :func:`card_events`), when the workspace has an
endpoint; nothing is sent there. A deliverer later fans it out — one delivery per enabled endpoint
that takes the event, written in one transaction with the event marked done, so each (event,
endpoint) gets exactly one delivery id however often the fan-out is tried — and sends each
delivery, at least once, under a lease (``pending → sending → delivered | failed | dropped``). The
rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..core.card_states import CardState
from ..core.times import iso
from .errors import BadInput

FILED, ANSWERED, COMPLETED, FAILED, LAPSED = "card.filed", "card.answered", "card.completed", "card.failed", \
    "card.lapsed"
EVENTS = (FILED, ANSWERED, COMPLETED, FAILED, LAPSED)

MAX_ENDPOINTS = 5  # per workspace
MAX_URL = 2048
LOG_SIZE = 50  # deliveries a log lists per endpoint (and at least as many each store keeps)

PENDING, SENDING, DELIVERED, GAVE_UP, DROPPED = "pending", "sending", "delivered", "failed", "dropped"
DELIVERY_STATES = (PENDING, SENDING, DELIVERED, GAVE_UP, DROPPED)


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
    events: tuple[str, ...]
    secret_sealed: str
    created_at: int
    created_by: str  # the person who added it
    enabled: bool = True
    disabled_at: int | None = None
    disabled_reason: str | None = None
    failing_since: int | None = None  # the first failed attempt since the last success
    failures: int = 0  # failed attempts in a row
    last_success_at: int | None = None


@dataclass(frozen=True)
class WebhookEvent:
    """One thing that happened to a card, owed to the workspace's endpoints (the webhook outbox).

    ``id`` is ``<card id>.<event>``: a card is filed, answered, completed, failed or lapses at most
    once. ``state`` is the card's state the event reports; ``at`` when it happened; ``due_at`` when
    it may be fanned out (a ``card.lapsed`` for a deadline is due at the deadline, and is dropped then
    if the card was answered meanwhile)."""

    id: str
    workspace_id: str
    card_id: str
    event: str
    state: str
    at: int
    due_at: int
    done: bool = False


@dataclass(frozen=True)
class WebhookDelivery:
    """One event posted to one endpoint: its webhook id (the same on every retry), the payload it
    sends (built once), and how its attempts went (the delivery log)."""

    id: str
    endpoint_id: str
    workspace_id: str
    event_id: str
    event: str
    card_id: str
    created_at: int
    payload: str  # the JSON body, exactly as sent (and signed)
    state: str = PENDING
    attempts: int = 0
    due_at: int = 0  # when it is tried next (while pending)
    lease_until: int = 0
    status_code: int | None = None  # of the last attempt (None: no answer)
    last_attempt_at: int | None = None
    error: str | None = None  # why the last attempt failed, in a few words


def event_id(card_id: str, event: str) -> str:
    return f"{card_id}.{event.removeprefix('card.')}"


def delivery_id(event_id: str, endpoint_id: str) -> str:
    """The webhook id of ``event_id`` at ``endpoint_id``: the same whenever it is computed."""
    digest = hashlib.sha256(f"{event_id}\x1f{endpoint_id}".encode()).hexdigest()[:32]
    return f"msg_{digest}"


def card_events(workspace_id: str, card_id: str, source: CardState | None, target: CardState, now: int,
                expires_at: int) -> list[WebhookEvent]:
    """The events a card's move owes (``source`` None: the card is filed, pending).

    * filed (waiting on its person): ``card.filed``, and a ``card.lapsed`` due at its deadline;
    * out of pending by an answer: ``card.answered`` (confirmed: running, completed or failed;
      or declined), then ``card.completed`` or ``card.failed`` once its action ran;
    * withdrawn (by its agent, or its connection revoked): ``card.lapsed`` now;
    * marked expired: nothing more (the deadline's ``card.lapsed`` reports it).
    """

    def one(event: str, state: CardState, at: int) -> WebhookEvent:
        return WebhookEvent(event_id(card_id, event), workspace_id, card_id, event, state.value, at, at)

    if source is None:
        return [one(FILED, CardState.PENDING, now), one(LAPSED, CardState.EXPIRED, expires_at)]
    out: list[WebhookEvent] = []
    if source is CardState.PENDING and target in (CardState.RUNNING, CardState.COMPLETED, CardState.FAILED,
                                                  CardState.DECLINED):
        out.append(one(ANSWERED, target, now))
    if target is CardState.COMPLETED:
        out.append(one(COMPLETED, target, now))
    elif target is CardState.FAILED:
        out.append(one(FAILED, target, now))
    elif target is CardState.WITHDRAWN:
        out.append(one(LAPSED, target, now))
    return out


def disabled_reason(failures: int, since: int) -> str:
    """Why an endpoint was turned off, as its owner is told."""
    return f"every attempt failed since {iso(since)} ({failures} in a row)"


TURNED_OFF_BY = "turned off by "


def turned_off_by(email: str) -> str:
    """Why an endpoint an owner turned off is off (:meth:`WebhookStore.disable_endpoint`)."""
    return TURNED_OFF_BY + email


def turned_off_by_an_owner(endpoint: WebhookEndpoint) -> bool:
    """Whether an owner turned ``endpoint`` off (else its failures did, and the owners were emailed)."""
    return not endpoint.enabled and (endpoint.disabled_reason or "").startswith(TURNED_OFF_BY)


# -- the role ---------------------------------------------------------------------------------------


class WebhookStore(abc.ABC):
    """Endpoints, the events owed to them, and their deliveries."""

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

    # -- events (written with their cards) --------------------------------------------------------

    @abc.abstractmethod
    def get_event(self, event_id: str) -> WebhookEvent | None: ...

    @abc.abstractmethod
    def due_events(self, now: int, limit: int = 50) -> list[WebhookEvent]:
        """Events not done whose ``due_at`` has come, oldest first."""

    @abc.abstractmethod
    def fan_out(self, event: WebhookEvent, deliveries: list[WebhookDelivery]) -> bool:
        """In one transaction: the event done and ``deliveries`` written (pending). False, and
        nothing written, if the event was done already (another deliverer fanned it out)."""

    # -- deliveries -------------------------------------------------------------------------------

    @abc.abstractmethod
    def get_delivery(self, delivery: WebhookDelivery) -> WebhookDelivery | None:
        """``delivery`` as stored now (None once gone)."""

    @abc.abstractmethod
    def lease_delivery(self, delivery: WebhookDelivery, now: int, lease_seconds: int) -> WebhookDelivery | None:
        """Take a delivery to send it: ``pending`` and due, or ``sending`` with a lapsed lease,
        becomes ``sending`` until ``now + lease_seconds``. None if it is finished, not due, or
        another deliverer holds it. One conditional write."""

    @abc.abstractmethod
    def finish_delivery(self, delivery: WebhookDelivery, now: int, state: str, *, status_code: int | None = None,
                        error: str | None = None, attempted: bool = True) -> None:
        """``sending →`` ``delivered``, ``failed`` (gave up) or ``dropped`` (its endpoint is gone or
        off), with the last attempt's answer (``attempted``: one more attempt counted)."""

    @abc.abstractmethod
    def retry_delivery(self, delivery: WebhookDelivery, now: int, due_at: int, *, status_code: int | None,
                       error: str | None) -> None:
        """``sending → pending`` after a failed attempt, due again at ``due_at`` (one more attempt counted)."""

    @abc.abstractmethod
    def due_deliveries(self, now: int, limit: int = 50) -> list[WebhookDelivery]:
        """Deliveries not finished that may be tried at ``now`` (due, or with a lapsed lease), oldest first."""

    @abc.abstractmethod
    def list_deliveries(self, workspace_id: str, endpoint_id: str, limit: int = LOG_SIZE) -> list[WebhookDelivery]:
        """The endpoint's latest deliveries, newest first (the delivery log); :class:`NotFound` if
        the endpoint is not the workspace's."""


# -- checks -----------------------------------------------------------------------------------------


def check_events(events: Any) -> tuple[str, ...]:
    """The events an endpoint takes, in the order of :data:`EVENTS` (none given: every one)."""
    if events is None:
        return EVENTS
    if not isinstance(events, (list, tuple)) or not all(isinstance(e, str) for e in events):
        raise BadInput("events", f"a list of event names: {', '.join(EVENTS)}.")
    unknown = [e for e in events if e not in EVENTS]
    if unknown:
        raise BadInput("events", f"{unknown[0]!r} is no event a webhook is sent for; the events are "
                                 f"{', '.join(EVENTS)}.")
    if not events:
        raise BadInput("events", f"name at least one of {', '.join(EVENTS)}.")
    return tuple(e for e in EVENTS if e in events)


def check_endpoint(endpoint: WebhookEndpoint) -> None:
    """What the store itself holds an endpoint to (where it may point is checked before, by the
    caller that resolves its host): an http(s) URL of at most :data:`MAX_URL` characters, known
    events, a sealed secret."""
    url = endpoint.url
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or len(url) > MAX_URL or parts.scheme not in ("https", "http") or not parts.hostname:
        raise BadInput("url", f"an https URL of at most {MAX_URL} characters.")
    if tuple(endpoint.events) != check_events(list(endpoint.events)):
        raise BadInput("events", f"a list of event names: {', '.join(EVENTS)}.")
    if not endpoint.secret_sealed:
        raise BadInput("secret", "an endpoint needs its sealed signing secret.")
