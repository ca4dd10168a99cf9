"""The card desk: the gate's dependencies, filing cards (made by :mod:`.new_cards`), finding a
request's card, and the answers that close a card without running it.

Running a card — the one place an action's effect is committed — is :mod:`.runner`; an answer
given in the client or with a code is :mod:`.answers`; a card left running by a dead process is
settled by :mod:`.recovery`; the confirm page's clicks are :mod:`.clicks`. Each of them stands
above this desk and goes through it for the card itself; the desk calls none of them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..core import askers
from ..core.askers import Asker
from ..core.canonical import arguments_digest, preview_digest
from ..core.card_states import ANSWER_MEMORY_SECONDS, CardState, Refusal, RefusalReason
from ..core.crash_points import crash_point
from ..core.smoke import SMOKE_TOOL, is_smoke_workspace
from ..core.tickets import Keyring, TicketError, ticket_matches
from ..identity.principal import Principal
from ..settings import Settings
from ..store import Store
from ..store.cards import AuditEntry, Card, CardCommit, CardStore
from ..store.connections import Connection, ConnectionStore
from ..store.docs import DocStore
from ..store.limits import LimitStore, RequestCounts
from ..store.workspaces import Person, Workspace, WorkspaceStore
from ..toolkit import ActionContext, ActionError
from .errors import DriftError
from .new_cards import new_card
from .offload import IN_THREADS, Offload
from .passkey_policy import needs_passkey, policy_of
from .question import Answer, Question
from .refusals import record_refusal
from .registry import Registry

log = logging.getLogger("countersign.gate")

KEY_NOTE_SLACK = 3600  # the signing key in use is recorded an hour ahead, not at every filing


@dataclass
class CardDesk:
    """The gate's dependencies and every card operation. Built once per process.

    Built with the whole ``store``, it works through the roles it needs, each typed as its role
    (:attr:`cards`, :attr:`docs`, :attr:`workspaces`, :attr:`connections`, :attr:`limits`)."""

    store: Store
    keyring: Keyring
    settings: Settings
    registry: Registry
    on_filed: Callable[[Card], object] | None = None  # what it returns is not used
    clock: Callable[[], float] = field(default=time.time)
    # Told each card event by name, for metrics: card_filed, card_confirmed, card_declined,
    # card_withdrawn, card_refused_drift, card_expired (an answer that came after the deadline),
    # card_recovered (a card a dead process left running, settled).
    on_event: Callable[[str], None] | None = None
    # Where a call's store and toolset work runs: worker threads, or the event loop of a process
    # that serves one request at a time (:mod:`.offload`). The layers in front of the tools use it too.
    offload: Offload = IN_THREADS
    _key_noted_until: int = field(default=0, repr=False)
    cards: CardStore = field(init=False, repr=False)
    docs: DocStore = field(init=False, repr=False)
    workspaces: WorkspaceStore = field(init=False, repr=False)
    connections: ConnectionStore = field(init=False, repr=False)
    limits: LimitStore = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.cards, self.docs, self.limits = self.store.cards, self.store.docs, self.store.limits
        self.workspaces, self.connections = self.store.workspaces, self.store.connections

    def _reading(self, workspace: Workspace, person: Person, connection: Connection | None, now: int) -> ActionContext:
        """What a toolset sees of a call: this desk's documents, members and workspace record."""
        return ActionContext.reading(self.docs, self.workspaces, workspace, person, connection, now)

    def now(self) -> int:
        return int(self.clock())

    def event(self, name: str) -> None:
        if self.on_event is not None:
            try:
                self.on_event(name)
            except Exception:  # metrics never break a card operation
                log.exception("on_event(%r) failed", name)

    def card_url(self, card_id: str) -> str:
        return self.settings.card_url(card_id)

    def commit(self, commit: CardCommit, answer: Answer | None = None) -> Card:
        """``store.cards.commit_card``, telling ``on_event`` when the card turned out to be expired.
        ``answer``: the answer this commit records (:class:`~.question.Answer`). Its claim condition
        (``asked_at``, for a new card) and its nonce, if not spent yet, ride in the commit; once
        the commit went through, the nonce is spent. A standing grant's use it is rides in the
        commit that files its card running or completed (a run that failed takes none). So do the
        counts against the request limits of the request the answer came in (``answer.counts``),
        unless taken already, or the commit carries its own (``commit.counts``)."""
        if answer is not None and (answer.nonce is not None or (commit.new and answer.asked_at is not None)):
            commit = replace(commit, nonce=answer.nonce, asked_at=answer.asked_at if commit.new else commit.asked_at)
        if answer is not None and answer.votes is not None:  # a quorum's last yes: every vote, with its move
            commit = replace(commit, votes=answer.votes)
        if answer is not None and answer.grant is not None and commit.new and commit.target in (
                CardState.COMPLETED, CardState.RUNNING):  # a grant's use is taken by the run it makes, only
            commit = replace(commit, grant_use=answer.grant)
        if answer is not None and answer.counts is not None and commit.counts is None:
            commit = replace(commit, counts=answer.counts)
        try:
            done = self.cards.commit_card(commit)
        except Refusal as refusal:
            if refusal.reason is RefusalReason.EXPIRED:
                self.event("card_expired")
            raise
        if answer is not None and commit.nonce is not None:
            answer.nonce = None
        return done

    # -- questions --------------------------------------------------------------------------------

    def context(self, workspace_id: str, person: Person, connection_id: str | None, now: int,
                principal: Principal | None = None) -> ActionContext:
        if principal is not None:  # the workspace and connection were read for this very request
            return self._reading(principal.workspace, principal.person, principal.connection, now)
        connection = self.connections.get_connection(workspace_id, connection_id) if connection_id else None
        return self._reading(self.workspaces.get_workspace(workspace_id), person, connection, now)

    def question(
        self, principal: Principal, tool: str, arguments: dict[str, Any], *, answering: bool = False
    ) -> Question:
        """The caller's question (an agent's): ``tool`` planned on ``arguments`` now, in the
        principal's workspace as it was read for this very request, carrying its counts against
        the request limits."""
        if is_smoke_workspace(principal.workspace.id) and tool != SMOKE_TOOL:
            raise ActionError(f"In the smoke workspace an agent may file {SMOKE_TOOL} only. Nothing was written.",
                              field="tool")
        ctx = self._reading(principal.workspace, principal.person, principal.connection,
                               int(self.clock()))
        return Question.of(self.registry.agent_action(tool), arguments, ctx, answering=answering,
                           counts=principal.counts)

    def question_of(self, card: Card, person: Person, now: int, *, workspace: Workspace | None = None,
                    connection: Connection | None = None, counts: RequestCounts | None = None) -> Question:
        """A card's question planned again at ``now`` from its stored arguments: :class:`DriftError`
        unless it is still exactly the change the card shows. ``workspace`` and ``connection`` (the
        card's), when this request has just read them, are not read again. ``counts``: the
        request's that asks it again (:attr:`Question.counts`)."""
        action = self.registry.action(card.tool)
        if workspace is not None and (connection is not None or not card.connection_id):
            ctx = self._reading(workspace, person, connection, now)
        else:
            ctx = self.context(card.workspace_id, person, card.connection_id or None, now)
        question = Question.of(action, card.arguments, ctx, answering=True, counts=counts)
        if question.fingerprint != card.fingerprint:
            raise DriftError(action.drift_message)
        return question

    # -- filing ---------------------------------------------------------------------------------

    def file(self, q: Question, channel: str = "page", asker: Asker | None = None) -> tuple[Card, bool]:
        """File a pending card for ``q`` (by ``asker``, :func:`~.new_cards.new_card`) with its
        ``filed`` entry and the notification it owes — or, if a card of the same request is live, that card.
        The filing takes ``q``'s counts against the request limits, unless taken already.
        Returns (card, filed by this call)."""
        now = self.now()
        card = new_card(q, channel, now, self.keyring, self.settings.card_ttl, asker)
        key = self._signing_key_note(card.expires_at)
        held = self.cards.file_card(card, self.audit(card, "filed", card.asker.actor, channel, now),
                                    notify=self._owes_email(card), signing_key=key, counts=q.counts)
        if held.id != card.id:
            return held, False
        self._key_noted(key)
        self.event("card_filed")
        crash_point("filed")
        return card, True

    def file_reopened(self, q: Question, declined: Card, person: Person, now: int) -> Card:
        """File ``q`` again as a new pending card, by ``person`` themselves (reopening ``declined``,
        the request's latest card): a fresh ticket and deadline, no email. It is still the request
        of whoever asked for ``declined``. If a card of the request is live, that card is returned
        (``store.cards.file_card``). The filing takes ``q``'s counts, as :meth:`file`'s does."""
        new = new_card(q, "page", now, self.keyring, self.settings.card_ttl, declined.asker)
        key = self._signing_key_note(new.expires_at)
        filed = self.audit(new, "filed", f"person:{person.id}", "page", now, f"reopened {declined.id}")
        held = self.cards.file_card(new, filed, notify=False, replacing=declined.id, signing_key=key,
                                    counts=q.counts)
        if held.id == new.id:
            self._key_noted(key)
            self.event("card_filed")
        return held

    def file_edited(self, card: Card, new: Card, actor: str, edited: dict[str, Any], text: str, now: int,
                    counts: RequestCounts | None = None) -> Card:
        """One transaction (``store.cards.commit_card``): ``card`` moves ``pending → edited``, on the
        version read, its ticket spent, recording ``edited``; ``new`` (its successor, with the
        person's values) is filed pending for the same request's asker, with its ``filed`` entry
        and no email. :class:`~countersign.core.card_states.Refusal` if ``card`` moved first;
        :class:`~countersign.store.errors.Taken` if a card holds ``new``'s request. Returns ``new``.
        ``counts``: the edit's request's, taken in the same transaction unless taken already."""
        key = self._signing_key_note(new.expires_at)
        moved = self.audit(card, "edited", actor, "page", now, f"edited into {new.id}: {text}")
        filed = self.audit(new, "filed", actor, "page", now, f"edited from {card.id}: {text}")
        self.commit(CardCommit(card, CardState.EDITED, now, (moved,), channel="page", edited=edited,
                               successor=new, successor_audit=filed, successor_key=key, counts=counts))
        self._key_noted(key)
        self.event("card_filed")
        return new

    def _signing_key_note(self, until: int) -> tuple[str, int] | None:
        """What the filing of a card answerable until ``until`` notes about the key that signed it
        (in the filing's own transaction), if this process has not noted it that far ahead yet.

        The store's record of the keys that signed live cards stays ahead of every deadline, so a
        server started without this key refuses to start instead of refusing those cards. The note
        reaches a whole hour past ``until`` plus :data:`KEY_NOTE_SLACK`, so processes filing in the
        same hour write the same note."""
        if until <= self._key_noted_until:
            return None
        ahead = until + KEY_NOTE_SLACK
        return self.keyring.key_id, ahead + (-ahead % KEY_NOTE_SLACK)

    def _key_noted(self, note: tuple[str, int] | None) -> None:
        if note is not None:
            self._key_noted_until = max(self._key_noted_until, note[1])

    def _owes_email(self, card: Card) -> bool:
        """Whether ``card`` is filed with the notification it may owe (the transactional outbox).
        Not when the person it waits on filed it themselves (from Settings: they are on the page,
        as when they reopen a card), nor when the notifier that delivers inline knows the person's
        email is rate limited now (:meth:`countersign.notify.CardNotifier.owes_email`)."""
        if card.filed_by == askers.person(card.person_id).actor:
            return False
        owes = getattr(self.on_filed, "owes_email", None)
        if owes is None:
            return True
        try:
            return bool(owes(card))
        except Exception:  # when in doubt, the notification is recorded and delivery decides
            log.exception("owes_email failed for card %s", card.id)
            return True

    def notify(self, card: Card) -> None:
        if self.on_filed is None:
            return
        try:
            self.on_filed(card)
        except Exception:  # a notification never breaks the call that filed the card; the sweeper retries
            log.exception("notifying about card %s failed", card.id)

    def recent(self, q: Question) -> Card | None:
        """An identical request's card that still answers this one: waiting, or answered lately.

        Answered lately (declined, or completed, within :data:`ANSWER_MEMORY_SECONDS`): a call
        retried after its reply was lost gets that answer instead of a second card, so it never
        runs twice, and an agent cannot wear a person down by asking again right after a no.

        The request's counts (``q.counts``), unless taken already, are taken with the
        look when no card holds the request (one write in place of a read and a write after the
        work: ``store.cards.request_holder``); :class:`~countersign.store.limits.OverLimit` if a
        counter is at its limit.
        """
        card = self.cards.request_holder(q.ctx.workspace.id, q.ctx.person.id, q.tool, q.fingerprint, q.ctx.now,
                                         counts=q.counts)
        if card is None:
            return None
        if card.state in (CardState.PENDING, CardState.RUNNING):
            return card
        answered = card.state in (CardState.DECLINED, CardState.COMPLETED) and card.refusal is None
        if answered and q.ctx.now - card.updated_at < ANSWER_MEMORY_SECONDS:
            return card
        if card.state is CardState.EXPIRED and card.lapses_as_declined and q.ctx.now < card.claim_until:
            return card  # a lapse that counts as the person's no answers as a no does
        return None

    # -- closing a card without running it ------------------------------------------------------

    def record(self, card: Card, target: CardState, now: int, by: Answer, *, event: str | None = None,
               detail: str | None = None, new: bool = False, **moved: Any) -> Card:
        """Commit ``by``'s move of ``card`` to ``target`` (:meth:`commit`) with its audit entries: a
        new card's ``filed`` first, then ``event`` (by default the target's name) with ``detail``.
        ``moved``: the rest of the :class:`CardCommit` (writes, result, run, ...)."""
        entries = (("filed", None), (event or target.value, detail)) if new else ((event or target.value, detail),)
        # A new card is filed by whoever asked (its agent), even when another answers it at once (a
        # person's standing grant); for an answer in the client the two are the same connection.
        audit = tuple(AuditEntry(card_id=card.id, workspace_id=card.workspace_id, at=now, event=name,
                                 actor=card.asker.actor if name == "filed" and new else by.actor,
                                 channel=by.channel, connection_id=card.connection_id or None, detail=text)
                      for name, text in entries)
        return self.commit(CardCommit(card, target, now, audit, channel=by.channel, new=new, **moved), by)

    def close(self, card: Card, target: CardState, now: int, by: Answer, *,
              detail: str | None = None, decline_reason: str | None = None, refusal: str | None = None,
              event: str | None = None, new: bool = False) -> Card:
        closed = self.record(card, target, now, by, event=event, detail=detail, new=new,
                             decline_reason=decline_reason, refusal=refusal)
        self.event("card_refused_drift" if refusal else f"card_{target.value}")
        return closed

    def decline(self, card: Card, now: int, answer: Answer, reason: str | None = None, *, new: bool = False) -> Card:
        return self.close(card, CardState.DECLINED, now, answer, detail=reason, decline_reason=reason, new=new)

    def refuse_changed(self, card: Card, now: int, answer: Answer, message: str) -> Refusal:
        """Close a card whose subject moved; the agent's status then says why."""
        self.close(card, CardState.DECLINED, now, answer, detail=message, refusal=message, event="refused")
        return Refusal(RefusalReason.CHANGED, message)

    def withdraw(self, card: Card, now: int, actor: str, channel: str = "mcp", reason: str | None = None,
                 counts: RequestCounts | None = None) -> Card:
        """``pending → withdrawn``: by the agent (``cancel_confirmation``) or because the person
        revoked the connection that asked (``reason`` then says so). ``counts``: the request's that
        withdraws it (as :attr:`Answer.counts <.question.Answer.counts>`)."""
        return self.close(card, CardState.WITHDRAWN, now, Answer(actor, channel, counts=counts), detail=reason,
                          decline_reason=reason)

    def withdraw_waiting(self, workspace_id: str, person_id: str, actor: str, channel: str, reason: str,
                         connection_id: str | None = None, tool: str | None = None,
                         which: Callable[[Card], bool] | None = None) -> int:
        """Withdraw every card still waiting on ``person_id`` (only those filed through
        ``connection_id`` — ``""``: filed by a person, not an agent — of ``tool``, and for which
        ``which`` holds, if given): how many. One answered or being confirmed meanwhile is no
        longer waiting and is left as it is."""
        now, withdrawn, cursor = self.now(), 0, None
        while True:
            cards, cursor = self.cards.list_pending_cards(workspace_id, person_id, now, limit=100, cursor=cursor)
            for listed in cards:
                if (connection_id is not None and listed.connection_id != connection_id) or \
                        (tool is not None and listed.tool != tool):
                    continue
                card = self.cards.get_card(workspace_id, listed.id, now)  # a listing carries no ticket or arguments
                if which is not None and not which(card):
                    continue
                try:
                    self.withdraw(card, now, actor, channel, reason)
                    withdrawn += 1
                except Refusal:
                    pass
            if cursor is None:
                return withdrawn

    def card_needs_passkey(self, card: Card, workspace: Workspace | None = None) -> bool:
        """Whether the workspace's passkey policy covers ``card`` now (its class read from its
        stored arguments; arguments that no longer parse count as covered unless the policy is never).
        ``workspace``: the card's, as this request just read it (not read again). A listed card
        (:func:`~countersign.store.cards.listed`: no arguments) is read whole when its class matters."""
        if workspace is None or workspace.id != card.workspace_id:
            workspace = self.workspaces.get_workspace(card.workspace_id)
        policy = policy_of(workspace)
        if policy in ("never", "every"):
            return policy == "every"
        try:
            if not card.fingerprint:  # listed: the arguments were left out
                card = self.cards.get_card(card.workspace_id, card.id, self.now())
            action = self.registry.action(card.tool)
            person = self.workspaces.get_person(card.workspace_id, card.person_id)
            ctx = self._reading(workspace, person, None, self.now())
            return needs_passkey(ctx.workspace, action, action.gate_class(action.parse(card.arguments), ctx))
        except Exception:  # noqa: BLE001 (unparseable now: the safe answer)
            return True

    def check_ticket(self, card: Card, now: int, actor: str, channel: str) -> None:
        """:class:`Refusal` ``tampered`` unless the card's ticket is ours and matches every stored
        field it binds, the preview the person sees included."""
        try:
            claims = self.keyring.verify(card.ticket)
        except TicketError as exc:
            problem = str(exc)
        else:
            moved = ticket_matches(claims, {
                "card_id": card.id,
                "workspace": card.workspace_id,
                "person": card.person_id,
                "connection": card.connection_id,
                "tool": card.tool,
                "fingerprint": card.fingerprint,
                "arguments_digest": arguments_digest(card.tool, card.arguments),
                "preview_digest": preview_digest(card.title, card.lines, card.sections),
                "expires_at": card.expires_at,
            })
            if not moved:
                return
            problem = "the card's " + ", ".join(moved) + " no longer match its ticket"
        record_refusal(self.cards, card, actor, channel, now, "tampered")
        raise Refusal(RefusalReason.TAMPERED, f"This card was refused as tampered: {problem}. Nothing ran.")

    @staticmethod
    def audit(card: Card, event: str, actor: str, channel: str, at: int, detail: str | None = None) -> AuditEntry:
        return AuditEntry(
            card_id=card.id, workspace_id=card.workspace_id, at=at, event=event, actor=actor,
            channel=channel, connection_id=card.connection_id or None, detail=detail,
        )
