"""The suppressions role: addresses card emails no longer go to (bounces, complaints).

:class:`SuppressionStore` is the interface both stores implement; :class:`Suppression` its record,
:func:`check_suppression` the check both make. The rules every role keeps are stated in
:mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

from .errors import BadInput
from .workspaces import email_key

SUPPRESSION_REASONS = ("bounce", "complaint")


@dataclass(frozen=True)
class Suppression:
    """An address card emails no longer go to: it bounced for good, or its owner marked a card
    email as spam (SES's feedback, countersign.surfaces.background.feedback). ``email`` is
    lower-cased."""

    email: str
    reason: str  # bounce | complaint
    at: int
    detail: str | None = None  # SES's bounce subtype or complaint type, for the operator


class SuppressionStore(abc.ABC):
    """Addresses card emails no longer go to. Keyed by the lower-cased address, across workspaces
    (a person's address is unique in the service); one write or one read each."""

    @abc.abstractmethod
    def suppress_address(self, suppression: Suppression) -> None:
        """Record (or replace) the suppression of ``suppression.email`` (lower-cased by the caller:
        :class:`BadInput` otherwise, or for a reason not in ``SUPPRESSION_REASONS``)."""

    @abc.abstractmethod
    def address_suppression(self, email: str) -> Suppression | None:
        """The suppression of ``email`` (any case), if any."""

    @abc.abstractmethod
    def lift_suppression(self, email: str) -> None:
        """Card emails go to ``email`` again (nothing happens if it was not suppressed)."""


def check_suppression(suppression: Any) -> None:
    if suppression.reason not in SUPPRESSION_REASONS:
        raise BadInput("reason", f"unknown reason {suppression.reason!r}; expected one of "
                                 f"{', '.join(SUPPRESSION_REASONS)}.")
    email = suppression.email
    if not isinstance(email, str) or "@" not in email or email != email_key(email) or len(email) > 320:
        raise BadInput("email", "expected a lower-cased email address of at most 320 characters.")
