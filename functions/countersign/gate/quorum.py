"""Quorum: a held request that needs the approval of several people (docs/policy.md, "Quorum").

A card filed under a quorum rule (:mod:`.quorum_rules`, ``Card.quorum``) waits on its person and on
each member the rule lets approve (its audience). Each approval is its own act on the confirm page:

* **Not the last one needed**: the card is planned again (drift closes it as changed, as a Confirm
  would), the passkey is checked where the policy asks, and the vote is written by one conditional
  write on the version read (:meth:`~countersign.store.cards.CardStore.amend_card`), with its audit
  entry. The card still waits; its ticket is not spent.
* **The last one needed** is a Confirm: the runner's one path (:func:`.runner.run_card`), drift
  re-checked, the effect committed exactly once with the card's move, every vote written with it,
  its audit entry and result naming every approver. Two people giving the last approval at once:
  both commit on the same version, exactly one wins, the other is told it already ran.

One person counts once, whatever session they use: a second vote of theirs is refused with a
sentence and writes nothing. A vote that lost a race to another (the version moved while the card
still waits) is decided again on the card as it is now.

A no: with the rule's ``decline: any`` (and always from the card's own person when the rule does not
let them approve: it is their agent's request), the card is declined at once. With ``majority`` it
is recorded as a vote, and the card is declined once more than half of those who may approve said
no, or too few are left to reach the number needed.
"""

from __future__ import annotations

from typing import Any

from ..core.card_states import CHANGED_MESSAGE, CardState, Refusal, RefusalReason, refusal_for
from ..store.cards import Card
from ..store.connections import Connection
from ..store.errors import Moved
from ..store.workspaces import Person, Workspace
from .desk import CardDesk
from .errors import DriftError
from .question import Answer
from .quorum_rules import approvers, qualifies
from .runner import BUSY_MESSAGE, check_passkey, run_card

ATTEMPTS = 5


def may_approve(card: Card, person: Person) -> bool:
    """Whether ``person``'s approval of the quorum card ``card`` can count: eligible when it was
    filed, or added since by an escalation (its audience), and named by its rule as they are now."""
    quorum = card.quorum or {}
    return person.id in (*(quorum.get("eligible") or []), *card.audience) and qualifies(quorum, person)


def standing(card: Card, viewer: Person) -> dict[str, Any] | None:
    """Where a quorum card stands, for its view: who approved (and said no), how many more are
    needed and of whom, whether the viewer may still approve (and whether an escalation added them),
    and which approval their click is."""
    quorum = card.quorum
    if quorum is None:
        return None
    viewer_id = viewer.id
    yes = approvers(card.votes)
    no = [v for v in card.votes if v.get("vote") == "no"]
    needs = int(quorum.get("needs", 1))
    voted = next((v.get("vote") for v in card.votes if v.get("by") == viewer_id), None)
    return {
        "rule": quorum.get("name"), "needs": needs, "of": quorum.get("words", ""),
        "approvedBy": [str(v.get("name") or "") for v in yes],
        "declinedBy": [str(v.get("name") or "") for v in no],
        "more": max(0, needs - len(yes)),
        "you": voted,  # "yes", "no" or None
        "youMayApprove": voted is None and may_approve(card, viewer),
        # added to the card by an escalation after it was filed (the card says so beside its approvals)
        "addedByEscalation": viewer_id in card.audience and viewer_id not in (quorum.get("eligible") or []),
        "yourApproval": min(len(yes) + 1, needs),
        "decline": quorum.get("decline", "any"),
    }


def _owner(desk: CardDesk, card: Card, person: Person) -> Person:
    """The person the card's request is of: it is planned and run as theirs, whoever approves it."""
    return person if person.id == card.person_id else desk.workspaces.get_person(card.workspace_id, card.person_id)


def _check_approver(card: Card, person: Person) -> None:
    quorum = card.quorum or {}
    earlier = next((v for v in card.votes if v.get("by") == person.id), None)
    if earlier is not None:
        said = "approved" if earlier.get("vote") == "yes" else "declined"
        raise Refusal(RefusalReason.ALREADY_ANSWERED,
                      f"You already {said} this card; one person counts once, whichever session they use. "
                      f"{_still(card)} Nothing was written.")
    if not may_approve(card, person):
        raise Refusal(RefusalReason.NOT_YOURS,
                      f"This card needs {quorum.get('needs')} approvals of {quorum.get('words')}, and you are not "
                      "one of them, so your approval cannot count. Nothing was written.")


