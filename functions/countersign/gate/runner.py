"""Running a confirmed request: the one place an action's effect is committed.

Every yes ends here — a click on the confirm page, an answer in the client, a code — for a card
that waits (:func:`run_card`) or for a request that had none yet (:func:`run_new`, which files the
card already decided). The effect commits in the same transaction as the card's move out of
``pending``, with its audit entry and its ticket spent; so the request runs exactly once, or not
at all and the card still waits.

A write whose expectation failed (another change landed between this plan's reads and its
commit) is no drift: the request is planned again on fresh state and, while the fingerprint still
matches what the person saw, staged and committed again (up to :data:`ATTEMPTS` times).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

from ..core.card_states import CHANGED_MESSAGE, CardState, Refusal, RefusalReason
from ..core.crash_points import crash_point
from ..core.ids import new_id
from ..core.statement import statement_mismatch
from ..store.cards import Card, CardCommit
from ..store.connections import Connection
from ..store.errors import Conflict
from ..store.workspaces import Person, Workspace
from ..toolkit import ActionError, Effect, Phase, Unavailable
from .desk import CardDesk
from .edit_words import edit_message
from .errors import DriftError
from .new_cards import new_card
from .passkey_policy import refusal_message
from .question import Answer, Question
from .quorum_rules import approved_words, approvers
from .refusals import record_refusal

log = logging.getLogger("countersign.gate")

ATTEMPTS = 5
WAITS_MESSAGE = "The card still waits."
BUSY_MESSAGE = (
    "Other changes to the same records kept landing at the same moment; nothing ran and the request "
    "still waits. Try again."
)


def idempotency_key(card: Card) -> str:
    """The key an outside call of this card's effect is made with, the same on every retry."""
    return f"countersign-{card.id}"


def run_card(desk: CardDesk, card: Card, person: Person, answer: Answer, *, workspace: Workspace | None = None,
             connection: Connection | None = None) -> Card:
    """Confirm the pending ``card`` for ``person`` with ``answer``: plan again from its stored
    arguments, refuse drift (the card is closed as changed), commit the effect with the card.
    ``answer.passkey``: the verified assertion over the card's statement (countersign.identity.passkeys),
    recorded with the move; a card under the workspace's passkey policy runs with nothing else. ``workspace`` and
    ``connection``: the card's, as this request just read them (read again only to re-plan after
    a raced write)."""
    def question_at(now: int, attempt: int) -> Question:
        if attempt:
            return desk.question_of(card, person, now)
        return desk.question_of(card, person, now, workspace=workspace, connection=connection)

    return _run(desk, card, question_at, answer, new=False)


def run_new(desk: CardDesk, q: Question, answer: Answer) -> Card:
    """A yes given in the client (or with a code) to a request with no live card: the card is
    filed already decided, in the same transaction as the effect. Drift raises :class:`DriftError`
    (there is no card to close); a live twin filed meanwhile raises :class:`~countersign.store.errors.Taken`.
    The question was planned for this answer just now: the card is made, and first tried, at its time."""
    card = new_card(q, answer.channel, q.ctx.now, desk.keyring, desk.settings.card_ttl)
    return _run(desk, card, lambda now, attempt: q.replan(now), answer, new=True, first=q)


def _passkey_check(desk: CardDesk, card: Card, q: Question, answer: Answer, now: int, new: bool) -> None:
    """:class:`Refusal` ``passkey_required`` (nothing runs; an audit entry for a stored card) when
    the policy needs a passkey and this yes has none, or one signed for something else. Checked
    when the yes carries a passkey or the policy covers the question."""
    passkey = answer.passkey
    problem = "passkey required" if passkey is None else statement_mismatch(str(passkey.get("statement", "")), card)
    if problem is None:
        return
    if not new:
        record_refusal(desk.cards, card, answer.actor, answer.channel, now, problem)
    message = refusal_message(q.tool) if passkey is None else f"The passkey confirmation was refused: {problem}. " \
        "Nothing ran."
    raise Refusal(RefusalReason.PASSKEY_REQUIRED, message)


check_passkey = _passkey_check  # (a quorum's vote that does not run the card yet is checked as a yes is)


