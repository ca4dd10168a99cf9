"""The card lifecycle: the whole (state, target) matrix, expiry, reported state."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from countersign.core.card_states import (
    CHANGED_MESSAGE,
    LEGAL_MOVES,
    CardState,
    Refusal,
    RefusalReason,
    check_move,
    check_step,
    effective_state,
    reported_state,
)

S = CardState
R = RefusalReason
NOW = 1_000_000
LATER = NOW + 3600  # expiry well in the future: no move is blocked by time

LEGAL = {
    (S.PENDING, S.RUNNING),
    (S.PENDING, S.COMPLETED),  # an answer: the effect commits with the card, in one transaction
    (S.PENDING, S.FAILED),
    (S.PENDING, S.DECLINED),
    (S.PENDING, S.WITHDRAWN),
    (S.PENDING, S.EXPIRED),
    (S.PENDING, S.EDITED),  # a person's edit: a new card, filed in the same transaction, replaces it
    (S.RUNNING, S.COMPLETED),
    (S.RUNNING, S.FAILED),
}


def expected_reason(current: CardState, target: CardState) -> RefusalReason:
    if current is S.WITHDRAWN:
        return R.WITHDRAWN
    if current is S.EXPIRED:
        return R.EXPIRED
    if current is S.RUNNING:
        return R.BEING_CONFIRMED
    return R.ALREADY_ANSWERED  # completed, failed, declined; and pending → pending


ALL_PAIRS = list(itertools.product(list(CardState), list(CardState)))


def test_matrix_covers_every_pair():
    assert len(ALL_PAIRS) == 64
    assert {(a, b) for a, moves in LEGAL_MOVES.items() for b in moves} == LEGAL


@pytest.mark.parametrize("current, target", sorted(LEGAL, key=str))
def test_legal_moves_return_the_current_state(current, target):
    assert check_move(current, target, expires_at=LATER, now=NOW) is current
    assert check_move(current.value, target.value, expires_at=LATER, now=NOW) is current


@pytest.mark.parametrize("current, target", [p for p in ALL_PAIRS if p not in LEGAL], ids=str)
def test_every_other_move_is_refused_with_its_reason(current, target):
    with pytest.raises(Refusal) as info:
        check_move(current, target, expires_at=LATER, now=NOW)
    refusal = info.value
    assert refusal.reason is expected_reason(current, target)
    assert refusal.message and str(refusal) == refusal.message


def test_refusal_messages_say_which():
    def msg(current, target):
        with pytest.raises(Refusal) as info:
            check_move(current, target, expires_at=LATER, now=NOW)
        return info.value.message

    assert "withdrawn" in msg(S.WITHDRAWN, S.RUNNING)
    assert "expired" in msg(S.EXPIRED, S.RUNNING)
    assert "being confirmed" in msg(S.RUNNING, S.WITHDRAWN)
    assert "withdrawn" in msg(S.RUNNING, S.WITHDRAWN)
    assert "being confirmed" in msg(S.RUNNING, S.RUNNING)
    assert "ran" in msg(S.COMPLETED, S.WITHDRAWN)
    assert "already confirmed" in msg(S.FAILED, S.RUNNING)
    assert "declined" in msg(S.DECLINED, S.RUNNING)


def test_final_states():
    assert {s for s in CardState if s.is_final} == {S.COMPLETED, S.FAILED, S.DECLINED, S.WITHDRAWN, S.EXPIRED,
                                                     S.EDITED}


def test_final_states_have_no_moves():
    for state in CardState:
        if state.is_final:
            assert state not in LEGAL_MOVES
            for target in CardState:
                with pytest.raises(Refusal):
                    check_move(state, target, expires_at=LATER, now=NOW)


# --- expiry -----------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [S.RUNNING, S.DECLINED, S.WITHDRAWN])
@pytest.mark.parametrize("now", [NOW, NOW + 1, NOW + 86400])  # at and after expires_at
def test_pending_card_past_expiry_refuses_with_expired(target, now):
    with pytest.raises(Refusal) as info:
        check_move(S.PENDING, target, expires_at=NOW, now=now)
    assert info.value.reason is R.EXPIRED


@pytest.mark.parametrize("target", [S.RUNNING, S.DECLINED, S.WITHDRAWN])
def test_pending_card_just_before_expiry_may_move(target):
    assert check_move(S.PENDING, target, expires_at=NOW, now=NOW - 1) is S.PENDING


@pytest.mark.parametrize("now", [NOW - 10, NOW, NOW + 10])
def test_pending_card_may_become_expired_at_any_time(now):
    assert check_move(S.PENDING, S.EXPIRED, expires_at=NOW, now=now) is S.PENDING


@pytest.mark.parametrize("target", [S.COMPLETED, S.FAILED])
def test_running_card_past_expiry_may_still_finish(target):
    assert check_move(S.RUNNING, target, expires_at=NOW, now=NOW + 86400) is S.RUNNING


@pytest.mark.parametrize("target", [S.COMPLETED, S.FAILED, S.PENDING])
def test_expired_pending_card_refuses_other_moves_with_expired(target):
    with pytest.raises(Refusal) as info:
        check_move(S.PENDING, target, expires_at=NOW, now=NOW)
    assert info.value.reason is R.EXPIRED


def test_effective_state():
    assert effective_state(S.PENDING, expires_at=NOW, now=NOW - 1) is S.PENDING
    assert effective_state(S.PENDING, expires_at=NOW, now=NOW) is S.EXPIRED
    assert effective_state("pending", expires_at=NOW, now=NOW + 1) is S.EXPIRED
    for state in CardState:
        if state is not S.PENDING:
            assert effective_state(state, expires_at=NOW, now=NOW + 99) is state


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(list(CardState)),
    st.sampled_from(list(CardState)),
    st.integers(0, 2_000_000),
    st.integers(0, 2_000_000),
)
def test_check_move_either_returns_a_legal_source_or_refuses(current, target, expires_at, now):
    try:
        source = check_move(current, target, expires_at=expires_at, now=now)
    except Refusal as refusal:
        assert refusal.reason in {R.WITHDRAWN, R.EXPIRED, R.ALREADY_ANSWERED, R.BEING_CONFIRMED}
        assert (current, target) not in LEGAL or (
            current is S.PENDING and target is not S.EXPIRED and now >= expires_at and refusal.reason is R.EXPIRED
        )
    else:
        assert source is current
        assert (current, target) in LEGAL
        if current is S.PENDING and target is not S.EXPIRED:
            assert now < expires_at


def test_unknown_state_is_a_value_error():
    with pytest.raises(ValueError):
        check_move("bogus", S.RUNNING, expires_at=LATER, now=NOW)
    with pytest.raises(ValueError):
        check_move(S.PENDING, "bogus", expires_at=LATER, now=NOW)


# --- reported state ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "state, reported",
    [
        (S.PENDING, "pending"),
        (S.RUNNING, "pending"),
        (S.COMPLETED, "completed"),
        (S.FAILED, "failed"),
        (S.DECLINED, "declined"),
        (S.WITHDRAWN, "declined"),
        (S.EXPIRED, "expired"),
    ],
)
def test_reported_state(state, reported):
    assert reported_state(state) == reported
    assert reported_state(state.value) == reported


def test_refusal_carries_reason_and_message():
    refusal = Refusal(R.CHANGED, CHANGED_MESSAGE)
    assert refusal.reason is R.CHANGED and refusal.message == CHANGED_MESSAGE
    assert "changed since this card was drawn" in CHANGED_MESSAGE
    assert "Nothing ran" in CHANGED_MESSAGE


def test_only_a_running_card_takes_a_further_step():
    assert check_step(S.RUNNING) is S.RUNNING
    for state in S:
        if state is not S.RUNNING:
            with pytest.raises(Refusal) as info:
                check_step(state)
            assert info.value.reason is expected_reason(state, S.RUNNING)
