"""A confirm fails for drift only when what the person saw changed (both stores).

Two cards over different transactions of one account-month share a stored bucket: the second to
commit finds the bucket's version moved, plans again on fresh state, sees the same subject, and
commits — keeping the other card's change."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.gate.runner import ATTEMPTS
from tests.budget.ledger import book_for

S = CardState


def recategorise(txn: str, category: str) -> dict:
    return {"changes": [{"transaction_id": txn, "category_id": category}]}


def test_two_cards_over_one_bucket_both_run(world):
    market = world.held("apply_categories", recategorise("t_market", "cat_groceries"))
    shop = world.held("apply_categories", recategorise("t_shop", "cat_household"))
    other = world.before_commit(1, lambda: world.click(shop["confirmationId"]))
    assert world.click(market["confirmationId"]).state is S.COMPLETED
    assert other[0].state is S.COMPLETED
    book = book_for(world.store, world.workspace.id, world.person)
    assert book.txn("t_market")["category_id"] == "cat_groceries"
    assert book.txn("t_shop")["category_id"] == "cat_household"
    assert world.events(market["confirmationId"]) == ["filed", "completed"]


def test_a_change_to_what_the_card_shows_is_drift(world):
    market = world.held("apply_categories", recategorise("t_market", "cat_groceries"))
    book = book_for(world.store, world.workspace.id, world.person)
    world.before_commit(1, lambda: book.set_txn("t_market", category_id="cat_household"))
    with pytest.raises(Refusal) as refused:
        world.click(market["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert "The budget changed between the preview and the answer" in refused.value.message
    assert book.txn("t_market")["category_id"] == "cat_household"
    assert world.card(market["confirmationId"]).state is S.DECLINED


def test_writes_that_keep_landing_leave_the_card_waiting_and_nothing_written(world):
    market = world.held("apply_categories", recategorise("t_market", "cat_groceries"))
    book = book_for(world.store, world.workspace.id, world.person)
    real = world.desk.commit
    memos = iter(range(ATTEMPTS + 1))

    def commit(c, answer=None):
        book.set_txn("t_bistro", memo=f"busy {next(memos)}")  # the same bucket moves before every try
        return real(c, answer)

    world.desk.commit = commit
    with pytest.raises(Refusal) as refused:
        world.click(market["confirmationId"])
    assert refused.value.reason is RefusalReason.BUSY and "nothing ran" in refused.value.message
    assert world.card(market["confirmationId"]).state is S.PENDING
    assert book.txn("t_market")["category_id"] is None
    world.desk.commit = real
    assert world.click(market["confirmationId"]).state is S.COMPLETED  # the same card, later
