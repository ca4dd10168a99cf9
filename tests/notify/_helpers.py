"""Filing cards and reading emails for the notification tests."""

from __future__ import annotations

import dataclasses
from email.message import EmailMessage
from typing import Any

from countersign.notify import Email
from countersign.store.workspaces import Person
from tests.store._factories import DAY, World, card, filed


def file_card(world: World, at: float, title: str = "Add a transaction", who: Person | None = None, **changes: Any):
    """File a pending card for ``who`` (default: the world's person) at time ``at``."""
    c = card(world.ws, who or world.person, world.conn, created_at=int(at), ttl=DAY)
    c = dataclasses.replace(c, title=title, **changes)
    world.store.cards.file_card(c, filed(c))
    return c


def parts(msg: EmailMessage) -> tuple[str, str]:
    """(text, html) of a parsed email."""
    return msg.get_body(("plain",)).get_content(), msg.get_body(("html",)).get_content()


class Recorder:
    """A sender that keeps what it is given (for composition tests)."""

    from_address = "countersign@localhost"

    def __init__(self):
        self.emails: list[Email] = []

    def send(self, email: Email) -> None:
        self.emails.append(email)
