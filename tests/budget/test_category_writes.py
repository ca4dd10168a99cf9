"""The budget's category writes in process, on both stores: recategorising transactions
(apply_categories), a category's budget for a month (set_category_budget), renaming or moving a
category (update_category) and creating one (create_category). For each: the exact question,
apply, the operation log, undo, drift between plan and apply, and bad input (nothing written)."""

from __future__ import annotations

import pytest

from countersign.toolkit import ActionError
from countersign.toolsets.budget.model import DRIFT, RTA_ID
from countersign.toolsets.budget.undo import MOVED_SINCE
from tests.budget.ledger import RECAT

# -- apply_categories ---------------------------------------------------------------------------------


def test_apply_categories_question_apply_and_undo(book):
    before = book.snapshot()
    plan = book.plan("apply_categories", **RECAT)
    assert plan.preview.question() == (
        "Recategorise 2 transaction(s)?\n"
        "2026-09-12, Market, -86.40, Uncategorised → Groceries\n"
        "2026-09-15, Corner Store, -12.00, Uncategorised → Household"
    )
    assert book.snapshot() == before  # planning writes nothing
    result = book.apply("apply_categories", plan)
    assert book.txn("t_market")["category_id"] == "cat_groceries"
    assert book.txn("t_shop")["category_id"] == "cat_household"
    [op] = book.ops()
    assert op.id == result["operation_id"] and op.data["kind"] == "recategorise"
    assert op.data["summary"] == "recategorise 2 transaction(s)" and op.data["undoable"] is True

    undo = book.plan("undo_operation", operation_id=op.id)
    assert undo.preview.question() == (
        "Undo: recategorise 2 transaction(s)?\n"
        "2026-09-12, Market, -86.40, Groceries → Uncategorised\n"
        "2026-09-15, Corner Store, -12.00, Household → Uncategorised"
    )
    undone = book.apply("undo_operation", undo)
    assert book.snapshot() == before
    ops = {o.id: o.data for o in book.ops()}
    assert ops[op.id]["undone_by"] == undone["operation_id"]
    assert ops[undone["operation_id"]]["undo_of"] == op.id
    with pytest.raises(ActionError) as twice:
        book.plan("undo_operation", operation_id=op.id)
    assert "already undone" in twice.value.message and twice.value.field == "operation_id"


def test_apply_categories_fingerprint_ignores_the_order_of_changes(book):
    one = book.plan("apply_categories", **RECAT)
    other = book.plan("apply_categories", changes=list(reversed(RECAT["changes"])))
    assert book.fingerprint("apply_categories", one) == book.fingerprint("apply_categories", other)


def test_apply_categories_drift_between_plan_and_apply(book):
    plan = book.plan("apply_categories", **RECAT)
    book.set_txn("t_market", category_id="cat_books")
    again = book.plan("apply_categories", **RECAT)
    assert book.fingerprint("apply_categories", again) != book.fingerprint("apply_categories", plan)
    assert "Books → Groceries" in again.preview.lines[0]
    with pytest.raises(ActionError) as err:
        book.apply("apply_categories", plan)
    assert err.value.message.startswith(DRIFT)
    assert book.txn("t_shop")["category_id"] is None and book.ops() == []


def test_unrelated_change_is_not_drift(book):
    plan = book.plan("apply_categories", **RECAT)
    book.set_txn("t_bistro", memo="lunch")  # same bucket, not in the preview
    assert book.fingerprint("apply_categories", book.plan("apply_categories", **RECAT)) == \
        book.fingerprint("apply_categories", plan)
    book.apply("apply_categories", plan)
    assert book.txn("t_market")["category_id"] == "cat_groceries"


