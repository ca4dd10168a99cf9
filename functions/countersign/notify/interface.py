"""What a notifier hands to a sender: one :class:`Email`, and the :class:`Sender` contract.

A sender delivers exactly the email it is given (outbox folder, SMTP or SES) and raises
:class:`SendError` when it could not; it never composes, rate-limits or decides who gets mail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

DEFAULT_FROM_ADDRESS = "countersign@localhost"


@dataclass(frozen=True)
class Email:
    """One message to one person, with a plain-text and an HTML part."""

    to: str
    subject: str
    text: str
    html: str
    from_address: str = DEFAULT_FROM_ADDRESS


class SendError(Exception):
    """The email was not handed over. The message names why, and never carries the body."""


@runtime_checkable
class Sender(Protocol):
    """Delivers emails. ``from_address`` is the address it sends as."""

    from_address: str

    def send(self, email: Email) -> None:
        """Deliver ``email`` or raise :class:`SendError`."""
        ...
