"""One request, one card, one effect — whichever way the person says yes or no, in whatever order
(both stores). The effect counted is the Bakery purchase entered in the budget."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.gate import ask as gate_ask
from countersign.gate.errors import AnswerReplayed, DriftError
from tests.gate.world import BAKERY

S = CardState


def test_an_in_client_yes_confirms_the_waiting_card_and_a_click_after_it_is_refused(world):
    form = world.question()  # asked in the 2026 client first
    held = world.held()  # then the same request from a client that cannot ask: a card
    done = world.answer(form)  # the person says yes in the client
    assert done["status"] == "completed" and done["confirmationId"] == held["confirmationId"]
    assert done["answeredVia"] == "client"
    with pytest.raises(Refusal) as refused:
        world.click(held["confirmationId"])
    assert refused.value.reason is RefusalReason.ALREADY_ANSWERED
    assert world.bakeries() == 1
    assert world.events(held["confirmationId"]) == ["filed", "completed"]


def test_a_click_then_the_older_in_client_yes_runs_once(world):
    form = world.question()
    held = world.held()
    assert world.click(held["confirmationId"]).state is S.COMPLETED
    with pytest.raises(Refusal) as refused:
        world.answer(form)
    assert refused.value.reason is RefusalReason.ALREADY_ANSWERED
    assert "This answer came after that; nothing ran." in refused.value.message
    assert world.bakeries() == 1


def test_a_page_decline_is_never_overridden_by_an_older_in_client_yes(world):
    form = world.question()
    held = world.held()
    world.decline(held["confirmationId"], "not this one")
    with pytest.raises(Refusal) as refused:
        world.answer(form)
    assert refused.value.message.startswith("This card was already declined.")
    assert world.bakeries() == 0
    assert world.card(held["confirmationId"]).decline_reason == "not this one"


@pytest.mark.parametrize("first", ["click", "client"])
def test_a_click_and_an_in_client_yes_at_the_same_moment_run_once(world, first):
    form = world.question()
    held = world.held()
    card_id = held["confirmationId"]
    if first == "client":  # the client's yes commits while the click is between its plan and its commit
        landed = world.before_commit(1, lambda: world.answer(form))
        with pytest.raises(Refusal) as refused:
            world.click(card_id)
        assert landed[0]["status"] == "completed" and landed[0]["confirmationId"] == card_id
    else:  # the click commits while the client's yes is between its plan and its commit
        landed = world.before_commit(1, lambda: world.click(card_id))
        with pytest.raises(Refusal) as refused:
            world.answer(form)
        assert landed[0].state is S.COMPLETED
    assert refused.value.reason is RefusalReason.ALREADY_ANSWERED
    assert world.bakeries() == 1
    assert world.events(card_id) == ["filed", "completed"]


def test_a_2025_question_answered_while_an_identical_card_was_filed_confirms_that_card(world):
    filed = []

    def meanwhile() -> str:
        filed.append(world.held())  # another agent files the same request while the person reads
        return gate_ask.ACCEPT

    done = world.asked_during_the_call(meanwhile)
    assert done["status"] == "completed" and done["confirmationId"] == filed[0]["confirmationId"]
    with pytest.raises(Refusal):
        world.click(filed[0]["confirmationId"])
    assert world.bakeries() == 1


def test_a_code_spent_while_an_identical_card_waits_confirms_that_card(world):
    world.configure(fallback="code")
    code = world.call("create_transactions", dict(BAKERY_ARGS)).payload["confirmation"]
    held = asyncio_request(world)  # then request_confirmation files a card of the same request
    done = world.call("create_transactions", dict(BAKERY_ARGS), confirmation=code).payload
    assert done["status"] == "completed" and done["confirmationId"] == held["confirmationId"]
    assert done["answeredVia"] == "code"
    with pytest.raises(Refusal):
        world.click(held["confirmationId"])
    assert world.bakeries() == 1


def test_an_in_client_no_declines_the_waiting_card(world):
    form = world.question()
    held = world.held()
    declined = world.answer(form, gate_ask.DECLINE)
    assert declined["status"] == "declined" and declined["confirmationId"] == held["confirmationId"]
    with pytest.raises(Refusal) as refused:
        world.click(held["confirmationId"])
    assert refused.value.reason is RefusalReason.ALREADY_ANSWERED
    assert world.bakeries() == 0
    # and the identical call right after gets that decline, not a fresh question
    again = world.call("create_transactions", dict(BAKERY_ARGS), world.asking, modern=True, form_elicitation=True)
    assert again.payload["status"] == "declined" and again.payload["confirmationId"] == held["confirmationId"]


def test_an_in_client_yes_with_no_card_files_it_decided_in_one_transaction(world):
    form = world.question()
    assert world.pending() == []
    done = world.answer(form)
    card = world.card(done["confirmationId"])
    assert (card.state, card.channel) == (S.COMPLETED, "client")
    assert world.events(card.id) == ["filed", "completed"]
    assert world.bakeries() == 1
    world.desk.check_ticket(card, world.clock, "test", "test")  # signed for exactly this card


def test_an_answer_after_the_state_moved_writes_nothing_and_files_nothing(world):
    form = world.question("set_category_budget", {"category_id": "cat_books", "month": "2026-09", "amount": 30})
    world.call("set_category_budget", {"category_id": "cat_books", "month": "2026-09", "amount": 20},
               world.asking, modern=True, form_elicitation=False)  # a card for another amount: not the state
    from tests.budget.ledger import book_for

    book = book_for(world.store, world.workspace.id, world.person)
    book.set_budget("2026-09-01", "cat_books", 10_000)  # the budget moves under the question
    with pytest.raises(DriftError):
        world.answer(form, tool="set_category_budget",
                     args={"category_id": "cat_books", "month": "2026-09", "amount": 30})
    assert book.budgeted("2026-09-01", "cat_books") == 10_000
    assert [c.title for c in world.pending()] == ["Budget Books for 2026-09-01: 0.00 → 20.00?"]


def test_a_second_answer_with_the_same_state_is_refused(world):
    form = world.question()
    world.answer(form)
    with pytest.raises(AnswerReplayed):
        world.answer(form)
    assert world.bakeries() == 1


BAKERY_ARGS = {"account_id": "acc_checking",
               "transactions": [{"date": "2026-09-18", "payee": "Bakery", "amount": "-5.00"}]}


def asyncio_request(world) -> dict:
    import asyncio

    return asyncio.run(gate_ask.request_card(world.desk, world.plain, "create_transactions", dict(BAKERY_ARGS)))


def test_an_identical_call_that_files_after_the_first_card_was_answered_gets_that_answer(world):
    late = world.desk.question(world.plain, "create_transactions", BAKERY)  # looked: no card yet
    first = world.held()  # meanwhile another agent's identical call files the card
    assert world.click(first["confirmationId"]).state is S.COMPLETED  # and the person answers it at once
    card, filed = world.desk.file(late)  # the late call now files
    assert not filed and card.id == first["confirmationId"]  # it should get the answer, not a second card
    assert world.bakeries() == 1
