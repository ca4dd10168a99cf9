"""An answer given outside the confirm page — in the client, or with a code — to a request that
may already have a card.

One request has at most one live card, whatever path it took. So an answer resolves *the
request's card*: a yes to a request whose card waits confirms that very card (one winner, the
same card id; a click on it afterwards is refused as already answered); a no declines it. If that
card was decided after the question was put (declined or withdrawn on the page, expired, already
run), the answer is refused with the card's state and nothing runs: an older yes never overrides a
newer no. With no card at all, the answer files one already decided, in one transaction with its
effect.
"""

from __future__ import annotations

from ..core.cards import CardState, Refusal, refusal_for
from ..store.errors import Taken
from ..store.records import Card
from .cards import CardDesk
from .question import Question
from .runner import BUSY_MESSAGE, run_card, run_new

ATTEMPTS = 3


def decided_at(card: Card) -> int:
    """When a card stopped waiting: its last move, or its deadline if it lapsed untouched."""
    if card.state is CardState.EXPIRED and card.updated_at < card.expires_at:
        return card.expires_at
    return card.updated_at


def too_late(card: Card) -> Refusal:
    """The refusal of an answer that came after its request's card was decided."""
    first = refusal_for(card.state, CardState.COMPLETED)
    return Refusal(first.reason, f"{first.message} This answer came after that; nothing ran.")


def _card_of(desk: CardDesk, q: Question, asked_at: int) -> Card | None:
    """The request's card this answer is about: live, or decided since the question was put.
    None when the answer starts afresh. :class:`Refusal` for a card already decided since."""
    now = desk.now()
    card = desk.store.latest_card(q.ctx.workspace.id, q.ctx.person.id, q.tool, q.fingerprint, now)
    if card is None:
        return None
    if card.state is CardState.RUNNING:
        raise refusal_for(CardState.RUNNING, CardState.COMPLETED)
    if card.state is CardState.PENDING:
        return card
    if decided_at(card) >= asked_at:
        raise too_late(card)
    return None


def say_yes(desk: CardDesk, q: Question, channel: str, actor: str, asked_at: int) -> Card:
    """Run the request once: its waiting card, or a new card filed decided with the effect."""
    for _ in range(ATTEMPTS):
        card = _card_of(desk, q, asked_at)
        try:
            if card is not None:
                desk.check_ticket(card, desk.now(), actor, channel)
                mine = q.ctx.connection if q.ctx.connection and q.ctx.connection.id == card.connection_id else None
                return run_card(desk, card, q.ctx.person, channel, actor, workspace=q.ctx.workspace, connection=mine)
            return run_new(desk, q, channel, actor)
        except Taken:  # a card of this request was filed a moment ago: answer that one
            continue
    raise Refusal(refusal_for(CardState.RUNNING, CardState.COMPLETED).reason, BUSY_MESSAGE)


def say_no(desk: CardDesk, q: Question, channel: str, actor: str, asked_at: int, reason: str) -> Card:
    """Decline the request: its waiting card, or a new card filed declined (so an identical call
    right after gets the decline, not a fresh question)."""
    for _ in range(ATTEMPTS):
        try:
            card = _card_of(desk, q, asked_at)
        except Refusal:  # decided already: a no changes nothing; the reply shows how it ended
            decided = desk.store.latest_card(q.ctx.workspace.id, q.ctx.person.id, q.tool, q.fingerprint, desk.now())
            assert decided is not None  # the refusal was about this request's card
            return decided
        try:
            if card is not None:
                return desk.decline(card, desk.now(), actor, channel, reason)
            return desk.decline(desk.new_card(q, channel, desk.now()), desk.now(), actor, channel, reason, new=True)
        except Taken:
            continue
    raise Refusal(refusal_for(CardState.RUNNING, CardState.DECLINED).reason, BUSY_MESSAGE)
