"""The outbox role: the notifications filed cards owe (the transactional outbox).

:class:`OutboxStore` is the interface both stores implement; :class:`Notification` its record. A
notification is written with its card (:meth:`~.cards.CardStore.file_card`) and delivered at least
once by whoever leases it. A *digest check* is a notification of no card: after an email, the
cards filed for its person while the interval runs are told of when it ends
(:func:`digest_id`, :meth:`OutboxStore.add_notification`). The rules every role keeps are stated
in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

from .errors import BadInput

NOTIFY_PENDING, NOTIFY_SENDING, NOTIFY_DONE = "pending", "sending", "done"
DIGEST_PREFIX = "digest."  # card ids are letters and digits: a digest check's id is never a card's
MAX_LISTED = 500  # card ids a digest check remembers as told already


def digest_id(person_id: str, claimed_at: int) -> str:
    """The id of the digest check that follows the email a person's slot claimed at ``claimed_at``
    sent: one per person per claim, so every process that tries to add it adds the same one."""
    return f"{DIGEST_PREFIX}{person_id}.{claimed_at}"


def audience_digest_id(person_id: str, card_id: str) -> str:
    """The id of the digest check that tells ``person_id`` that ``card_id``, which they were added
    to (a quorum's eligible member, an escalation), waits: one per person per card."""
    return f"{DIGEST_PREFIX}{person_id}.{card_id}"


def audience_notification(person_id: str, card: Any, now: int) -> Notification:
    """That digest check (:func:`audience_digest_id`), due ``now``: it lists what waits on the
    person, filed since ``card`` was, with ``card`` among it."""
    return Notification(audience_digest_id(person_id, card.id), card.workspace_id, person_id, card.created_at,
                        due_at=now)


def is_digest(card_id: str) -> bool:
    return card_id.startswith(DIGEST_PREFIX)


# A quiet-hours wait: the cards a channel that shows each card at once (Slack, push) held for one
# person while their quiet hours ran, shown when they end (docs/channels.md, "Quiet hours"). A
# notification of no card, due when the quiet hours end; ``listed`` the cards held.
QUIET_PREFIX = "quiet."
QUIET_CHANNELS = ("slack", "push")


def quiet_wait_id(channel: str, person_id: str, until: int) -> str:
    """The id of the wait for ``channel``'s cards of ``person_id`` until their quiet hours end at
    ``until``: one per channel, person and quiet hours, so every card held for them joins it."""
    return f"{QUIET_PREFIX}{channel}.{person_id}.{until}"


def is_quiet_wait(notification_id: str) -> bool:
    return notification_id.startswith(QUIET_PREFIX)


def quiet_wait_channel(notification_id: str) -> str:
    """The channel a quiet-hours wait is for ("slack", "push")."""
    return notification_id[len(QUIET_PREFIX):].split(".", 1)[0]


# A card's reminder (docs/policy.md, "Lifetimes, reminders and lapses") is a notification of its own,
# filed with the card when its lifetime has one, due ``remind_before`` its deadline.
REMINDER_PREFIX = "remind."


def reminder_id(card_id: str) -> str:
    """The id of ``card_id``'s reminder: one per card, so it is filed and sent at most once."""
    return f"{REMINDER_PREFIX}{card_id}"


def is_reminder(notification_id: str) -> bool:
    return notification_id.startswith(REMINDER_PREFIX)


def reminded_card(notification_id: str) -> str:
    """The card a reminder's notification is about."""
    return notification_id[len(REMINDER_PREFIX):]


def card_reminder(card_id: str, workspace_id: str, person_id: str, filed_at: int,
                  lifetime: dict | None) -> Notification | None:
    """The reminder a card filed with ``lifetime`` owes (None when it has none)."""
    due = (lifetime or {}).get("remind_at")
    if not isinstance(due, int):
        return None
    return Notification(reminder_id(card_id), workspace_id, person_id, filed_at, due_at=due)


@dataclass(frozen=True)
class Notification:
    """The email a filed card owes its person (the transactional outbox).

    Recorded in the same transaction as the card, delivered at least once by a sender that leases
    it (``pending → sending → done``); ``due_at`` is when it may next be tried.
    """

    card_id: str
    workspace_id: str
    person_id: str
    created_at: int
    state: str = NOTIFY_PENDING
    due_at: int = 0
    attempts: int = 0
    lease_until: int = 0
    outcome: str | None = None
    done_at: int | None = None
    # A digest check's: the cards filed since ``created_at`` that the email before it told of already
    listed: tuple[str, ...] = ()


class OutboxStore(abc.ABC):
    """The notifications filed cards owe (the transactional outbox): written with the card by
    :meth:`CardStore.file_card`, delivered at least once by whoever leases them."""

    @abc.abstractmethod
    def get_notification(self, card_id: str) -> Notification | None: ...

    @abc.abstractmethod
    def lease_notification(self, card_id: str, now: int, lease_seconds: int) -> Notification | None:
        """Take the notification to deliver it: ``pending`` (due) or ``sending`` with a lapsed
        lease becomes ``sending`` until ``now + lease_seconds``. None if it is done, not due, or
        another sender holds it. One conditional write."""

    @abc.abstractmethod
    def finish_notification(self, card_id: str, now: int, outcome: str) -> None:
        """``sending → done`` with its outcome (sent, rate limited, disabled, nothing pending...)."""

    @abc.abstractmethod
    def retry_notification(self, card_id: str, now: int, due_at: int) -> None:
        """``sending → pending`` after a failed send, due again at ``due_at`` (one more attempt counted)."""

    @abc.abstractmethod
    def add_notification(self, n: Notification) -> bool:
        """Record a digest check (``n.card_id`` a :func:`digest_id`), pending and due at
        ``n.due_at``; False, and nothing written, if one of that id exists. One conditional write.
        :class:`BadInput` for a card's id, more than :data:`MAX_LISTED` ids or a state but pending."""

    @abc.abstractmethod
    def defer_notification(self, card_id: str, due_at: int) -> None:
        """``sending → pending``, due at ``due_at``, no attempt counted (quiet hours: it waits,
        nothing failed)."""

    @abc.abstractmethod
    def hold_for_quiet_hours(self, wait: Notification, card_id: str) -> bool:
        """Add ``card_id`` to the quiet-hours wait ``wait`` (:func:`quiet_wait_id`), recording the
        wait pending and due at ``wait.due_at`` if it is not yet. True if the card is listed (again:
        a card held twice is listed once); False, and nothing written, if the wait is no longer
        pending (taken: its cards were shown) or lists :data:`MAX_LISTED` cards already. One
        conditional write. :class:`BadInput` for an id that is no quiet-hours wait."""

    @abc.abstractmethod
    def take_notification(self, card_id: str, now: int, outcome: str) -> Notification | None:
        """``pending`` and due at ``now`` → ``done`` with ``outcome``, in one conditional write,
        before anything is sent (at most once: whoever takes it delivers it; of two takers one
        gets it). The notification taken, or None if it is not due, not pending, or gone."""

    @abc.abstractmethod
    def due_notifications(self, now: int, limit: int = 50) -> list[Notification]:
        """Notifications not done that may be tried at ``now`` (due, or with a lapsed lease), oldest first."""


def check_quiet_wait(wait: Notification, card_id: str) -> None:
    """A quiet-hours wait about to be held (:meth:`OutboxStore.hold_for_quiet_hours`)."""
    if not is_quiet_wait(wait.card_id) or quiet_wait_channel(wait.card_id) not in QUIET_CHANNELS:
        raise BadInput("card_id", "a quiet-hours wait's id is quiet.<channel>.<person>.<end>.")
    if wait.state != NOTIFY_PENDING or wait.attempts or wait.outcome is not None or wait.listed:
        raise BadInput("state", "a quiet-hours wait is held pending, never tried, its cards added one by one.")
    if not isinstance(card_id, str) or not card_id or is_quiet_wait(card_id) or is_digest(card_id):
        raise BadInput("card_id", "a card's id.")


def check_notification(n: Notification) -> None:
    """A digest check about to be added (:meth:`OutboxStore.add_notification`)."""
    if not is_digest(n.card_id):
        raise BadInput("card_id", "only a digest check is added on its own; a card's notification is filed "
                                  "with the card.")
    if n.state != NOTIFY_PENDING or n.attempts or n.outcome is not None:
        raise BadInput("state", "a digest check is added pending, never tried.")
    if len(n.listed) > MAX_LISTED or not all(isinstance(c, str) for c in n.listed):
        raise BadInput("listed", f"at most {MAX_LISTED} card ids.")
