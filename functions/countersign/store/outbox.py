"""The outbox role: the notifications filed cards owe (the transactional outbox).

:class:`OutboxStore` is the interface both stores implement; :class:`Notification` its record. A
notification is written with its card (:meth:`~.cards.CardStore.file_card`) and delivered at least
once by whoever leases it. The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

NOTIFY_PENDING, NOTIFY_SENDING, NOTIFY_DONE = "pending", "sending", "done"


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
    def due_notifications(self, now: int, limit: int = 50) -> list[Notification]:
        """Notifications not done that may be tried at ``now`` (due, or with a lapsed lease), oldest first."""
