"""Composing the sign-in email: the one email that carries a secret (the one-time token, in the
link's fragment). Pure, like :mod:`.message`: senders deliver it as they deliver card emails, never
log its body, and nothing here logs the link.
"""

from __future__ import annotations

import html

from .interface import DEFAULT_FROM_ADDRESS, Email

SUBJECT = "Your countersign sign-in link"


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


def compose_signin(to: str, link: str, from_address: str = DEFAULT_FROM_ADDRESS) -> Email:
    """The sign-in email to ``to`` carrying ``link``."""
    return Email(to=to, subject=SUBJECT, text=signin_text(link), html=signin_html(link), from_address=from_address)
