"""An in-client answer reads nothing before its commit (both stores): the commit claims the request
unless a card holds it or was decided since the question was put, and spends the answer's
nonce. These are the outcomes a person or an agent sees either way."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.gate import ask as gate_ask
from countersign.gate.errors import AnswerReplayed

S = CardState


def withdraw(world, card_id: str) -> None:
    world.desk.withdraw(world.card(card_id), world.clock, "connection:test")


def test_a_card_withdrawn_before_the_question_was_put_leaves_the_yes_to_run(world):
    held = world.held()
    withdraw(world, held["confirmationId"])
    world.clock += 5
    form = world.question()  # asked after the withdrawal: nothing holds the request
    done = world.answer(form)
    assert done["status"] == "completed" and done["confirmationId"] != held["confirmationId"]
    assert world.bakeries() == 1


def test_a_card_withdrawn_after_the_question_was_put_refuses_the_older_yes(world):
    form = world.question()
    held = world.held()
    world.clock += 1
    withdraw(world, held["confirmationId"])  # released at once: only the time it was decided holds it
    world.clock += 1
    with pytest.raises(Refusal) as refused:
        world.answer(form)
    assert refused.value.reason is RefusalReason.WITHDRAWN
    assert "This answer came after that; nothing ran." in refused.value.message
    assert world.bakeries() == 0
    assert world.pending() == []


def test_a_card_that_lapsed_after_the_question_was_put_refuses_the_older_yes(world):
    form = world.question()
    held = world.held()
    world.clock = world.card(held["confirmationId"]).expires_at + 1
    with pytest.raises(Refusal) as refused:
        world.answer(form)
    assert refused.value.reason is RefusalReason.EXPIRED
    assert world.bakeries() == 0


def test_a_second_no_with_the_same_state_is_refused_and_the_first_no_stands(world):
    form = world.question()
    first = world.answer(form, gate_ask.DECLINE)
    assert first["status"] == "declined"
    with pytest.raises(AnswerReplayed):
        world.answer(form, gate_ask.DECLINE)
    with pytest.raises(AnswerReplayed):
        world.answer(form)  # nor can the same state turn into a yes
    assert world.bakeries() == 0
    assert world.card(first["confirmationId"]).state is S.DECLINED


def test_an_answer_refused_as_too_late_still_spends_its_state(world):
    form = world.question()
    held = world.held()
    world.click(held["confirmationId"])
    with pytest.raises(Refusal):
        world.answer(form)
    with pytest.raises(AnswerReplayed):
        world.answer(form)
    assert world.bakeries() == 1


def test_a_dismissed_question_files_the_card_once_and_its_state_is_spent(world):
    form = world.question()
    held = world.answer(form, gate_ask.CANCEL)
    assert held["status"] == "pending"
    with pytest.raises(AnswerReplayed):
        world.answer(form)
    assert [c.id for c in world.pending()] == [held["confirmationId"]]
    assert world.bakeries() == 0


def test_a_held_call_retried_gets_its_waiting_card_and_owes_one_email(world):
    first = world.held()
    again = world.held()
    assert again["confirmationId"] == first["confirmationId"]
    assert world.store.outbox.get_notification(first["confirmationId"]) is not None
    assert [c.id for c in world.pending()] == [first["confirmationId"]]
