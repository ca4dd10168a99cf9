"""The records a store holds. Plain data: no I/O, no store-specific fields.

Secrets are never stored in the clear: connections, sign-in tokens, sessions and codes are
kept as SHA-256 hashes (see :func:`secret_hash`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.cards import CardState, effective_state

ROLES = ("owner", "admin", "approver", "member")

DEFAULT_WORKSPACE_SETTINGS = {
    "ask_before_drafting": True,
    "ask_before_approvals": True,
    "confirm_in_client": True,
}

MAX_ARGUMENTS_BYTES = 64 * 1024

RUNNING_STALE_SECONDS = 300
STALE_RUNNING_MESSAGE = (
    "This action started but never reported its outcome; it may or may not have run. "
    "Check the current state before asking again."
)


def secret_hash(secret: str) -> str:
    """The only form in which a token, session id or code is stored."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    settings: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_WORKSPACE_SETTINGS))
    created_at: int = 0

    def setting(self, name: str) -> Any:
        return self.settings.get(name, DEFAULT_WORKSPACE_SETTINGS.get(name))


@dataclass(frozen=True)
class Person:
    id: str
    workspace_id: str
    email: str
    role: str = "member"
    name: str = ""
    agent_requests_email: bool = True
    created_at: int = 0


@dataclass(frozen=True)
class Connection:
    id: str
    workspace_id: str
    person_id: str
    name: str
    token_hash: str
    created_at: int = 0
    revoked_at: int | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


@dataclass(frozen=True)
class SignInToken:
    token_hash: str
    person_id: str
    workspace_id: str
    expires_at: int


@dataclass(frozen=True)
class Session:
    session_hash: str
    person_id: str
    workspace_id: str
    csrf_token: str
    created_at: int
    expires_at: int


@dataclass(frozen=True)
class Card:
    """A held call waiting on (or answered by) one person.

    ``state`` is the stored state; read it through :meth:`state_at` (or a store read, which
    already applies expiry) so that a pending card past ``expires_at`` reads as expired.
    """

    id: str
    workspace_id: str
    person_id: str
    connection_id: str
    tool: str
    arguments: dict[str, Any]
    subject: Any
    title: str
    lines: tuple[str, ...]
    fingerprint: str
    ticket: str
    state: CardState
    created_at: int
    expires_at: int
    updated_at: int = 0
    result: Any = None
    decline_reason: str | None = None
    refusal: str | None = None
    channel: str | None = None

    def state_at(self, now: int) -> CardState:
        return effective_state(self.state, self.expires_at, now)

    def at(self, now: int) -> "Card":
        """This card as a reader sees it at ``now``: expiry applied, and a card that started
        running long ago without reporting back (its process died mid-action) shown as failed
        with an honest "outcome unknown", instead of waiting forever."""
        state = self.state_at(now)
        if state is CardState.RUNNING and now - self.updated_at >= RUNNING_STALE_SECONDS:
            return replace(self, state=CardState.FAILED, result={"error": STALE_RUNNING_MESSAGE})
        return self if state is self.state else replace(self, state=state)


@dataclass(frozen=True)
class AuditEntry:
    """One transition of a card: who, when, through which channel, from which connection."""

    card_id: str
    workspace_id: str
    at: int
    event: str  # filed | confirmed | running | completed | failed | declined | withdrawn | expired | refused
    actor: str  # "person:<id>", "connection:<id>", "system"
    channel: str  # mcp | client | code | page | system
    connection_id: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Doc:
    """A toolset's record (an account, a transaction, a campaign...) with its version.

    Toolsets store their model as docs grouped by ``kind``; every write names the version it
    read, so a change that raced another is refused instead of lost.
    """

    kind: str
    id: str
    data: dict[str, Any]
    version: int


@dataclass(frozen=True)
class DocWrite:
    """Put ``data`` at ``kind/id`` if the stored version is still ``expected_version``.

    ``expected_version=0`` means "must not exist yet"; ``data=None`` deletes.
    """

    kind: str
    id: str
    data: dict[str, Any] | None
    expected_version: int
