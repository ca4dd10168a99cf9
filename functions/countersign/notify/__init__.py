"""Email: the card notifications (docs/guarantees.md, "Notifications") and the sign-in email.

``from_settings(settings, store)`` builds the :class:`CardNotifier` a deployment uses, with the
sender ``COUNTERSIGN_MAIL`` names (:func:`sender_for`): ``outbox`` (files in ``DATA/outbox/``),
``smtp://...`` / ``smtps://...``, or ``ses:FROM_ADDRESS``. The card email is composed in
:mod:`.message`, the sign-in email in :mod:`.signin`; the same senders deliver both.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ..settings import Settings
from ..store import Store
from .card_emails import EVENTS, CardNotifier, PasskeyRule, SettingsSource
from .interface import DEFAULT_FROM_ADDRESS, Email, Sender, SendError
from .message import compose_pending, render
from .outbox import OutboxSender
from .ses import SesSender
from .signin import compose_signin
from .smtp import SmtpSender

__all__ = [
    "DEFAULT_FROM_ADDRESS",
    "EVENTS",
    "CardNotifier",
    "Email",
    "OutboxSender",
    "SendError",
    "Sender",
    "SesSender",
    "SmtpSender",
    "compose_pending",
    "compose_signin",
    "from_settings",
    "render",
    "sender_for",
]


def sender_for(mail: str, data_dir: Path, configuration_set: str | None = None) -> Sender:
    """The sender that ``COUNTERSIGN_MAIL=mail`` names (SES sends with ``configuration_set``)."""
    if mail == "outbox":
        return OutboxSender(Path(data_dir) / "outbox")
    if mail.startswith("smtp://") or mail.startswith("smtps://"):
        return SmtpSender(mail)
    if mail.startswith("ses:"):
        return SesSender(mail[len("ses:"):], configuration_set=configuration_set)
    raise ValueError(f"COUNTERSIGN_MAIL: expected outbox, smtp://HOST[:PORT] or ses:FROM_ADDRESS, got {mail!r}")


def from_settings(
    settings: Settings,
    store: Store,
    clock: Callable[[], float] = time.time,
    *,
    on_event: Callable[[str], None] | None = None,
    current_settings: SettingsSource | None = None,
    needs_passkey: PasskeyRule | None = None,
) -> CardNotifier:
    """The notifier for this deployment; ``current_settings`` (if given) is read at each card;
    ``needs_passkey``: the passkey policy's rule (:class:`CardNotifier`)."""
    sender = sender_for(settings.mail, settings.data_dir, settings.ses_configuration_set)
    return CardNotifier(store, sender, current_settings or settings, clock=clock, on_event=on_event,
                        needs_passkey=needs_passkey)
