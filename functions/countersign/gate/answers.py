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
from .answering import claiming
from .cards import CardDesk
from .question import Question
from .runner import BUSY_MESSAGE, run_card, run_new

ATTEMPTS = 3


def too_late(card: Card) -> Refusal:
    """The refusal of an answer that came after its request's card was decided."""
    first = refusal_for(card.state, CardState.COMPLETED)
    return Refusal(first.reason, f"{first.message} This answer came after that; nothing ran.")


def _card_of(card: Card, asked_at: int) -> Card | None:
    """What this answer is about, given the card that holds its request (``Taken``): that card if
    it waits, None when the answer starts afresh (it was decided before the question was put).
    :class:`Refusal` for a card running, or decided since the question was put."""
    if card.state is CardState.RUNNING:
        raise refusal_for(CardState.RUNNING, CardState.COMPLETED)
    if card.state is CardState.PENDING:
        return card
    if card.decided_at() >= asked_at:
        raise too_late(card)
    return None


def say_yes(desk: CardDesk, q: Question, channel: str, actor: str, asked_at: int) -> Card:
    """Run the request once: a new card filed decided with the effect, or, when a card holds the
    request, that card if it waits. No read first: the filing claims the request in its own
    transaction, and a held request raises ``Taken`` with the card that holds it."""
    with claiming(asked_at) as answer:
        card: Card | None = None
        for _ in range(ATTEMPTS):
            try:
                if card is not None:
                    desk.check_ticket(card, desk.now(), actor, channel)
                    conn = q.ctx.connection
                    mine = conn if conn is not None and conn.id == card.connection_id else None
                    return run_card(desk, card, q.ctx.person, channel, actor, workspace=q.ctx.workspace,
                                    connection=mine)
                return run_new(desk, q, channel, actor)
            except Taken as taken:  # a card holds the request: answer that one, or claim as any filing
                card = _card_of(taken.card, asked_at)
                if card is None:
                    answer.asked_at = None
    raise Refusal(refusal_for(CardState.RUNNING, CardState.COMPLETED).reason, BUSY_MESSAGE)


def say_no(desk: CardDesk, q: Question, channel: str, actor: str, asked_at: int, reason: str) -> Card:
    """Decline the request: its waiting card, or a new card filed declined (so an identical call
    right after gets the decline, not a fresh question). Claimed as :func:`say_yes` claims."""
    with claiming(asked_at) as answer:
        card: Card | None = None
        for _ in range(ATTEMPTS):
            try:
                if card is not None:
                    return desk.decline(card, desk.now(), actor, channel, reason)
                return desk.decline(desk.new_card(q, channel, desk.now()), desk.now(), actor, channel, reason,
                                    new=True)
            except Taken as taken:
                try:
                    card = _card_of(taken.card, asked_at)
                except Refusal:  # decided already: a no changes nothing; the reply shows how it ended
                    return taken.card
                if card is None:
                    answer.asked_at = None
    raise Refusal(refusal_for(CardState.RUNNING, CardState.DECLINED).reason, BUSY_MESSAGE)