@pytest.mark.parametrize("changes, field", [
    ([{"transaction_id": "t_nope", "category_id": "cat_groceries"}], "changes[0].transaction_id"),
    ([{"transaction_id": "t_market", "category_id": "cat_nope"}], "changes[0].category_id"),
    ([{"transaction_id": "t_market", "category_id": "cat_groceries"},
      {"transaction_id": "t_market", "category_id": "cat_books"}], "changes[1].transaction_id"),
    ([{"transaction_id": "t_bistro", "category_id": "cat_restaurants"}], "changes[0].category_id"),
    ([], "changes"),
    ([{"transaction_id": "t_market"}], "changes[0].category_id"),
    ([{"transaction_id": "t_market", "category_id": "cat_groceries", "extra": 1}], "changes[0].extra"),
])
def test_apply_categories_bad_input(book, changes, field):
    book.refuses("apply_categories", field, changes=changes)


# -- set_category_budget ----------------------------------------------------------------------------


@pytest.mark.parametrize("month", ["2026-09", "2026-09-01", "current"])
def test_set_category_budget_question_apply_and_undo(book, month):
    plan = book.plan("set_category_budget", category_id="cat_restaurants", month=month, amount=150)
    assert plan.preview.question() == "Budget Restaurants for 2026-09-01: 120.00 → 150.00?"
    assert plan.subject == {"category": "cat_restaurants", "category_name": "Restaurants", "month": "2026-09-01",
                            "before": 120_000, "amount": 150_000}
    result = book.apply("set_category_budget", plan)
    assert book.budgeted("2026-09-01", "cat_restaurants") == 150_000
    undo = book.plan("undo_operation", operation_id=result["operation_id"])
    assert undo.preview.question() == (
        "Undo: budget Restaurants for 2026-09-01: 120.00 → 150.00?\nBudget Restaurants for 2026-09-01: 150.00 → 120.00"
    )
    book.apply("undo_operation", undo)
    assert book.budgeted("2026-09-01", "cat_restaurants") == 120_000


def test_set_category_budget_next_month_from_nothing(book):
    plan = book.plan("set_category_budget", category_id="cat_books", month="next", amount="25.5")
    assert plan.preview.title == "Budget Books for 2026-10-01: 0.00 → 25.50?"
    book.apply("set_category_budget", plan)
    assert book.budgeted("2026-10-01", "cat_books") == 25_500


def test_set_category_budget_drift(book):
    plan = book.plan("set_category_budget", category_id="cat_restaurants", month="2026-09", amount=150)
    book.set_budget("2026-09-01", "cat_restaurants", 130_000)
    assert (
        book.plan("set_category_budget", category_id="cat_restaurants", month="2026-09", amount=150).preview.title
        == "Budget Restaurants for 2026-09-01: 130.00 → 150.00?"
    )
    with pytest.raises(ActionError) as err:
        book.apply("set_category_budget", plan)
    assert err.value.message.startswith(DRIFT)
    assert book.budgeted("2026-09-01", "cat_restaurants") == 130_000


@pytest.mark.parametrize("args, field", [
    ({"category_id": "cat_nope", "month": "2026-09", "amount": 1}, "category_id"),
    ({"category_id": "cat_books", "month": "2026-13", "amount": 1}, "month"),
    ({"category_id": "cat_books", "month": "2026-02-30", "amount": 1}, "month"),
    ({"category_id": "cat_books", "month": "2026-09", "amount": "lots"}, "amount"),
    ({"category_id": "cat_books", "month": "2026-09", "amount": True}, "amount"),
    ({"category_id": RTA_ID, "month": "2026-09", "amount": 1}, "category_id"),
    ({"category_id": "cat_restaurants", "month": "2026-09", "amount": "120.00"}, "amount"),
])
def test_set_category_budget_bad_input(book, args, field):
    book.refuses("set_category_budget", field, **args)


# -- update_category / create_category --------------------------------------------------------------


