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
MANAGERS = ("owner", "admin")  # the roles that run the workspace: its settings, members, upstreams

DEFAULT_WORKSPACE_SETTINGS = {
    "ask_before_drafting": True,
    "ask_before_approvals": True,
    "confirm_in_client": True,
}

# Settings with a choice of values rather than on/off, and their values; the first is the default.
WORKSPACE_CHOICES: dict[str, tuple[str, ...]] = {
    # When Confirm needs the person's passkey (countersign.gate.passkey_policy): never, for cards that
    # spend, send, grant or cannot be undone, or for every card. Changed only through a held request.
    "passkey_policy": ("never", "risky", "every"),
}
SETTING_DEFAULTS: dict[str, Any] = {**DEFAULT_WORKSPACE_SETTINGS, **{k: v[0] for k, v in WORKSPACE_CHOICES.items()}}

MAX_ARGUMENTS_BYTES = 64 * 1024


def secret_hash(secret: str) -> str:
    """The only form in which a token, session id or code is stored."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def request_key(workspace_id: str, person_id: str, tool: str, fingerprint: str) -> str:
    """One request: the same tool with the same fingerprint, waiting on the same person in one
    workspace. At most one card per request is live (pending, or running) at any time."""
    return hashlib.sha256("\x1f".join((workspace_id, person_id, tool, fingerprint)).encode("utf-8")).hexdigest()


def ticket_digest(ticket: str) -> str:
    """How a spent ticket is remembered (never the ticket itself)."""
    return hashlib.sha256(("countersign-ticket:" + ticket).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    settings: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_WORKSPACE_SETTINGS))
    created_at: int = 0

    def setting(self, name: str) -> Any:
        return self.settings.get(name, SETTING_DEFAULTS.get(name))


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
    # Every write of the card adds one: each transition is conditional on the version it read.
    version: int = 1
    # While an action with several steps runs: {"steps": [labels], "done": n, "outside": label|None}.
    run: dict[str, Any] | None = None
    # While running: until when the runner holds the card. Past it, recovery settles the card.
    lease_until: int | None = None
    # Confirmed with a passkey: the verified assertion over the card's statement
    # (countersign.identity.passkeys.evidence), written with the card's move out of pending.
    passkey: dict[str, Any] | None = None

    @property
    def request_key(self) -> str:
        return request_key(self.workspace_id, self.person_id, self.tool, self.fingerprint)

    def state_at(self, now: int) -> CardState:
        return effective_state(self.state, self.expires_at, now)

    def at(self, now: int) -> Card:
        """This card as a reader sees it at ``now``: a pending card past its deadline is expired."""
        state = self.state_at(now)
        return self if state is self.state else replace(self, state=state)

    def live_at(self, now: int) -> bool:
        """Whether this card still holds its request: pending before its deadline, or running."""
        return self.state_at(now) in (CardState.PENDING, CardState.RUNNING)

    def decided_at(self) -> int:
        """When this card stopped waiting: its last move, or its deadline if it lapsed untouched."""
        if self.state is CardState.EXPIRED and self.updated_at < self.expires_at:
            return self.expires_at
        return self.updated_at


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


@dataclass(frozen=True)
class SettingWrite:
    """Set the workspace setting ``name`` to ``value`` if it still reads ``expected`` (on/off
    settings take booleans, choice settings one of their :data:`WORKSPACE_CHOICES`)."""

    name: str
    expected: bool | str
    value: bool | str


@dataclass(frozen=True)
class WorkspaceNameWrite:
    """Rename the workspace to ``name`` if it is still called ``expected``."""

    expected: str
    name: str


@dataclass(frozen=True)
class RoleWrite:
    """Give ``person_id`` the role ``role`` if their role is still ``expected``."""

    person_id: str
    expected: str
    role: str


Write = DocWrite | SettingWrite | WorkspaceNameWrite | RoleWrite
"""What an action's effect writes. Every write names what it expects to find, so a write that
raced another is refused (:class:`~countersign.store.errors.Conflict`), never lost."""


@dataclass(frozen=True)
class CardCommit:
    """One transaction on one card: its move to ``target`` and everything that goes with it.

    * ``card`` is the card as the caller read it (its ``version`` is the condition), or, when
      ``new`` is set, a card that does not exist yet and is filed already decided (an answer given
      in the client with no card waiting): it must then win its request like any filing.
    * ``writes`` — the action's effect: committed with the card or not at all.
    * ``audit`` — the entries of this move (a new card's ``filed`` entry first).
    * Leaving ``pending`` spends the card's ticket in the same transaction; a spent ticket never
      moves a card again, even if the card's state was set back by hand.
    * Leaving the live states releases the card's request, so an identical call files anew.
    * ``step``: the runner of an action of several steps records one more (``running → running``).
    """

    card: Card
    target: CardState
    now: int
    audit: tuple[AuditEntry, ...]
    writes: tuple[Write, ...] = ()
    result: Any = None
    decline_reason: str | None = None
    refusal: str | None = None
    channel: str | None = None
    run: dict[str, Any] | None = None
    lease_until: int | None = None
    new: bool = False
    step: bool = False  # a further step of a running action: running → running, by its runner
    passkey: dict[str, Any] | None = None  # the verified passkey assertion this move was confirmed with
    # A ``new`` card answering a question put at ``asked_at``: its request is claimed only if no
    # card holds it and none was decided at or after ``asked_at`` (an older yes never overrides a
    # newer no); otherwise :class:`~countersign.store.errors.Taken` with that card, nothing written.
    asked_at: int | None = None
    # A single-use value (value, until) spent in the same transaction: if it was spent already,
    # :class:`~countersign.store.errors.Replayed` and nothing is written (:meth:`LimitStore.use_nonce`).
    nonce: tuple[str, int] | None = None

    def written(self) -> Card:
        """The card as this commit writes it (fields left None keep what an earlier move wrote)."""
        target = CardState(self.target)
        changes: dict[str, Any] = {
            "state": target, "updated_at": self.now, "version": 1 if self.new else self.card.version + 1,
            "lease_until": self.lease_until if target is CardState.RUNNING else None,
        }
        for name in ("result", "decline_reason", "refusal", "channel", "run", "passkey"):
            value = getattr(self, name)
            if value is not None:
                changes[name] = value
        return replace(self.card, **changes)


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


def listed(card: Card) -> Card:
    """``card`` as a listing gives it (:meth:`CardStore.list_pending_cards`, ``list_card_history``):
    what a list shows, without the arguments, subject, ticket, fingerprint and run a decision needs.
    Both stores list cards this way (DynamoDB's index projects no more); read a card with
    ``get_card`` before acting on it."""
    return replace(card, arguments={}, subject=None, fingerprint="", ticket="", run=None)


SUPPRESSION_REASONS = ("bounce", "complaint")


@dataclass(frozen=True)
class Suppression:
    """An address card emails no longer go to: it bounced for good, or its owner marked a card
    email as spam (SES's feedback, countersign.surfaces.background.feedback). ``email`` is lower-cased."""

    email: str
    reason: str  # bounce | complaint
    at: int
    detail: str | None = None  # SES's bounce subtype or complaint type, for the operator


@dataclass(frozen=True)
class Passkey:
    """A person's registered WebAuthn credential (countersign.identity.passkeys). Ids and keys are base64url."""

    credential_id: str
    workspace_id: str
    person_id: str
    user_handle: str  # the user.id given at registration; an assertion's userHandle must equal it
    public_key: str  # COSE_Key, as verified at registration
    name: str
    created_at: int
    sign_count: int = 0
    last_used_at: int | None = None
    transports: tuple[str, ...] = ()


@dataclass(frozen=True)
class PasskeyChallenge:
    """A WebAuthn challenge the server issued: single use, short-lived, kept only by its hash.

    ``purpose`` is register, signin, remove or confirm; ``statement`` (confirm only) is the exact
    canonical JSON whose SHA-256 is the challenge. ``person_id`` is empty for a sign-in."""

    challenge_hash: str
    purpose: str
    workspace_id: str
    person_id: str
    challenge: str  # base64url of the challenge bytes
    expires_at: int
    card_id: str = ""
    statement: str = ""