def _still(card: Card) -> str:
    quorum = card.quorum or {}
    more = max(0, int(quorum.get("needs", 1)) - len(approvers(card.votes)))
    return f"It needs {more} more of {quorum.get('words')}." if more else "It has every approval it needs."


def approve(desk: CardDesk, card: Card, person: Person, answer: Answer, *, workspace: Workspace | None = None,
            connection: Connection | None = None) -> Card:
    """``person``'s approval of the quorum card ``card`` (pending, its ticket checked): recorded, or,
    the last one needed, the card run. See the module docstring."""
    owner = _owner(desk, card, person)
    for _ in range(ATTEMPTS):
        _check_approver(card, person)
        now = desk.now()
        vote: dict[str, Any] = {"by": person.id, "name": person.name or person.email, "vote": "yes", "at": now,
                                "channel": answer.channel, "passkey": answer.passkey is not None}
        votes = (*card.votes, vote)
        if len(approvers(votes)) >= int((card.quorum or {}).get("needs", 1)):
            if answer.passkey is not None:  # checked by the run, written with it (the receipt carries it)
                vote["evidence"] = answer.passkey
            answer.votes = votes
            try:
                return run_card(desk, card, owner, answer, workspace=workspace, connection=connection)
            except Refusal:
                fresh = desk.cards.get_card(card.workspace_id, card.id, desk.now())
                if fresh.state is not CardState.PENDING or fresh.version == card.version:
                    raise  # answered first (or refused for its own reason): as any Confirm is told
                card = fresh  # lost to another vote while it still waits: decide again
                continue
        try:
            q = desk.question_of(card, owner, now, workspace=workspace, connection=connection)
        except DriftError as drift:
            raise desk.refuse_changed(card, now, answer, f"{CHANGED_MESSAGE} {drift.message}") from None
        if answer.passkey is not None or q.needs_passkey:
            check_passkey(desk, card, q, answer, now, False)
            if answer.passkey is not None:
                vote["evidence"] = answer.passkey  # (the receipt carries each approver's signed statement)
        yes = len(approvers(votes))
        detail = f"approval {yes} of {(card.quorum or {}).get('needs')}" + (
            "; signed with a passkey" if answer.passkey is not None else "")
        entry = desk.audit(card, "approved", answer.actor, answer.channel, now, detail)
        try:
            return desk.cards.amend_card(card, now, (entry,), votes=votes)
        except Moved:
            card = _again(desk, card)
    raise Refusal(RefusalReason.BUSY, BUSY_MESSAGE)


def decline(desk: CardDesk, card: Card, person: Person, answer: Answer, reason: str | None) -> Card:
    """``person``'s no to the quorum card ``card``: it is declined, or (``decline: majority``) the
    no is recorded until enough said it. See the module docstring."""
    for _ in range(ATTEMPTS):
        if card.state is not CardState.PENDING:
            raise refusal_for(card.state, CardState.DECLINED)
        quorum = card.quorum or {}
        if any(v.get("by") == person.id for v in card.votes):
            _check_approver(card, person)  # (raises: one person counts once)
        name = person.name or person.email
        now = desk.now()
        eligible = list(quorum.get("eligible") or [])
        noes = [*(v for v in card.votes if v.get("vote") == "no"), {"by": person.id, "name": name}]
        counted = person.id in eligible
        ends = (quorum.get("decline", "any") == "any" or not counted or 2 * len(noes) > len(eligible)
                or len(eligible) - len(noes) < int(quorum.get("needs", 1)))
        said = f"Declined by {', '.join(str(v['name']) for v in noes)}" + (f": {reason}" if reason else "")
        if ends:
            return desk.decline(card, now, answer, said)
        vote = {"by": person.id, "name": name, "vote": "no", "at": now, "channel": answer.channel}
        if reason:
            vote["reason"] = reason
        entry = desk.audit(card, "voted no", answer.actor, answer.channel, now, reason)
        try:
            return desk.cards.amend_card(card, now, (entry,), votes=(*card.votes, vote))
        except Moved:
            card = _again(desk, card)
    raise Refusal(RefusalReason.BUSY, BUSY_MESSAGE)


def _again(desk: CardDesk, card: Card) -> Card:
    """The card as it is now; :class:`Refusal` if it no longer waits (its answer came first)."""
    fresh = desk.cards.get_card(card.workspace_id, card.id, desk.now())
    if fresh.state is not CardState.PENDING:
        raise refusal_for(fresh.state, CardState.COMPLETED)
    return fresh
