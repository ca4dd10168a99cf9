"""The card lifecycle as a small state machine (docs/how-a-held-write-travels.md, "The card lifecycle").

    pending → completed | failed                 (an answer: the effect commits with the card)
    pending → running → completed | failed       (an action of several steps; each further step
                                                  while running is recorded by its runner alone)
    pending → declined | withdrawn | expired
    pending → edited                             (a person edited its arguments: a new card, filed
                                                  in the same transaction, carries the request on)

Every other move is refused with a :class:`Refusal` naming the cause. A pending card whose
``expires_at`` has passed *is* expired, whatever the stored state says: expiry is checked on
every read and inside every transition, because DynamoDB deletes expired items lazily.
"""

from __future__ import annotations

import enum


class CardState(str, enum.Enum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    DECLINED = "declined"
    WITHDRAWN = "withdrawn"
    EXPIRED = "expired"
    EDITED = "edited"  # replaced by a new card with a person's edited arguments (docs/policy.md)

    @property
    def is_final(self) -> bool:
        return self not in (CardState.PENDING, CardState.RUNNING)


LEGAL_MOVES: dict[CardState, frozenset[CardState]] = {
    CardState.PENDING: frozenset({
        CardState.RUNNING, CardState.COMPLETED, CardState.FAILED,
        CardState.DECLINED, CardState.WITHDRAWN, CardState.EXPIRED, CardState.EDITED,
    }),
    CardState.RUNNING: frozenset({CardState.COMPLETED, CardState.FAILED}),
}


class RefusalReason(str, enum.Enum):
    CHANGED = "changed"
    WITHDRAWN = "withdrawn"
    EXPIRED = "expired"
    ALREADY_ANSWERED = "already_answered"
    BEING_CONFIRMED = "being_confirmed"
    NOT_YOURS = "not_yours"
    TAMPERED = "tampered"
    BUSY = "busy"
    PASSKEY_REQUIRED = "passkey_required"


class Refusal(Exception):
    """A move the lifecycle does not allow, with the reason a person or agent is told."""

    def __init__(self, reason: RefusalReason, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message


SPENT_MESSAGE = "This card was already answered: its ticket is spent. Nothing ran."

CHANGED_MESSAGE = (
    "This card was refused: what it describes changed since this card was drawn. "
    "Nothing ran; a fresh request is needed."
)


def effective_state(state: CardState | str, expires_at: int, now: int) -> CardState:
    """The state a reader must see: a pending card past its expiry is expired."""
    state = CardState(state)
    if state is CardState.PENDING and now >= expires_at:
        return CardState.EXPIRED
    return state


def refusal_for(current: CardState, target: CardState) -> Refusal:
    """Why ``current → target`` is not allowed, in words for a person or an agent."""
    if current is CardState.WITHDRAWN:
        return Refusal(RefusalReason.WITHDRAWN, "This card was withdrawn by the agent; nothing ran.")
    if current is CardState.EXPIRED:
        return Refusal(RefusalReason.EXPIRED, "This card expired before it was answered; nothing ran.")
    if current is CardState.RUNNING:
        if target is CardState.WITHDRAWN:
            return Refusal(
                RefusalReason.BEING_CONFIRMED, "This card is being confirmed right now and can no longer be withdrawn."
            )
        return Refusal(RefusalReason.BEING_CONFIRMED, "This card is already being confirmed.")
    if current in (CardState.COMPLETED, CardState.FAILED):
        if target is CardState.WITHDRAWN:
            return Refusal(
                RefusalReason.ALREADY_ANSWERED,
                "This card was already confirmed and its action ran; it can no longer be withdrawn.",
            )
        return Refusal(RefusalReason.ALREADY_ANSWERED, "This card was already confirmed.")
    if current is CardState.DECLINED:
        return Refusal(RefusalReason.ALREADY_ANSWERED, "This card was already declined.")
    if current is CardState.EDITED:
        return Refusal(RefusalReason.ALREADY_ANSWERED,
                       "This card was edited: a new card with the edited values replaced it. Nothing ran.")
    if target is CardState.EDITED:
        return Refusal(RefusalReason.ALREADY_ANSWERED, "This card was already answered; it can no longer be edited.")
    return Refusal(RefusalReason.ALREADY_ANSWERED, f"A {current.value} card cannot become {target.value}.")


def check_move(state: CardState | str, target: CardState | str, expires_at: int, now: int) -> CardState:
    """Return the state the card moves from, or raise :class:`Refusal`.

    Expiry only blocks moves out of ``pending``: a card that started running before its
    expiry may still finish.
    """
    target = CardState(target)
    current = CardState(state)
    if current is CardState.PENDING and target is not CardState.EXPIRED:
        current = effective_state(current, expires_at, now)
    if target in LEGAL_MOVES.get(current, frozenset()):
        return current
    raise refusal_for(current, target)


def check_step(state: CardState | str) -> CardState:
    """A further step of a running action (``running → running``): only the runner, who holds
    the card's current version, records one; to anyone else the card is being confirmed."""
    current = CardState(state)
    if current is CardState.RUNNING:
        return current
    raise refusal_for(current, CardState.RUNNING)


def reported_state(state: CardState | str) -> str:
    """What ``get_confirmation_status`` reports: a withdrawn card reads as declined."""
    state = CardState(state)
    if state is CardState.WITHDRAWN:
        return "declined"
    if state is CardState.RUNNING:
        return "pending"
    return state.value


# An identical request within this long of its card's answer (declined or completed) gets that
# answer; the request's claim is held as long, so a late filing returns the answered card.
ANSWER_MEMORY_SECONDS = 15 * 60


def request_held_until(target: CardState, now: int, refused: bool, forever: int) -> int:
    """Until when a request stays claimed by its card after a move to ``target``: for ever while
    it runs, for the answer memory once answered (declined or completed, not refused), else not."""
    if target is CardState.RUNNING:
        return forever
    if target in (CardState.DECLINED, CardState.COMPLETED) and not refused:
        return now + ANSWER_MEMORY_SECONDS
    return 0
