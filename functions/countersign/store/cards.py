"""The cards role: cards (held calls waiting on a person), their audit trail, the requests they
hold and the tickets they spent.

:class:`CardStore` is the interface both stores implement; :class:`Card`, :class:`AuditEntry` and
:class:`CardCommit` are its records. A filing writes the notification it owes
(:mod:`.outbox`) and the signing key it used (:mod:`.signing_keys`) in its own transaction; a
commit writes the effect's :data:`~.docs.Write` s and spends a nonce (:mod:`.limits`) in its own:
those stay one method of this role, over the database both share. The rules every role keeps are
stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.askers import AGENT, Asker
from ..core.canonical import canonical_bytes, canonical_json
from ..core.card_states import ANSWER_MEMORY_SECONDS, CardState, effective_state
from .docs import Write
from .errors import BadInput
from .limits import RequestCounts
from .standing_grants import GrantUse

MAX_ARGUMENTS_BYTES = 64 * 1024


def request_key(workspace_id: str, person_id: str, tool: str, fingerprint: str) -> str:
    """One request: the same tool with the same fingerprint, waiting on the same person in one
    workspace. At most one card per request is live (pending, or running) at any time."""
    return hashlib.sha256("\x1f".join((workspace_id, person_id, tool, fingerprint)).encode("utf-8")).hexdigest()


def ticket_digest(ticket: str) -> str:
    """How a spent ticket is remembered (never the ticket itself)."""
    return hashlib.sha256(("countersign-ticket:" + ticket).encode("utf-8")).hexdigest()


def stored_lines(card: Card) -> list[Any]:
    """A card's lines as both stores keep them: its sections, when it has any, follow its lines
    as one last ``{"sections": <canonical JSON>}`` element. So whatever carries a card's lines
    carries its sections (a listing too: DynamoDB's index projects ``lines``, and a new attribute
    could not be added to the projection of an index that exists). A card that more than one
    person may answer (:attr:`Card.shared`) is marked there too (``"shared": 1``): a listing from
    that index then knows to read it whole for its audience, quorum and votes. A card whose lapse
    counts as declined (:attr:`Card.lapses_as_declined`) is marked (``"lapse": "declined"``), so a
    listing can say what its lapse meant (:func:`listed`)."""
    kept: list[Any] = list(card.lines)
    extra: dict[str, Any] = {}
    if card.sections:
        extra[SECTIONS] = canonical_json(list(card.sections))
    if card.shared:
        extra[SHARED] = 1
    if card.lapses_as_declined:
        extra[LAPSE] = "declined"
    if extra:
        kept.append(extra)
    return kept


def lines_and_sections(kept: list[Any] | tuple[Any, ...] | None) -> tuple[tuple[str, ...], tuple[dict[str, Any], ...]]:
    """What :func:`stored_lines` kept, as a card's ``lines`` and ``sections``."""
    kept = list(kept or ())
    if kept and isinstance(kept[-1], dict):
        return tuple(kept[:-1]), tuple(json.loads(kept[-1].get(SECTIONS, "[]")))
    return tuple(kept), ()


def marked_shared(kept: list[Any] | tuple[Any, ...] | None) -> bool:
    """Whether :func:`stored_lines` marked the card as shared (:attr:`Card.shared`)."""
    kept = list(kept or ())
    return bool(kept and isinstance(kept[-1], dict) and kept[-1].get(SHARED))


def marked_lapse(kept: list[Any] | tuple[Any, ...] | None) -> dict[str, Any] | None:
    """What a listed card keeps of its lifetime (:attr:`Card.lifetime`), from the mark
    :func:`stored_lines` left: ``{"lapse": "declined"}``, or None (its lapse means expired)."""
    kept = list(kept or ())
    declined = bool(kept and isinstance(kept[-1], dict) and kept[-1].get(LAPSE) == "declined")
    return {LAPSE: "declined"} if declined else None


SECTIONS = "sections"
SHARED = "shared"
LAPSE = "lapse"
MAX_AUDIENCE = 25  # people besides its person who may answer one card (each one more write in its moves)


