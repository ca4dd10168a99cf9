"""Who asked for a card, and the words the confirm page and the card email say it in.

A card is filed by an agent (through its connection), by a member from the confirm page's
Settings (a passkey policy change, an upstream change), or from the command line
(``countersign upstream``). The store keeps it on the card as an actor, the way the audit trail
names actors: ``connection:<id>``, ``person:<id>`` or ``cli``.
"""

from __future__ import annotations

from dataclasses import dataclass

AGENT = "agent"
PERSON = "person"
CLI = "cli"

_PREFIXES = {"connection:": AGENT, "person:": PERSON}


@dataclass(frozen=True)
class Asker:
    """``kind`` is :data:`AGENT`, :data:`PERSON` or :data:`CLI`; ``id`` the connection's id (an
    agent) or the member's (a person), ``""`` for the command line."""

    kind: str
    id: str = ""

    @property
    def actor(self) -> str:
        """As the audit trail and the card record name it."""
        if self.kind == AGENT:
            return f"connection:{self.id}"
        if self.kind == PERSON:
            return f"person:{self.id}"
        return CLI

    @classmethod
    def of_actor(cls, actor: str) -> Asker:
        """The asker an :attr:`actor` names; :class:`ValueError` for anything else."""
        if actor == CLI:
            return cls(CLI)
        for prefix, kind in _PREFIXES.items():
            if actor.startswith(prefix) and len(actor) > len(prefix):
                return cls(kind, actor[len(prefix):])
        raise ValueError(f"{actor!r} is not who files a card (connection:<id>, person:<id> or cli)")


def agent(connection_id: str) -> Asker:
    return Asker(AGENT, connection_id)


def person(person_id: str) -> Asker:
    return Asker(PERSON, person_id)


COMMAND_LINE = Asker(CLI)


def asked_by(kind: str, name: str | None, you: bool = False) -> str:
    """Who asked, as the page's card and the card email say it: an agent by its connection's
    name, a member by name ("You" to themselves), the command line as an owner's."""
    if kind == PERSON:
        return "You, from Settings" if you else f"{name or 'A member'}, from Settings"
    if kind == CLI:
        return "An owner, from the command line"
    return f"Asked by {name or 'an agent'}"
