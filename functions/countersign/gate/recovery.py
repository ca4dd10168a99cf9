"""Settling cards a dead process left ``running``.

A request that commits in one transaction is never left running: it completed, or it did not and
the card still waits. Only an action of several steps can be, between two of them; its card
records which steps committed (``run``) and holds a lease. Once the lease has lapsed the runner
is presumed dead, and the card is settled here — on read (:func:`settle_if_lapsed`, when a person
or an agent looks at it) and by the sweep (:func:`sweep`: at start-up and every minute locally,
on a schedule on AWS):

* a card that was waiting for its outside call is resumed: the call is made again with the same
  idempotency key (the outside service answers the first call's result), then the store's part
  commits once;
* one whose outside call has no idempotency key (``resumable`` false) is closed as ``failed``
  with *outcome unknown*: the call may have been sent, and is never sent again;
* any other is closed as ``failed`` saying exactly which steps ran and which did not, so the agent
  and the person know what to ask for next. Nothing runs twice.
"""

from __future__ import annotations

import logging

from ..core.card_states import CardState, Refusal
from ..store.cards import Card, CardCommit
from ..store.errors import NotFound
from ..store.limits import RequestCounts
from ..toolkit import ActionError
from .desk import CardDesk
from .errors import DriftError
from .question import Answer
from .runner import continue_run, fail

log = logging.getLogger("countersign.gate")

STOPPED = "This request stopped part-way: the process running it ended before it finished."
SYSTEM = "system"


def unknown(outside: str) -> str:
    """A card stopped while an outside call with no idempotency key may have been sent."""
    return (f"Outcome unknown: the process running this request ended after it may have started to {outside}, "
            "before an answer was recorded. It may or may not have run; it is not sent again.")


def _system(counts: RequestCounts | None = None) -> Answer:
    """Who settles a card a dead process left running: the system, not a person or an agent.
    ``counts``: the request's that looked at the card (None for the sweep), taken by the commit."""
    return Answer(SYSTEM, SYSTEM, counts=counts)


def settle_if_lapsed(desk: CardDesk, card: Card, now: int, counts: RequestCounts | None = None) -> Card:
    """``card``, settled first if a dead process left it running (``counts``: as :func:`recover`'s)."""
    if card.state is CardState.RUNNING and (card.lease_until or 0) <= now:
        return recover(desk, card, now, counts)
    return card


def recover(desk: CardDesk, card: Card, now: int, counts: RequestCounts | None = None) -> Card:
    """Settle one lapsed running card (see the module docstring). Another process settling it at
    the same moment wins or loses cleanly: the loser reads the outcome. ``counts``: those of the
    request that looked at the card, taken by the commit that settles it unless taken already."""
    try:
        run = card.run or {}
        if run.get("outside") and run.get("done", 0) == 0 and run.get("resumable") is False:
            settled = fail(desk, card, now, _system(counts), unknown(run["outside"]))
        elif run.get("outside") and run.get("done", 0) == 0:
            settled = _resume_outside(desk, card, now, counts)
        else:
            settled = fail(desk, card, now, _system(counts), STOPPED)
        desk.event("card_recovered")
        return settled
    except Refusal:
        return desk.cards.get_card(card.workspace_id, card.id, desk.now())


def _resume_outside(desk: CardDesk, card: Card, now: int, counts: RequestCounts | None) -> Card:
    """Take the card over (a new lease, one winner), plan it again, and finish it with the same key."""
    taken = desk.commit(CardCommit(card, CardState.RUNNING, now,
                                   (desk.audit(card, "recovered", SYSTEM, SYSTEM, now, "resumed"),),
                                   run=card.run, lease_until=now + desk.settings.run_lease, step=True,
                                   counts=counts))
    try:
        person = desk.workspaces.get_person(card.workspace_id, card.person_id)
        q = desk.question_of(card, person, now)
        effect = q.effect()
    except (DriftError, ActionError, NotFound) as exc:
        why = getattr(exc, "message", str(exc))
        outside = (card.run or {}).get("outside")
        return fail(desk, taken, now, _system(counts),
                    f"{STOPPED} It may have reached {outside}, and could not be resumed: {why}")
    if effect.outside is None or effect.outside.label != (card.run or {}).get("outside"):
        return fail(desk, taken, now, _system(counts), f"{STOPPED} Its effect is no longer the one confirmed.")
    return continue_run(desk, taken, q, effect, list(effect.phases), _system(counts))


def sweep(desk: CardDesk, now: int, limit: int = 50) -> int:
    """Settle every running card whose lease lapsed before ``now``; how many were settled."""
    settled = 0
    for card in desk.cards.running_cards(now, limit):
        try:
            recover(desk, card, now)
            settled += 1
        except Exception:  # one card's trouble never stops the sweep
            log.exception("recovering card %s failed", card.id)
    return settled