# -- records ----------------------------------------------------------------------------------------


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
    # The preview's sections (countersign.core.preview.Preview), bound by the ticket with the lines.
    sections: tuple[dict[str, Any], ...] = ()
    # Who filed it, as an actor (:class:`~countersign.core.askers.Asker`): ``connection:<id>`` (an
    # agent), ``person:<id>`` (a member, from Settings) or ``cli``. Read it as :attr:`asker`: a card
    # stored before this was recorded (None) reads as filed by its agent connection. Written once,
    # at filing; a listing leaves it out (:func:`listed`).
    filed_by: str | None = None
    # Whether its events are owed to the workspace's webhook endpoints (:mod:`.webhook_endpoints`): decided
    # when it is filed, from the workspace as the filing request read it (``Workspace.webhooks``),
    # so that no move of it reads anything more to know. None: the store finds out at each move
    # (SQLite inside the move's transaction; DynamoDB, which keeps a filed card's answer, by a read).
    webhooks: bool | None = field(default=None, compare=False)
    # A person's edit (docs/policy.md, "Edit, then approve"). On the card an edit filed:
    # {"from": <the card edited>, "by": person id, "byName", "original": <its arguments>,
    # "changes": [{"field", "label", "from", "to"}]}; on the card it replaced (state ``edited``):
    # {"into": <the new card>, "by", "byName", "changes"}. A listing leaves it out.
    edited: dict[str, Any] | None = None
    # The lifetime it was filed under, when the workspace has lifetime rules (docs/policy.md,
    # "Lifetimes, reminders and lapses"): {"wait": seconds, "lapse": "expired" | "declined",
    # "remind_at": when its reminder is due (absent: none)}. None: the deployment's default (expired).
    # A listing keeps only a lapse that counts as declined ({"lapse": "declined"}: History says so).
    lifetime: dict[str, Any] | None = None
    # Who else may see it in their waiting list and answer it, besides its person (person ids, never
    # its person's): a quorum's eligible members, members an escalation added (docs/policy.md).
    audience: tuple[str, ...] = ()
    # The quorum rule it falls under, as it stood when the card was filed (countersign.gate.quorum):
    # {"rule", "name", "needs", "of", "words", "decline", "eligible": [person ids]}; None: one yes runs it.
    quorum: dict[str, Any] | None = None
    # Each person's answer so far on a quorum card, in order: {"by", "name", "vote": "yes"|"no", "at",
    # "channel", "passkey": bool, "reason"?}. One per person; written by :meth:`CardStore.amend_card`
    # while it waits, the last yes with the move that runs it.
    votes: tuple[dict[str, Any], ...] = ()
    # Its escalation steps (countersign.gate.escalation), fixed when filed: {"steps": [{"rule", "at",
    # "add": [person ids], "words"}], "done": n}; ``escalate_at`` is when the next step is due (None: none).
    escalation: dict[str, Any] | None = None
    escalate_at: int | None = None

    @property
    def shared(self) -> bool:
        """Whether more than its person may answer it (an audience, or a quorum)."""
        return bool(self.audience) or self.quorum is not None

    def may_answer(self, person_id: str) -> bool:
        """Whether ``person_id`` is its person or in its audience."""
        return person_id == self.person_id or person_id in self.audience

    @property
    def asker(self) -> Asker:
        """Who filed this card."""
        return Asker.of_actor(self.filed_by) if self.filed_by else Asker(AGENT, self.connection_id)

    @property
    def request_key(self) -> str:
        return request_key(self.workspace_id, self.person_id, self.tool, self.fingerprint)

    @property
    def lapses_as_declined(self) -> bool:
        """Whether this card, left unanswered past its deadline, counts as the person's no."""
        return self.lifetime is not None and self.lifetime.get("lapse") == "declined"

    @property
    def claim_until(self) -> int:
        """Until when this card, filed pending, holds its request: its deadline; one that lapses as
        declined holds it for the answer memory after, as a person's no does."""
        return self.expires_at + (ANSWER_MEMORY_SECONDS if self.lapses_as_declined else 0)

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
    actor: str  # "person:<id>", "connection:<id>", "cli" (a card filed from the command line), "system"
    channel: str  # mcp | client | code | page | slack | system
    connection_id: str | None = None
    detail: str | None = None


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
    # :class:`~countersign.store.errors.Replayed` and nothing is written (:meth:`~.limits.LimitStore.use_nonce`).
    nonce: tuple[str, int] | None = None
    # A use of a standing grant consumed in the same transaction (a ``new`` card the grant runs):
    # if the grant has no use left for it, :class:`~countersign.store.errors.GrantUnavailable` and
    # nothing is written. Its :class:`~.standing_grants.StandingGrantUse` is recorded with it.
    grant_use: GrantUse | None = None
    # The request's counts against the request limits, taken in the same transaction unless taken
    # already: if a counter is at its limit, :class:`~countersign.store.limits.OverLimit` and nothing
    # is written; once committed, ``counts.taken``.
    counts: RequestCounts | None = None
    # A person's edit (target ``edited``): what the card records of it, and the new pending card
    # filed in the same transaction with its ``filed`` entry (and the signing key note, key id and
    # until), claiming its own request: if a card holds that one,
    # :class:`~countersign.store.errors.Taken` with it, and nothing is written. Each of the new card's
    # audience is owed a digest check due now (:func:`~.outbox.audience_notification`), as a filed card's is.
    edited: dict[str, Any] | None = None
    successor: Card | None = None
    successor_audit: AuditEntry | None = None
    successor_key: tuple[str, int] | None = None
    # A quorum card's votes as this move writes them (the last yes, with the move that runs it).
    votes: tuple[dict[str, Any], ...] | None = None

    def written(self) -> Card:
        """The card as this commit writes it (fields left None keep what an earlier move wrote)."""
        target = CardState(self.target)
        changes: dict[str, Any] = {
            "state": target, "updated_at": self.now, "version": 1 if self.new else self.card.version + 1,
            "lease_until": self.lease_until if target is CardState.RUNNING else None,
        }
        for name in ("result", "decline_reason", "refusal", "channel", "run", "passkey", "edited", "votes"):
            value = getattr(self, name)
            if value is not None:
                changes[name] = value
        return replace(self.card, **changes)


