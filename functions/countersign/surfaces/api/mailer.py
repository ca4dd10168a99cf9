"""Sending the sign-in link. The API depends only on :class:`SigninMailer`; the default composes
the email here and hands it to the notifier's sender for ``COUNTERSIGN_MAIL`` (outbox folder,
SMTP or SES), so sign-in links travel exactly like card notifications.

The sign-in email is the one email that carries a secret (the one-time token, in the link's
fragment); senders never log a body, and nothing here logs the link.
"""

from __future__ import annotations

import html
from typing import Protocol

from ...notify import Email, Sender, sender_for
from ...runtime import Runtime

SUBJECT = "Your countersign sign-in link"


class SigninMailer(Protocol):
    def send_signin(self, person_email: str, link: str) -> None:
        """Deliver ``link`` (which carries a one-time token) to ``person_email``."""


def signin_text(link: str) -> str:
    return (
        "Someone (hopefully you) asked to sign in to countersign with this address.\n\n"
        f"Open this link, then press the button on the page to sign in:\n{link}\n\n"
        "The link works once, for the next 15 minutes. If you did not ask for it, ignore this email:\n"
        "nobody can sign in without opening it.\n"
    )


def signin_html(link: str) -> str:
    safe = html.escape(link, quote=True)
    return (
        "<!doctype html><html><body>"
        "<p>Someone (hopefully you) asked to sign in to countersign with this address.</p>"
        f"<p><a href=\"{safe}\">Open the sign-in page</a>, then press the button on the page to sign in.</p>"
        "<p>The link works once, for the next 15 minutes. If you did not ask for it, ignore this email: "
        "nobody can sign in without opening it.</p>"
        "</body></html>"
    )


def compose_signin(person_email: str, link: str, from_address: str) -> Email:
    return Email(to=person_email, subject=SUBJECT, text=signin_text(link), html=signin_html(link),
                 from_address=from_address)


class SenderSigninMailer:
    """Sign-in emails through a notifier :class:`~countersign.notify.Sender`."""

    def __init__(self, sender: Sender):
        self.sender = sender

    def send_signin(self, person_email: str, link: str) -> None:
        self.sender.send(compose_signin(person_email, link, self.sender.from_address))


def default_mailer(runtime: Runtime) -> SigninMailer:
    settings = runtime.settings
    return SenderSigninMailer(sender_for(settings.mail, settings.data_dir, settings.ses_configuration_set))
