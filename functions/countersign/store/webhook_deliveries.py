"""The webhook deliveries role: the events a workspace's cards owe its webhook endpoints (the
webhook outbox) and each delivery of one to one endpoint (its log). The endpoints themselves are
the :mod:`.webhook_endpoints` role.

:class:`WebhookDeliveryStore` is the interface both stores implement; :class:`WebhookEvent` and
:class:`WebhookDelivery` its records. An event is written by the card store in the very
transaction that moves its card (:meth:`~.cards.CardStore.file_card`,
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

from ..core.card_states import CardState

FILED, ANSWERED, COMPLETED, FAILED, LAPSED = "card.filed", "card.answered", "card.completed", "card.failed", \
    "card.lapsed"
EDITED = "card.edited"
EVENTS = (FILED, ANSWERED, COMPLETED, FAILED, LAPSED, EDITED)

LOG_SIZE = 50  # deliveries a log lists per endpoint (and at least as many each store keeps)

PENDING, SENDING, DELIVERED, GAVE_UP, DROPPED = "pending", "sending", "delivered", "failed", "dropped"
DELIVERY_STATES = (PENDING, SENDING, DELIVERED, GAVE_UP, DROPPED)


# -- records ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WebhookEvent:
    """One thing that happened to a card, owed to the workspace's endpoints (the webhook outbox).

    ``id`` is ``<card id>.<event>``: a card is filed, answered, completed, failed, lapses or is
    edited at most once. ``state`` is the card's state the event reports; ``at`` when it happened;
    ``due_at`` when it may be fanned out (a ``card.lapsed`` for a deadline is due at the deadline,
    and is dropped then if the card was answered, withdrawn or edited meanwhile)."""

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
    * edited by its person (replaced by a new pending card, filed in the same transaction with the
      events a filed card owes): ``card.edited`` now; its deadline's ``card.lapsed`` is moot then;
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
    elif target is CardState.EDITED and source is CardState.PENDING:
        out.append(one(EDITED, target, now))
    return out


# -- the role ---------------------------------------------------------------------------------------


class WebhookDeliveryStore(abc.ABC):
    """The events owed to a workspace's webhook endpoints, and their deliveries."""

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
