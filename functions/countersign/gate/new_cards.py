"""A new card for a question: its id, its deadline (under the workspace's lifetime rules, if it
has any), its signed ticket, who may answer it (a quorum's audience) and when it escalates. Made,
not stored: the desk files it pending (:meth:`~.desk.CardDesk.file`), the runner commits it
already decided with its effect (:func:`~.runner.run_new`), a no files it declined
(:func:`~.answers.say_no`), a person's edit files it as the edited card's successor (:mod:`.edits`).

The ticket binds what :meth:`~.desk.CardDesk.check_ticket` checks before a card runs.
"""

from __future__ import annotations

from dataclasses import replace

from ..core import askers
from ..core.askers import Asker
from ..core.canonical import arguments_digest, preview_digest
from ..core.card_states import CardState
from ..core.ids import new_id
from ..core.tickets import Keyring
from ..store.cards import MAX_AUDIENCE, Card
from .escalation import SETTING as ESCALATION_RULES, steps_for
from .lifetimes import SETTING as LIFETIMES, card_lifetime
from .question import Question
from .quorum_rules import snapshot


def new_card(q: Question, channel: str, now: int, keyring: Keyring, card_ttl: int, asker: Asker | None = None) -> Card:
    """A pending card for ``q`` with its ticket signed by ``keyring`` (not stored yet), answerable
    for ``card_ttl`` seconds unless a lifetime rule says otherwise, filed by ``asker``: by default
    the agent whose connection asks, or, with no connection, the person it waits on (from Settings)."""
    ctx = q.ctx
    if asker is None:
        asker = askers.agent(ctx.connection.id) if ctx.connection else askers.person(ctx.person.id)
    card_id = new_id("c_")
    # The workspace's lifetime rules, if it has any (a dict read, no call: nothing on the held path
    # without them); the card keeps the lifetime it is filed under (.lifetimes).
    lifetime = card_lifetime(q, now, card_ttl) if ctx.workspace.settings.get(LIFETIMES) else None
    expires_at = now + (lifetime["wait"] if lifetime else card_ttl)
    connection_id = ctx.connection.id if ctx.connection else ""
    preview = q.plan.preview
    ticket = keyring.sign({
        "card_id": card_id,
        "workspace": ctx.workspace.id,
        "person": ctx.person.id,
        "connection": connection_id,
        "tool": q.tool,
        "fingerprint": q.fingerprint,
        "arguments_digest": arguments_digest(q.tool, q.arguments),
        "preview_digest": preview_digest(preview.title, tuple(preview.lines), preview.sections),
        "issued_at": now,
        "expires_at": expires_at,
    })
    card = Card(
        id=card_id, workspace_id=ctx.workspace.id, person_id=ctx.person.id, connection_id=connection_id,
        tool=q.tool, arguments=q.arguments, subject=q.plan.subject, title=preview.title,
        lines=tuple(preview.lines), fingerprint=q.fingerprint, ticket=ticket, state=CardState.PENDING,
        created_at=now, expires_at=expires_at, updated_at=now, channel=channel, sections=preview.sections,
        filed_by=asker.actor,
        webhooks=ctx.workspace.webhooks,  # as this request read the workspace (store.cards.Card.webhooks)
        lifetime=lifetime,
    )
    if q.quorum is not None:  # more than one person answers it: those the rule lets approve
        quorum, audience = snapshot(q.quorum, ctx.members(), ctx.person.id, MAX_AUDIENCE)
        card = replace(card, quorum=quorum, audience=audience)
    escalating = ctx.workspace.settings.get(ESCALATION_RULES)  # (read here only when a workspace has some)
    if escalating and escalating != "[]":
        escalation = steps_for(escalating, q.action, q.gate, q.plan.subject, now)
        if escalation is not None:
            card = replace(card, escalation=escalation, escalate_at=escalation["steps"][0]["at"])
    return card
