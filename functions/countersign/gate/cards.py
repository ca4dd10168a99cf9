"""Cards as the gate handles them: filing (with its ticket), running exactly once, answering.

Every path that ends a held call — an in-client answer, a code, a click on the confirm page —
goes through :meth:`CardDesk.run`, so the card, its ticket and its audit trail are complete
whichever way the person said yes.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..core.canonical import digest, fingerprint
from ..core.cards import CHANGED_MESSAGE, CardState, Refusal, RefusalReason, refusal_for
from ..core.ids import new_id
from ..core.tickets import Keyring, TicketError, ticket_matches
from ..settings import Settings
from ..store.errors import Conflict
from ..store.interface import Store
from ..store.records import AuditEntry, Card, Person
from .actions import Action, ActionError, Plan, Registry
from .context import ActionContext

log = logging.getLogger("countersign.gate")

DECLINE_MEMORY_SECONDS = 15 * 60
REVOKED_REASON = "Withdrawn: the connection ‘{name}’ that asked was revoked."


def subject_fingerprint(workspace_id: str, tool: str, subject: Any) -> str:
    """SPEC §5 fingerprint; the gated subject names its tool so two actions never share one."""
    return fingerprint(workspace_id, {"tool": tool, "change": subject})


def arguments_digest(tool: str, arguments: dict) -> str:
    return digest({"tool": tool, "arguments": arguments})


@dataclass
class CardDesk:
    """The gate's dependencies and every card operation. Built once per process."""

    store: Store
    keyring: Keyring
    settings: Settings
    registry: Registry
    on_filed: Callable[[Card], None] | None = None
    clock: Callable[[], float] = field(default=time.time)
    # Told each card event by name, for metrics: card_filed, card_confirmed, card_declined,
    # card_withdrawn, card_refused_drift, and card_expired (an answer that came after the deadline).
    on_event: Callable[[str], None] | None = None

    def now(self) -> int:
        return int(self.clock())

    def _event(self, name: str) -> None:
        if self.on_event is not None:
            try:
                self.on_event(name)
            except Exception:  # metrics never break a card operation
                log.exception("on_event(%r) failed", name)

    def _move(self, *args, **kwargs) -> Card:
        """``store.transition_card``, telling ``on_event`` when the card turned out to be expired."""
        try:
            return self.store.transition_card(*args, **kwargs)
        except Refusal as refusal:
            if refusal.reason is RefusalReason.EXPIRED:
                self._event("card_expired")
            raise

    def card_url(self, card_id: str) -> str:
        return self.settings.card_url(card_id)

    # -- filing ---------------------------------------------------------------------------------

    def file(self, ctx: ActionContext, action: Action, arguments: dict, plan: Plan, fp: str, channel: str) -> Card:
        """Store a pending card with its signed ticket and its ``filed`` audit entry."""
        now = ctx.now
        card_id = new_id("c_")
        expires_at = now + self.settings.card_ttl
        connection_id = ctx.connection.id if ctx.connection else ""
        ticket = self.keyring.sign(
            {
                "card_id": card_id,
                "workspace": ctx.workspace.id,
                "person": ctx.person.id,
                "connection": connection_id,
                "tool": action.name,
                "fingerprint": fp,
                "arguments_digest": arguments_digest(action.name, arguments),
                "issued_at": now,
                "expires_at": expires_at,
            }
        )
        card = Card(
            id=card_id,
            workspace_id=ctx.workspace.id,
            person_id=ctx.person.id,
            connection_id=connection_id,
            tool=action.name,
            arguments=arguments,
            subject=plan.subject,
            title=plan.preview.title,
            lines=tuple(plan.preview.lines),
            fingerprint=fp,
            ticket=ticket,
            state=CardState.PENDING,
            created_at=now,
            expires_at=expires_at,
            updated_at=now,
            channel=channel,
        )
        self.store.file_card(card, self._audit(card, "filed", f"connection:{connection_id}", channel, now))
        self._event("card_filed")
        return card

    def notify(self, card: Card) -> None:
        if self.on_filed is None:
            return
        try:
            self.on_filed(card)
        except Exception:  # a notification never breaks the call that filed the card
            log.exception("notifying about card %s failed", card.id)

    def recent(self, ctx: ActionContext, tool: str, fp: str) -> Card | None:
        """An identical request's card that still answers this one: pending, or declined lately."""
        card = self.store.latest_card(ctx.workspace.id, ctx.person.id, tool, fp, ctx.now)
        if card is None:
            return None
        if card.state is CardState.PENDING:
            return card
        if card.state is CardState.DECLINED and card.refusal is None and ctx.now - card.updated_at < DECLINE_MEMORY_SECONDS:
            return card
        return None

    # -- running and answering ------------------------------------------------------------------

    def run(self, card: Card, action: Action, plan: Plan, ctx: ActionContext, channel: str, actor: str) -> Card:
        """``pending → running`` (one winner), apply, then ``completed`` or ``failed``."""
        card = self._move(
            card.workspace_id, card.id, CardState.RUNNING, ctx.now,
            self._audit(card, "running", actor, channel, ctx.now), channel=channel,
        )
        self._event("card_confirmed")
        try:
            result = action.apply(plan, ctx)
            steps = [s.to_dict() for s in action.next_steps(result, ctx)]
        except ActionError as exc:
            return self._finish(card, CardState.FAILED, {"error": exc.message}, actor, channel, exc.message)
        except Conflict:  # a write raced this one between the re-plan and apply: nothing was written
            message = action.drift_message
            return self._finish(card, CardState.FAILED, {"error": message}, actor, channel, message)
        except Exception:
            log.exception("action %s failed on card %s", action.name, card.id)
            message = f"{action.name} failed while running; nothing further was done."
            return self._finish(card, CardState.FAILED, {"error": message}, actor, channel, message)
        return self._finish(card, CardState.COMPLETED, {"result": result, "next": steps}, actor, channel, None)

    def _finish(self, card: Card, state: CardState, body: dict, actor: str, channel: str, detail: str | None) -> Card:
        now = self.now()
        return self._move(
            card.workspace_id, card.id, state, now,
            self._audit(card, state.value, actor, channel, now, detail), result=body, channel=channel,
        )

    def decline(self, card: Card, now: int, actor: str, channel: str, reason: str | None = None) -> Card:
        declined = self._move(
            card.workspace_id, card.id, CardState.DECLINED, now,
            self._audit(card, "declined", actor, channel, now, reason), decline_reason=reason, channel=channel,
        )
        self._event("card_declined")
        return declined

    def refuse_changed(self, card: Card, now: int, actor: str, channel: str, message: str) -> Refusal:
        """Close a card whose subject moved; the agent's status then says why."""
        self._move(
            card.workspace_id, card.id, CardState.DECLINED, now,
            self._audit(card, "refused", actor, channel, now, message), refusal=message, channel=channel,
        )
        self._event("card_refused_drift")
        return Refusal(RefusalReason.CHANGED, message)

    def withdraw(self, card: Card, now: int, actor: str, channel: str = "mcp", reason: str | None = None) -> Card:
        """``pending → withdrawn``: by the agent (``cancel_confirmation``) or because the person
        revoked the connection that asked (``reason`` then says so)."""
        withdrawn = self._move(
            card.workspace_id, card.id, CardState.WITHDRAWN, now,
            self._audit(card, "withdrawn", actor, channel, now, reason), channel=channel, decline_reason=reason,
        )
        self._event("card_withdrawn")
        return withdrawn

    # -- the click on the confirm page ----------------------------------------------------------

    def confirm_click(self, workspace_id: str, person: Person, card_id: str) -> Card:
        """A signed-in person's Confirm: verify the ticket, re-plan, refuse drift, run once."""
        now = self.now()
        card = self.store.get_card(workspace_id, card_id, now)
        self._check_owner(card, person)
        if card.state is not CardState.PENDING:
            if card.state is CardState.EXPIRED:
                self._event("card_expired")
            raise refusal_for(card.state, CardState.RUNNING)
        self._check_ticket(card, now, f"person:{person.id}")
        action = self.registry.action(card.tool)
        ctx = self.context_for_card(card, person, now)
        actor = f"person:{person.id}"
        if ctx.connection is not None and ctx.connection.revoked:
            # Revoking withdraws pending cards, but one filed as the revoke ran may have been missed.
            self.withdraw(card, now, actor, "page", REVOKED_REASON.format(name=ctx.connection.name))
            raise Refusal(RefusalReason.WITHDRAWN, "This card was withdrawn: the connection that asked was revoked. Nothing ran.")
        try:
            plan = action.plan(action.parse(card.arguments), ctx)
        except ActionError as exc:
            raise self.refuse_changed(card, now, actor, "page", f"{CHANGED_MESSAGE} {action.drift_message} ({exc.message})") from None
        if subject_fingerprint(workspace_id, action.name, plan.subject) != card.fingerprint:
            raise self.refuse_changed(card, now, actor, "page", f"{CHANGED_MESSAGE} {action.drift_message}")
        return self.run(card, action, plan, ctx, "page", actor)

    def decline_click(self, workspace_id: str, person: Person, card_id: str, reason: str | None) -> Card:
        now = self.now()
        card = self.store.get_card(workspace_id, card_id, now)
        self._check_owner(card, person)
        reason = (reason or "").strip()[:500] or None
        return self.decline(card, now, f"person:{person.id}", "page", reason)

    def context_for_card(self, card: Card, person: Person, now: int) -> ActionContext:
        connection = None
        if card.connection_id:
            connection = self.store.get_connection(card.workspace_id, card.connection_id)
        return ActionContext(self.store, self.store.get_workspace(card.workspace_id), person, connection, now)

    def _check_owner(self, card: Card, person: Person) -> None:
        if card.person_id != person.id:
            raise Refusal(RefusalReason.NOT_YOURS, "This card waits on someone else; only they can answer it.")

    def _check_ticket(self, card: Card, now: int, actor: str) -> None:
        try:
            claims = self.keyring.verify(card.ticket)
        except TicketError as exc:
            problem = str(exc)
        else:
            moved = ticket_matches(
                claims,
                {
                    "card_id": card.id,
                    "workspace": card.workspace_id,
                    "person": card.person_id,
                    "connection": card.connection_id,
                    "tool": card.tool,
                    "fingerprint": card.fingerprint,
                    "arguments_digest": arguments_digest(card.tool, card.arguments),
                    "expires_at": card.expires_at,
                },
            )
            if not moved:
                return
            problem = "the card's " + ", ".join(moved) + " no longer match its ticket"
        self.store.append_audit(self._audit(card, "refused", actor, "page", now, "tampered"))
        raise Refusal(RefusalReason.TAMPERED, f"This card was refused as tampered: {problem}. Nothing ran.")

    @staticmethod
    def _audit(card: Card, event: str, actor: str, channel: str, at: int, detail: str | None = None) -> AuditEntry:
        return AuditEntry(
            card_id=card.id, workspace_id=card.workspace_id, at=at, event=event, actor=actor,
            channel=channel, connection_id=card.connection_id or None, detail=detail,
        )