def _run(desk: CardDesk, card: Card, question_at: Callable[[int, int], Question], answer: Answer, new: bool,
         first: Question | None = None) -> Card:
    """Plan (``first``, the question already planned for the first attempt, else ``question_at``),
    refuse what the passkey policy covers, stage the effect and commit it with the card; planned
    again on fresh state after a raced write."""
    for attempt in range(ATTEMPTS):
        now = first.ctx.now if attempt == 0 and first is not None else desk.now()
        try:
            q = first if attempt == 0 and first is not None else question_at(now, attempt)
        except DriftError as drift:
            if new:
                raise
            raise desk.refuse_changed(card, now, answer, f"{CHANGED_MESSAGE} {drift.message}") from None
        except Unavailable as exc:  # no drift: the card is left as it was, still pending, and may be tried again
            if new:
                raise
            raise Unavailable(f"{exc.message} {WAITS_MESSAGE}", exc.field, exc.code) from None
        if (answer.passkey is not None or q.needs_passkey) and answer.grant is None:
            # (a standing grant covers a call the policy covers only if it was granted with the passkey)
            _passkey_check(desk, card, q, answer, now, new)
        try:
            effect = q.effect()
        except ActionError as exc:
            return fail(desk, card, now, answer, exc.message, new=new)
        except Exception:
            log.exception("action %s failed on card %s", q.tool, card.id)
            return fail(desk, card, now, answer, f"{q.tool} failed while running; nothing was done.", new=new)
        try:
            return _commit(desk, card, q, effect, now, answer, new)
        except Conflict:
            time.sleep(random.uniform(0, 0.01 * 2**attempt))
    raise Refusal(RefusalReason.BUSY, BUSY_MESSAGE)


def _commit(desk: CardDesk, card: Card, q: Question, effect: Effect, now: int, answer: Answer, new: bool) -> Card:
    passkey = answer.passkey
    detail = "signed with a passkey" if passkey else None
    if answer.grant is not None:  # the card names the grant that ran it, in its audit entry and its result
        detail = f"under standing grant ‘{answer.grant.details.get('name', '')}’ ({answer.grant.grant_id})"
    if card.edited and card.edited.get("from"):  # a person's edit: the confirming entry says what it ran with
        detail = "; ".join(x for x in (detail, edit_message(card.edited)) if x)
    if answer.votes is not None and card.quorum:  # a quorum's last yes: the entry names every approver
        detail = "; ".join(x for x in (approved_words(card.quorum, answer.votes), detail) if x)
    if effect.single:
        body = _body(card, q, effect.result, answer)
        crash_point("before_commit")
        done = desk.record(card, CardState.COMPLETED, now, answer, new=new, detail=detail,
                           writes=effect.all_writes(), result=body, passkey=passkey)
        desk.event("card_confirmed")
        crash_point("after_commit")
        return done
    # Several steps: the first commits with the card's move to running; each further one on its own.
    phases = list(effect.phases)
    run = {"steps": effect.steps, "done": 0, "outside": effect.outside.label if effect.outside else None}
    if effect.outside is not None and not effect.outside.resumable:
        run["resumable"] = False
    first = Phase("") if effect.outside else phases.pop(0)
    if not effect.outside:
        run["done"] = 1
    lease = now + desk.settings.run_lease  # past it, the runner is presumed dead and recovery settles it
    crash_point("before_commit")
    running = desk.record(card, CardState.RUNNING, now, answer, new=new,
                          detail="; ".join(x for x in (first.label, detail if answer.grant or card.edited or
                                                       answer.votes else None) if x) or None,
                          writes=first.writes, run=run, lease_until=lease, passkey=passkey)
    desk.event("card_confirmed")
    crash_point("after_step")
    return continue_run(desk, running, q, effect, phases, answer)


def _body(card: Card, q: Question, result: dict, answer: Answer) -> dict:
    """What a completed card keeps as its result: the effect's result and next steps; the grant
    that ran it; a person's edit it ran with (the original arguments, what changed, by whom, and the
    sentence the agent is told)."""
    body: dict = {"result": result, "next": [s.to_dict() for s in q.action.next_steps(result, q.ctx)]}
    if answer.grant is not None:
        body["grant"] = {"id": answer.grant.grant_id, "name": answer.grant.details.get("name", "")}
    if answer.votes is not None and card.quorum:  # every approver, as the receipt and the agent are told
        body["quorum"] = {"rule": card.quorum.get("name"), "needs": card.quorum.get("needs"),
                          "approvers": [{"id": v.get("by"), "name": v.get("name"), "at": v.get("at"),
                                         "passkey": bool(v.get("passkey"))} for v in approvers(answer.votes)]}
        body["message"] = f"Ran after {approved_words(card.quorum, answer.votes)}."
    if card.edited and card.edited.get("from"):
        edited = card.edited
        body["edited"] = {"from": edited["from"], "by": edited.get("byName", ""), "original": edited.get("original"),
                          "arguments": card.arguments, "changes": edited.get("changes", [])}
        body["message"] = edit_message(edited)
    return body