def amended(card: Card, votes: tuple[dict[str, Any], ...] | None, audience: tuple[str, ...] | None,
            escalation: dict[str, Any] | None, escalate_at: int | None) -> Card:
    """``card`` as :meth:`CardStore.amend_card` writes it (checked: :class:`BadInput`, nothing written).
    ``escalate_at`` is written as given whenever ``escalation`` is (None then: no step left)."""
    if audience is not None:
        check_audience(card, audience, card.audience)
    if votes is not None:
        try:
            canonical_bytes(list(votes))
        except (TypeError, ValueError) as exc:
            raise BadInput("votes", "must be plain JSON.") from exc
    changes: dict[str, Any] = {"version": card.version + 1}  # (not a move: updated_at stays the last move's)
    if votes is not None:
        changes["votes"] = tuple(votes)
    if audience is not None:
        changes["audience"] = tuple(audience)
    if escalation is not None:
        changes["escalation"], changes["escalate_at"] = escalation, escalate_at
    return replace(card, **changes)


def listed(card: Card) -> Card:
    """``card`` as a listing gives it (:meth:`CardStore.list_pending_cards`, ``list_card_history``):
    what a list shows, without the arguments, subject, ticket, fingerprint and run a decision needs
    (a shared card keeps who else may answer it, its quorum and its votes: the list shows them).
    Both stores list cards this way (DynamoDB's index projects no more); read a card with
    ``get_card`` before acting on it, or to know who filed one that no agent's connection filed
    (``filed_by``). Of its lifetime a listing keeps only a lapse that counts as declined
    (:func:`marked_lapse`: what History says of a lapsed card)."""
    return replace(card, arguments={}, subject=None, fingerprint="", ticket="", run=None, filed_by=None,
                   edited=None, lifetime={LAPSE: "declined"} if card.lapses_as_declined else None,
                   escalation=None, escalate_at=None)


# -- the role ---------------------------------------------------------------------------------------


