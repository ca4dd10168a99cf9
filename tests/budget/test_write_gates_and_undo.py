"""What every budget write shares, in process, on both stores: the list of writes with their gate
class and drift sentence, and undo_operation's refusals (its target moved since, drift between plan
and apply, one plan applied twice, an undo of an undo, an unknown operation)."""

from __future__ import annotations

import pytest

from countersign.toolkit import ActionError
from countersign.toolsets.budget import TOOLSET
from countersign.toolsets.budget.model import DRIFT
from countersign.toolsets.budget.undo import MOVED_SINCE
from tests.budget.ledger import RECAT


def test_every_write_says_seed_000s_drift_sentence():
    assert {a.drift_message for a in TOOLSET.actions} == {"The budget changed between the preview and the answer"}
    classes = {a.name: a.gate.name for a in TOOLSET.actions}
    assert classes.pop("approve_transactions") == "never"
    assert set(classes.values()) == {"client"}
    assert sorted(classes) == sorted([
        "apply_categories", "set_category_budget", "update_category", "create_category", "create_transactions",
        "reconcile_account", "split_transaction", "undo_operation",
    ])


# -- undo_operation ------------------------------------------------------------------------------------------


def test_undo_refused_when_its_target_moved(book):
    result = book.do("apply_categories", **RECAT)
    book.set_txn("t_market", category_id="cat_books")
    before = book.snapshot()
    with pytest.raises(ActionError) as err:
        book.plan("undo_operation", operation_id=result["operation_id"])
    assert err.value.message.startswith(MOVED_SINCE) and "Market" in err.value.message
    assert err.value.field == "operation_id"
    assert book.snapshot() == before


def test_undo_drift_between_plan_and_apply(book):
    result = book.do("set_category_budget", category_id="cat_restaurants", month="2026-09", amount=150)
    plan = book.plan("undo_operation", operation_id=result["operation_id"])
    book.set_budget("2026-09-01", "cat_restaurants", 175_000)
    with pytest.raises(ActionError) as err:
        book.apply("undo_operation", plan)
    assert err.value.message.startswith(DRIFT)
    assert book.budgeted("2026-09-01", "cat_restaurants") == 175_000


def test_undo_applied_twice_from_one_plan_is_refused(book):
    result = book.do("set_category_budget", category_id="cat_restaurants", month="2026-09", amount=150)
    plan = book.plan("undo_operation", operation_id=result["operation_id"])
    book.apply("undo_operation", plan)
    with pytest.raises(ActionError) as err:
        book.apply("undo_operation", plan)
    assert err.value.message.startswith(DRIFT)
    assert len(book.ops()) == 2


def test_undo_of_an_undo_and_unknown_operations_are_refused(book):
    result = book.do("set_category_budget", category_id="cat_restaurants", month="2026-09", amount=150)
    undone = book.do("undo_operation", operation_id=result["operation_id"])
    for op_id, words in [(undone["operation_id"], "itself an undo"), ("op_nope", "no operation"), ("", "no operation")]:
        with pytest.raises(ActionError) as err:
            book.plan("undo_operation", operation_id=op_id)
        assert words in err.value.message and err.value.field == "operation_id"