def continue_run(desk: CardDesk, card: Card, q: Question, effect: Effect, phases: list[Phase], by: Answer) -> Card:
    """The rest of a running card's steps: the outside call (if not made yet), then each phase,
    ``by`` the answer that started it (or the recovery that resumes it)."""
    run = dict(card.run or {})
    result = dict(effect.result)
    if effect.outside is not None and run.get("done", 0) == 0:
        try:
            result.update(effect.outside.call(idempotency_key(card)))
        except ActionError as exc:
            return fail(desk, card, desk.now(), by, exc.message, run=run)
        crash_point("after_outside")
        run["done"] = 1
    remaining = phases or [Phase("")]
    for index, phase in enumerate(remaining):
        now = desk.now()
        run = dict(run, done=run["done"] + (1 if phase.label or phase.writes else 0))
        last = index == len(remaining) - 1
        try:
            if last:
                body = _body(card, q, result, by)
                return desk.record(card, CardState.COMPLETED, now, by, writes=phase.writes, result=body, run=run)
            card = desk.commit(CardCommit(card, CardState.RUNNING, now, (), phase.writes, run=run,
                                          lease_until=now + desk.settings.run_lease, step=True), by)
            crash_point("after_step")
        except Conflict as conflict:
            reason = phase.failure or q.action.drift_message
            what = q.action.moved(conflict, q.ctx)
            if what:
                reason = f"{reason} (What moved: {what}.)"
            return fail(desk, card, now, by, reason, run=dict(run, done=run["done"] - 1))
    raise AssertionError("unreachable: the last phase returns")  # pragma: no cover


def progress(run: dict | None) -> tuple[list[str], list[str]]:
    """(steps that ran, steps that did not) of a card's run record."""
    steps = [s for s in (run or {}).get("steps", []) if s]
    done = (run or {}).get("done", 0)
    return steps[:done], steps[done:]


def report(message: str, run: dict | None) -> str:
    """``message``, and precisely which steps of the action ran and which did not."""
    ran, left = progress(run)
    if not ran:
        return message
    parts = [message.rstrip(". ") + "."]
    parts.append("Done: " + "; ".join(ran) + ".")
    if left:
        parts.append("Not done: " + "; ".join(left) + ".")
    return " ".join(parts)


def fail(desk: CardDesk, card: Card, now: int, by: Answer, message: str, *, new: bool = False,
         run: dict | None = None) -> Card:
    """Close the card as failed (nothing further ran), saying why and what had run before."""
    text = report(message, run if run is not None else card.run)
    ran, left = progress(run if run is not None else card.run)
    body: dict = {"error": text}
    if ran:
        body.update(done=ran, not_done=left)
    return desk.record(card, CardState.FAILED, now, by, detail=text, new=new, result=body, run=run)


def run_unheld(desk: CardDesk, q: Question) -> dict:
    """A call that runs at once (its class does not hold it here): the effect is committed with no
    card, re-planned on fresh state if a write raced another. Returns the result and next steps.
    An outside call is made with one key for the whole call, however many times it is re-planned."""
    key = f"countersign-{new_id('run_')}"
    for attempt in range(ATTEMPTS):
        effect = q.effect()
        result = dict(effect.result)
        try:
            if effect.outside is not None:
                result.update(effect.outside.call(key))
            for phase in effect.phases:
                desk.docs.write_docs(q.ctx.workspace.id, list(phase.writes))
        except Conflict:
            if attempt == ATTEMPTS - 1:
                break
            time.sleep(random.uniform(0, 0.01 * 2**attempt))
            q = Question.of(q.action, q.arguments, q.ctx.refreshed(desk.now()), counts=q.counts)
            continue
        return {"result": result, "next": [s.to_dict() for s in q.action.next_steps(result, q.ctx)]}
    raise ActionError(BUSY_MESSAGE)