class CardStore(abc.ABC):
    """Cards: filed, read, listed, moved by one conditional transaction each, and audited."""

    # -- filing and reading -------------------------------------------------------------------------

    @abc.abstractmethod
    def file_card(self, card: Card, audit: AuditEntry, *, notify: bool = True, replacing: str | None = None,
                  signing_key: tuple[str, int] | None = None, counts: RequestCounts | None = None) -> Card:
        """File ``card`` (pending) as the live card of its request, in one transaction with its
        ``filed`` audit entry and (``notify``) the :class:`~.outbox.Notification` it owes its
        person, and (``signing_key``: key id, until)
        :meth:`~.signing_keys.SigningKeyStore.note_signing_key` for the key that signed its ticket,
        and the :mod:`.webhook_deliveries` events it owes (:attr:`Card.webhooks`). Each person of its
        :attr:`~Card.audience` is owed a digest check due now
        (:func:`~.outbox.audience_notification`), whatever ``notify`` says; and (``counts``) the
        request's counts (as ``CardCommit.counts``: :class:`~.limits.OverLimit` if a counter is at
        its limit; ``counts.taken`` once filed).

        If another card holds the same request (live: pending before its deadline, or running; or
        declined or completed within the answer memory), nothing is written and that card is
        returned instead, read by the store only in that case: of any number of identical filings,
        across processes, exactly one files. The caller compares ids to tell.
        :class:`BadInput` if the arguments exceed 64 KiB; :class:`Conflict` if the id exists.
        """

    @abc.abstractmethod
    def get_card(self, workspace_id: str, card_id: str, now: int) -> Card:
        """The card with expiry applied; :class:`NotFound` if unknown or in another workspace."""

    @abc.abstractmethod
    def latest_card(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int) -> Card | None:
        """The most recently filed card of this request (expiry applied), if any."""

    @abc.abstractmethod
    def request_holder(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int,
                       counts: RequestCounts | None = None) -> Card | None:
        """The card that holds this request at ``now`` by its claim — the card a filing of it would
        get back instead (see :meth:`file_card`): its latest card (expiry applied) while that one is
        pending before its deadline or running, or answered within the answer memory — else None.

        ``counts`` (the request's counts, unless taken already): when no card holds the request
        they are taken in the same write, on condition that none is at its limit
        (:class:`~.limits.OverLimit`, nothing counted; ``counts.taken`` once taken). On DynamoDB
        that is one ``TransactWriteItems`` (the counters' updates and a ``ConditionCheck`` that the
        claim holds nothing) in place of a ``GetItem`` of the claim and a write of the counts after
        the request's work; on SQLite one transaction. When a card holds the request, nothing is
        counted and that card is read and returned (the request is counted as one that writes no
        card is, after its work); so it is when the counters' write fails for any other reason
        (a throttled counter: the request goes through, never an outage from a counter)."""

    @abc.abstractmethod
    def list_pending_cards(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        """Pending, unexpired cards waiting on ``person_id``, oldest first; returns a next cursor.

        Listed cards (:func:`listed`) have no arguments, subject, ticket,
        fingerprint or run: :meth:`get_card` a card before acting on it."""

    def count_pending_cards(self, workspace_id: str, person_id: str, now: int) -> int:
        """How many cards :meth:`list_pending_cards` would list in all (stores count without reading them)."""
        total, cursor = 0, None
        while True:
            cards, cursor = self.list_pending_cards(workspace_id, person_id, now, limit=1000, cursor=cursor)
            total += len(cards)
            if cursor is None:
                return total

    @abc.abstractmethod
    def list_card_history(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        """Cards of ``person_id`` that are decided or lapsed (not pending, not running), newest
        first; listed as :meth:`list_pending_cards` lists them."""

    @abc.abstractmethod
    def running_cards(self, now: int, limit: int = 50) -> list[Card]:
        """Cards left ``running`` whose lease ended before ``now`` (their runner died), whole, as
        read now: recovery's work."""

    # -- transitions ------------------------------------------------------------------------------

    @abc.abstractmethod
    def commit_card(self, commit: CardCommit) -> Card:
        """One transaction: the card's move (conditional on the version read, and out of
        ``pending`` on its deadline), the effect's writes, the ticket spent, the audit entries, and
        the request released or held. Returns the card as written.

        Raises :class:`~countersign.core.card_states.Refusal` when the card moved first (the refusal for
        the state it lost to), or its ticket is already spent; :class:`Conflict` when a write's
        expectation failed (nothing written: re-read and re-stage); for a ``new`` card whose
        request is held by a live card, :class:`~countersign.store.errors.Taken` with that card
        (also when ``asked_at`` is set and the request's card was decided at or after it);
        :class:`~countersign.store.errors.Replayed` when its ``nonce`` was spent already (checked
        first: nothing else is reported then); :class:`~countersign.store.limits.OverLimit` when a
        counter of its ``counts`` is at its limit.
        """

    def transition_card(
        self,
        workspace_id: str,
        card_id: str,
        target: CardState,
        now: int,
        audit: AuditEntry,
        *,
        result: Any = None,
        decline_reason: str | None = None,
        refusal: str | None = None,
        channel: str | None = None,
    ) -> Card:
        """Read the card and move it to ``target`` with nothing else written (a decline, a
        withdrawal): :meth:`commit_card` on the card as read now."""
        card = self.get_card(workspace_id, card_id, now)
        return self.commit_card(CardCommit(
            card=card, target=CardState(target), now=now, audit=(audit,), result=result,
            decline_reason=decline_reason, refusal=refusal, channel=channel,
        ))

    @abc.abstractmethod
    def amend_card(self, card: Card, now: int, audit: tuple[AuditEntry, ...], *,
                   votes: tuple[dict[str, Any], ...] | None = None, audience: tuple[str, ...] | None = None,
                   escalation: dict[str, Any] | None = None, escalate_at: int | None = None,
                   notify: tuple[str, ...] = ()) -> Card:
        """One conditional write on a card that still waits (pending, before its deadline, on the
        version read): its ``votes`` (a quorum's answer that does not run it yet), a wider
        ``audience`` (every id of the old one kept), its ``escalation`` progress and next
        ``escalate_at`` — with its audit entries, and for each person of ``notify`` a digest
        check due now (:func:`~.outbox.digest_id`: the email that tells them what waits). The
        version goes up by one. Its ticket is not spent: the card still waits.

        :class:`~countersign.store.errors.Moved` when the card changed since it was read and still
        waits (read it again); :class:`~countersign.core.card_states.Refusal` when it no longer
        waits; :class:`BadInput` for an audience that drops someone, names the card's person, or
        holds more than :data:`MAX_AUDIENCE`. Nothing is written then."""

    @abc.abstractmethod
    def escalations_due(self, now: int, limit: int = 50) -> list[Card]:
        """Pending cards whose next escalation step is due at ``now`` (``escalate_at <= now``),
        whole, soonest first: the sweeper's work (countersign.gate.escalation)."""

    @abc.abstractmethod
    def append_audit(self, entry: AuditEntry) -> None:
        """An audit entry that is not a transition (for example a click refused as tampered)."""

    @abc.abstractmethod
    def audit_trail(self, workspace_id: str, card_id: str) -> list[AuditEntry]:
        """Every entry of a card, in order. :class:`NotFound` if the card is not in the workspace."""


# -- checks -----------------------------------------------------------------------------------------


def check_card(card: Card) -> None:
    """What a store checks of a card it files: its arguments (:func:`check_arguments`), who
    filed it (:func:`check_filed_by`) and who else may answer it (:func:`check_audience`)."""
    check_arguments(card.arguments)
    check_filed_by(card.filed_by)
    check_audience(card, card.audience)


def check_audience(card: Card, audience: tuple[str, ...], before: tuple[str, ...] = ()) -> None:
    """An audience is distinct person ids, never the card's own person, at most
    :data:`MAX_AUDIENCE`, and keeps everyone of ``before`` (no one is taken off a card)."""
    if not isinstance(audience, tuple) or not all(isinstance(p, str) and p for p in audience):
        raise BadInput("audience", "must be person ids.")
    if len(set(audience)) != len(audience) or card.person_id in audience:
        raise BadInput("audience", "names each person once, and never the person the card waits on.")
    if len(audience) > MAX_AUDIENCE:
        raise BadInput("audience", f"at most {MAX_AUDIENCE} people besides the card's person may answer it.")
    if not set(before) <= set(audience):
        raise BadInput("audience", "no one is taken off a card's audience.")


def check_filed_by(filed_by: str | None) -> None:
    """Who filed a card is an actor :class:`~countersign.core.askers.Asker` reads (or not recorded)."""
    if filed_by is None:
        return
    try:
        Asker.of_actor(filed_by)
    except (TypeError, ValueError, AttributeError):
        raise BadInput("filed_by", "must be connection:<id>, person:<id> or cli.") from None


def check_arguments(arguments: Any) -> None:
    try:
        size = len(canonical_bytes(arguments))
    except (TypeError, ValueError) as exc:
        raise BadInput("arguments", "must be plain JSON (objects, arrays, strings, numbers, booleans, null).") from exc
    if size > MAX_ARGUMENTS_BYTES:
        raise BadInput("arguments", f"{size} bytes as canonical JSON; the limit is {MAX_ARGUMENTS_BYTES} (64 KiB).")
