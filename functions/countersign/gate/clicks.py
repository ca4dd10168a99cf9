"""A person's clicks on the confirm page: open a card, Confirm, Decline, and reopen a request
they declined. Confirm and Decline are the same clicks wherever they are made: a button of the
card's Slack message comes here too (``channel="slack"``, which the audit trail records).

Opening a card settles one a dead process left running past its lease (:mod:`.recovery`); a
Confirm runs the card (:mod:`.runner`). Both stand above the desk (:mod:`.desk`), which keeps
the cards themselves.

Each click passes down the counts of its request against the request limits (``counts``, read with
the person's session), so the write that answers or files its card takes them in its transaction.
"""

from __future__ import annotations

from ..core.card_states import CardState, Refusal, RefusalReason, refusal_for
from ..identity.accounts import REVOKED_REASON
from ..store.cards import Card
from ..store.connections import Connection
from ..store.limits import RequestCounts
from ..store.workspaces import Person, Workspace
from ..toolkit import ActionError
from . import quorum
from .desk import CardDesk
from .question import Answer
from .recovery import settle_if_lapsed
from .runner import run_card


def open_card(desk: CardDesk, workspace_id: str, person: Person, card_id: str, card: Card | None = None,
              counts: RequestCounts | None = None) -> Card:
    """One card of ``person``, as it stands now: a card a dead process left running past its
    lease is settled first (:mod:`.recovery`, the settling taking ``counts``, the request's).
    :class:`Refusal` ``not_yours`` for another's card. ``card``: this card as this request has
    just read it (with its session), not read again."""
    now = desk.now()
    if card is not None and (card.id, card.workspace_id) == (card_id, workspace_id):
        card = card.at(now)
    else:
        card = desk.cards.get_card(workspace_id, card_id, now)
    if not card.may_answer(person.id):  # its person, or one of its audience (a quorum, an escalation)
        raise Refusal(RefusalReason.NOT_YOURS, "This card waits on someone else; only they can answer it.")
    return settle_if_lapsed(desk, card, now, counts)


def confirm_click(desk: CardDesk, workspace_id: str, person: Person, card_id: str, passkey: dict | None = None, *,
                  workspace: Workspace | None = None, connections: dict[str, Connection] | None = None,
                  card: Card | None = None, channel: str = "page", counts: RequestCounts | None = None) -> Card:
    """A signed-in person's Confirm: verify the ticket, re-plan, refuse drift, run once.
    ``passkey``: the assertion the confirm API verified over this card's statement.
    ``workspace`` and ``card``: as this request read them (not read again); ``connections``
    receives the connection the card came from, so the caller can name it without reading it again."""
    card = open_card(desk, workspace_id, person, card_id, card, counts)
    now = desk.now()
    if card.state is not CardState.PENDING:
        if card.state is CardState.EXPIRED:
            desk.event("card_expired")
        raise refusal_for(card.state, CardState.COMPLETED)
    actor = f"person:{person.id}"
    desk.check_ticket(card, now, actor, channel)
    connection = None
    if card.connection_id:
        connection = desk.connections.get_connection(workspace_id, card.connection_id)
        if connections is not None:
            connections[connection.id] = connection
        if connection.revoked:  # revoking withdraws pending cards; one filed as the revoke ran may be left
            desk.withdraw(card, now, actor, channel, REVOKED_REASON.format(name=connection.name), counts)
            raise Refusal(
                RefusalReason.WITHDRAWN,
                "This card was withdrawn: the connection that asked was revoked. Nothing ran.",
            )
    answer = Answer(actor, channel, passkey=passkey, counts=counts)
    if card.quorum is not None:  # one approval of several (countersign.gate.quorum)
        return quorum.approve(desk, card, person, answer, workspace=workspace, connection=connection)
    if card.person_id != person.id:  # one of its audience confirms the request of its person, as theirs
        person = desk.workspaces.get_person(workspace_id, card.person_id)
    return run_card(desk, card, person, answer, workspace=workspace, connection=connection)


def decline_click(desk: CardDesk, workspace_id: str, person: Person, card_id: str, reason: str | None,
                  card: Card | None = None, channel: str = "page", counts: RequestCounts | None = None) -> Card:
    card = open_card(desk, workspace_id, person, card_id, card, counts)
    reason = (reason or "").strip()[:500] or None
    answer = Answer(f"person:{person.id}", channel, counts=counts)
    if card.quorum is not None:
        return quorum.decline(desk, card, person, answer, reason)
    return desk.decline(card, desk.now(), answer, reason)


def reopen(desk: CardDesk, workspace_id: str, person: Person, card_id: str, card: Card | None = None,
           counts: RequestCounts | None = None) -> Card:
    """A person's own click on a request they declined (from History): a new pending card for
    the same request, filed by them with a fresh ticket and deadline, and no email. The person
    can change their mind; an agent still cannot ask again within
    :data:`~countersign.core.card_states.ANSWER_MEMORY_SECONDS`.

    Only the request's latest card, declined by a person, can be reopened, and only while the
    request is still exactly what it showed (planned again now: :class:`Refusal` ``changed``
    otherwise). One live card per request still holds: if a card of the request is live, that
    card is returned (``store.cards.file_card``).
    """
    card = open_card(desk, workspace_id, person, card_id, card, counts)
    if card.person_id != person.id:
        raise Refusal(RefusalReason.NOT_YOURS, "Only the person this request waited on can reopen it.")
    if card.state is not CardState.DECLINED or card.refusal:
        raise Refusal(RefusalReason.ALREADY_ANSWERED,
                      "Only a request you declined can be reopened; this one was not.")
    now = desk.now()
    latest = desk.cards.latest_card(workspace_id, person.id, card.tool, card.fingerprint, now)
    if latest is not None and latest.id != card.id:
        if latest.state in (CardState.PENDING, CardState.RUNNING):
            return latest
        raise Refusal(RefusalReason.ALREADY_ANSWERED,
                      "This request was asked again after this answer; reopen or answer the newest one.")
    if card.connection_id and desk.connections.get_connection(workspace_id, card.connection_id).revoked:
        raise Refusal(RefusalReason.WITHDRAWN,
                      "The connection that asked was revoked, so this request cannot be reopened.")
    try:
        q = desk.question_of(card, person, now, counts=counts)
    except ActionError:
        raise Refusal(RefusalReason.CHANGED, "What this request describes changed since you declined it, "
                      "so it cannot be reopened as it was. Nothing was filed; ask the agent for a fresh "
                      "request.") from None
    return desk.file_reopened(q, card, person, now)
