"""The sweep's escalation step (docs/policy.md, "Escalation"; the rules are :mod:`.escalation`):
each pending card whose next escalation step is due gets the members the due steps name added to
its audience, with an ``escalated`` audit entry and an email owed to each, by one conditional write
on the card's version. Every time is the caller's ``now``.
"""

from __future__ import annotations

import logging

from ..store.cards import MAX_AUDIENCE, Card
from ..store.errors import Moved
from ..store.workspaces import Person
from .desk import CardDesk
from .escalation import who

log = logging.getLogger("countersign.gate")


def escalate(desk: CardDesk, card: Card, now: int) -> Card | None:
    """Take the due steps of ``card`` (pending, as read now): add who they name to its audience and
    tell them. None when nothing was due, or the card changed meanwhile (the next sweep sees it)."""
    escalation = card.escalation or {}
    steps = list(escalation.get("steps") or [])
    done = int(escalation.get("done", 0))
    due = [s for s in steps[done:] if int(s.get("at", 0)) <= now]
    if not due:
        return None
    members = sorted(desk.workspaces.list_persons(card.workspace_id), key=lambda p: (p.created_at, p.id))
    added: list[Person] = []
    for step in due:
        for person in who(step.get("add") or [], members):
            if person.id != card.person_id and person.id not in card.audience and person not in added:
                added.append(person)
    room = MAX_AUDIENCE - len(card.audience)
    added = added[:max(0, room)]
    done += len(due)
    next_at = int(steps[done]["at"]) if done < len(steps) else None
    names = ", ".join(p.name or p.email for p in added) or "no one new"
    rules = ", ".join(f"‘{s.get('name')}’" for s in due)
    minutes = max(int(s.get("after", 0)) for s in due)
    entry = desk.audit(card, "escalated", "system", "system", now,
                       f"unanswered after {minutes} minutes: added {names} (escalation {rules})")
    try:
        return desk.cards.amend_card(card, now, (entry,), audience=(*card.audience, *(p.id for p in added)),
                                     escalation={**escalation, "done": done}, escalate_at=next_at,
                                     notify=tuple(p.id for p in added))
    except Moved:
        return None


def escalate_due(desk: CardDesk, now: int, limit: int = 50) -> int:
    """The sweep's step: every pending card whose escalation is due at ``now``; how many escalated.
    One card's trouble never stops the sweep."""
    escalated = 0
    for card in desk.cards.escalations_due(now, limit):
        try:
            if escalate(desk, card, now) is not None:
                escalated += 1
        except Exception:  # logged; the next sweep tries it again
            log.exception("escalating card %s failed", card.id)
    return escalated


