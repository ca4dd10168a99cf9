"""An answer given outside the confirm page — in the client, or with a code — to a request that
may already have a card.

One request has at most one live card, whatever path it took. So an answer resolves *the
request's card*: a yes to a request whose card waits confirms that very card (one winner, the
same card id; a click on it afterwards is refused as already answered); a no declines it. If that
card was decided after the question was put (declined or withdrawn on the page, expired, already
run), the answer is refused with the card's state and nothing runs: an older yes never overrides a
newer no. With no card at all, the answer files one already decided, in one transaction with its
effect.

The :class:`~.question.Answer` is passed down to that commit and rides in it: no read first (the
filing claims the request as of ``asked_at`` in its own transaction, and a request that turns out
to be held raises :class:`~countersign.store.errors.Taken` with its card, decided from here), and
a 2026-07-28 answer's nonce is spent by the first commit that records it — or on its own, by
:func:`resolve`, when the answer ends without one.
"""

from __future__ import annotations

from ..core.card_states import CardState, Refusal, refusal_for
from ..store.cards import Card
from ..store.errors import Replayed, Taken
from .desk import CardDesk
from .errors import AnswerReplayed
from .new_cards import new_card
from .question import Answer, Question
from .runner import BUSY_MESSAGE, run_card, run_new

ATTEMPTS = 3


def resolve(desk: CardDesk, q: Question, answer: Answer, yes: bool, reason: str | None = None) -> Card:
    """The request's card once ``answer`` resolved it: run (``yes``) or declined with ``reason``.

    A nonce the answer carries is spent by its first commit; if it ends without one (a refusal, a
    no to a card already decided), the nonce is spent on its own then. Either way a nonce spent
    before raises :class:`AnswerReplayed` instead of the outcome."""
    try:
        card = say_yes(desk, q, answer) if yes else say_no(desk, q, answer, reason)
    except Replayed:
        raise AnswerReplayed() from None
    except Exception:
        if answer.nonce is not None and not desk.limits.use_nonce(*answer.nonce, q.ctx.now):
            raise AnswerReplayed() from None
        raise
    if answer.nonce is not None and not desk.limits.use_nonce(*answer.nonce, q.ctx.now):
        raise AnswerReplayed()
    return card


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


def say_yes(desk: CardDesk, q: Question, answer: Answer) -> Card:
    """Run the request once: a new card filed decided with the effect, or, when a card holds the
    request, that card if it waits. No read first: the filing claims the request in its own
    transaction, and a held request raises ``Taken`` with the card that holds it."""
    asked_at = q.ctx.now if answer.asked_at is None else answer.asked_at
    card: Card | None = None
    for _ in range(ATTEMPTS):
        try:
            if card is not None:
                desk.check_ticket(card, desk.now(), answer.actor, answer.channel)
                conn = q.ctx.connection
                mine = conn if conn is not None and conn.id == card.connection_id else None
                return run_card(desk, card, q.ctx.person, answer, workspace=q.ctx.workspace, connection=mine)
            return run_new(desk, q, answer)
        except Taken as taken:  # a card holds the request: answer that one, or claim as any filing
            card = _card_of(taken.card, asked_at)
            if card is None:
                answer.asked_at = None
    raise Refusal(refusal_for(CardState.RUNNING, CardState.COMPLETED).reason, BUSY_MESSAGE)


def say_no(desk: CardDesk, q: Question, answer: Answer, reason: str | None) -> Card:
    """Decline the request: its waiting card, or a new card filed declined (so an identical call
    right after gets the decline, not a fresh question). Claimed as :func:`say_yes` claims."""
    asked_at = q.ctx.now if answer.asked_at is None else answer.asked_at
    card: Card | None = None
    for _ in range(ATTEMPTS):
        try:
            if card is not None:
                return desk.decline(card, desk.now(), answer, reason)
            new = new_card(q, answer.channel, desk.now(), desk.keyring, desk.settings.card_ttl)
            return desk.decline(new, desk.now(), answer, reason, new=True)
        except Taken as taken:
            try:
                card = _card_of(taken.card, asked_at)
            except Refusal:  # decided already: a no changes nothing; the reply shows how it ended
                return taken.card
            if card is None:
                answer.asked_at = None
    raise Refusal(refusal_for(CardState.RUNNING, CardState.DECLINED).reason, BUSY_MESSAGE)