def test_update_category_question_apply_and_undo(book):
    plan = book.plan("update_category", category_id="cat_tennis", name="Sport")
    assert plan.preview.question() == "Change category ‘Tennis’ (Fun) to ‘Sport’ (Fun)?"
    result = book.apply("update_category", plan)
    assert book.category("cat_tennis")["name"] == "Sport"
    undo = book.plan("undo_operation", operation_id=result["operation_id"])
    assert undo.preview.question() == (
        "Undo: change category ‘Tennis’ (Fun) to ‘Sport’ (Fun)?\nCategory ‘Sport’ (Fun) → ‘Tennis’ (Fun)"
    )
    book.apply("undo_operation", undo)
    assert book.category("cat_tennis")["name"] == "Tennis"


def test_update_category_moves_between_groups_and_back(book):
    before = book.snapshot()
    plan = book.plan("update_category", category_id="cat_books", group_id="grp_everyday")
    assert plan.preview.title == "Change category ‘Books’ (Fun) to ‘Books’ (Everyday)?"
    result = book.apply("update_category", plan)
    assert book.category("cat_books")["group_id"] == "grp_everyday"
    book.do("undo_operation", operation_id=result["operation_id"])
    assert book.snapshot() == before


def test_update_category_drift_and_bad_input(book):
    plan = book.plan("update_category", category_id="cat_tennis", name="Sport")
    book.set_category("cat_tennis", name="Padel")
    with pytest.raises(ActionError) as err:
        book.apply("update_category", plan)
    assert err.value.message.startswith(DRIFT)
    for args, field in [
        ({"category_id": "cat_nope", "name": "X"}, "category_id"),
        ({"category_id": "cat_books", "group_id": "grp_nope"}, "group_id"),
        ({"category_id": "cat_books"}, "name"),
        ({"category_id": "cat_books", "name": "  "}, "name"),
        ({"category_id": "cat_books", "name": "padel"}, "name"),  # taken in Fun (case-insensitive)
        ({"category_id": RTA_ID, "name": "Income"}, "category_id"),
    ]:
        with pytest.raises(ActionError) as bad:
            book.plan("update_category", **args)
        assert bad.value.field == field, (args, bad.value.message)


def test_create_category_question_apply_and_undo(book):
    before = book.snapshot()
    plan = book.plan("create_category", group_id="grp_everyday", name="Pets")
    assert plan.preview.question() == "Create category ‘Pets’ in Everyday?"
    assert book.fingerprint("create_category", plan) == book.fingerprint(
        "create_category", book.plan("create_category", group_id="grp_everyday", name="Pets"))  # no random ids
    result = book.apply("create_category", plan)
    assert book.category(result["category_id"]) == {"name": "Pets", "group_id": "grp_everyday", "position": 3,
                                                     "hidden": False, "note": ""}
    undo = book.plan("undo_operation", operation_id=result["operation_id"])
    assert undo.preview.question() == "Undo: create category ‘Pets’ in Everyday?\nDelete category ‘Pets’ (Everyday)"
    book.apply("undo_operation", undo)
    assert book.snapshot() == before


def test_undo_create_category_refused_once_it_is_used(book):
    result = book.do("create_category", group_id="grp_everyday", name="Pets")
    book.do("apply_categories", changes=[{"transaction_id": "t_shop", "category_id": result["category_id"]}])
    with pytest.raises(ActionError) as err:
        book.plan("undo_operation", operation_id=result["operation_id"])
    assert err.value.message.startswith(MOVED_SINCE) and "Corner Store" in err.value.message


def test_create_category_bad_input(book):
    for args, field in [
        ({"group_id": "grp_nope", "name": "Pets"}, "group_id"),
        ({"group_id": "grp_everyday", "name": ""}, "name"),
        ({"group_id": "grp_everyday", "name": "groceries"}, "name"),
        ({"group_id": "inflow", "name": "Bonus"}, "group_id"),
        ({"group_id": "grp_everyday", "name": "x" * 101}, "name"),
    ]:
        with pytest.raises(ActionError) as bad:
            book.plan("create_category", **args)
        assert bad.value.field == field, (args, bad.value.message)
