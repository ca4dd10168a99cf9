"""Every budget action in process, on both stores: the exact question, apply, the operation log,
undo, drift between plan and apply, and bad input (nothing written)."""

from __future__ import annotations

import pytest

from countersign.gate.actions import ActionError
from countersign.toolsets.budget import TOOLSET
from countersign.toolsets.budget.model import DRIFT, RTA_ID
from countersign.toolsets.budget.undo import MOVED_SINCE

RECAT = {"changes": [{"transaction_id": "t_market", "category_id": "cat_groceries"},
                     {"transaction_id": "t_shop", "category_id": "cat_household"}]}


def test_every_write_says_seed_000s_drift_sentence():
    assert {a.drift_message for a in TOOLSET.actions} == {"The budget changed between the preview and the answer"}
    classes = {a.name: a.gate.name for a in TOOLSET.actions}
    assert classes.pop("approve_transactions") == "never"
    assert set(classes.values()) == {"client"}
    assert sorted(classes) == sorted([
        "apply_categories", "set_category_budget", "update_category", "create_category", "create_transactions",
        "reconcile_account", "split_transaction", "undo_operation",
    ])


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
    before = book.snapshot()
    with pytest.raises(ActionError) as err:
        book.plan("apply_categories", changes=changes)
    assert err.value.field == field, err.value.message
    assert book.snapshot() == before


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
    before = book.snapshot()
    with pytest.raises(ActionError) as err:
        book.plan("set_category_budget", **args)
    assert err.value.field == field, err.value.message
    assert book.snapshot() == before


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


# -- create_transactions ------------------------------------------------------------------------------


NEW = {"account_id": "acc_checking", "transactions": [
    {"date": "2026-09-12", "payee": "Market", "amount": -86.40, "category_id": "cat_groceries"}]}


def test_create_transactions_question_apply_and_undo(book):
    before = book.snapshot()
    plan = book.plan("create_transactions", **NEW)
    assert plan.preview.question() == "Create 1 transaction(s) on Checking?\n2026-09-12, Market, -86.40, Groceries"
    result = book.apply("create_transactions", plan)
    [txn_id] = result["transaction_ids"]
    txn = book.txn(txn_id)
    assert (txn["date"], txn["payee"], txn["amount"], txn["category_id"], txn["approved"], txn["cleared"]) == \
        ("2026-09-12", "Market", -86_400, "cat_groceries", True, "uncleared")
    undo = book.plan("undo_operation", operation_id=result["operation_id"])
    assert undo.preview.question() == "Undo: create 1 transaction(s) on Checking?\nDelete 2026-09-12, Market, -86.40"
    book.apply("undo_operation", undo)
    assert book.snapshot() == before


def test_create_transactions_across_months_with_memo_and_income(book):
    plan = book.plan("create_transactions", account_id="acc_savings", approved=False, transactions=[
        {"date": "2026-10-01", "payee": "Bonus", "amount": "500", "category_id": RTA_ID, "memo": "Q3"},
        {"date": "2026-08-30", "payee": "Bank fee", "amount": -2, "cleared": "cleared"},
    ])
    assert plan.preview.question() == (
        "Create 2 transaction(s) on Savings?\n"
        "2026-10-01, Bonus, 500.00, Ready to Assign (Q3)\n"
        "2026-08-30, Bank fee, -2.00, Uncategorised"
    )
    ids = book.apply("create_transactions", plan)["transaction_ids"]
    assert [book.txn(i)["approved"] for i in ids] == [False, False]
    assert book.txn(ids[1])["cleared"] == "cleared"


@pytest.mark.parametrize("patch, field", [
    ({"account_id": "acc_nope"}, "account_id"),
    ({"transactions": [{"date": "2026-02-30", "payee": "X", "amount": 1}]}, "transactions[0].date"),
    ({"transactions": [{"date": "2026-09-01", "payee": "X", "amount": "ten"}]}, "transactions[0].amount"),
    ({"transactions": [{"date": "2026-09-01", "payee": "X", "amount": 1, "category_id": "cat_nope"}]},
     "transactions[0].category_id"),
    ({"transactions": [{"date": "2026-09-01", "payee": " ", "amount": 1}]}, "transactions[0].payee"),
    ({"transactions": [{"date": "2026-09-01", "payee": "X", "amount": 1, "cleared": "reconciled"}]},
     "transactions[0].cleared"),
    ({"transactions": []}, "transactions"),
])
def test_create_transactions_bad_input(book, patch, field):
    before = book.snapshot()
    with pytest.raises(ActionError) as err:
        book.plan("create_transactions", **dict(NEW, **patch))
    assert err.value.field == field, err.value.message
    assert book.snapshot() == before


# -- split_transaction ---------------------------------------------------------------------------------


SPLIT = {
    "transaction_id": "t_market",
    "lines": [
        {"amount": -60, "category_id": "cat_groceries"},
        {"amount": "-26.40", "category_id": "cat_household", "memo": "soap"},
    ],
}


def test_split_question_apply_and_no_undo(book):
    plan = book.plan("split_transaction", **SPLIT)
    assert plan.preview.question() == (
        "Split 2026-09-12 Market 86.40 into 2 lines?\nGroceries 60.00\nHousehold 26.40 (soap)\n"
        "Warning: a split cannot be undone."
    )
    result = book.apply("split_transaction", plan)
    txn = book.txn("t_market")
    assert txn["category_id"] is None
    assert txn["subtransactions"] == [{"amount": -60_000, "category_id": "cat_groceries", "memo": ""},
                                      {"amount": -26_400, "category_id": "cat_household", "memo": "soap"}]
    op = {o.id: o for o in book.ops()}[result["operation_id"]]
    assert op.data["undoable"] is False
    with pytest.raises(ActionError) as err:
        book.plan("undo_operation", operation_id=result["operation_id"])
    assert "cannot be undone" in err.value.message
    figures = book.read("get_month", month="2026-09")
    household = next(c for c in figures["categories"] if c["id"] == "cat_household")
    assert household["activity"] == "-26.40"
    with pytest.raises(ActionError) as again:
        book.plan("split_transaction", **SPLIT)
    assert "already split" in again.value.message


def test_split_accepts_positive_parts_of_an_outflow(book):
    plan = book.plan("split_transaction", transaction_id="t_market", lines=[
        {"amount": 60, "category_id": "cat_groceries"}, {"amount": 26.4, "category_id": "cat_household"}])
    assert [li["amount"] for li in plan.subject["lines"]] == [-60_000, -26_400]


def test_split_drift(book):
    plan = book.plan("split_transaction", **SPLIT)
    book.set_txn("t_market", category_id="cat_books")
    with pytest.raises(ActionError) as err:
        book.apply("split_transaction", plan)
    assert err.value.message.startswith(DRIFT)
    assert book.txn("t_market")["subtransactions"] == []


@pytest.mark.parametrize(
    "patch, field",
    [
        ({"transaction_id": "t_nope"}, "transaction_id"),
        (
            {
                "lines": [
                    {"amount": -60, "category_id": "cat_groceries"},
                    {"amount": -20, "category_id": "cat_household"},
                ]
            },
            "lines",
        ),
        (
            {
                "lines": [
                    {"amount": -60, "category_id": "cat_groceries"},
                    {"amount": "x", "category_id": "cat_household"},
                ]
            },
            "lines[1].amount",
        ),
        (
            {"lines": [{"amount": -60, "category_id": "cat_groceries"}, {"amount": -26.4, "category_id": "cat_nope"}]},
            "lines[1].category_id",
        ),
        ({"lines": [{"amount": -86.4, "category_id": "cat_groceries"}]}, "lines"),
        ({"lines": [{"amount": -4.32, "category_id": "cat_groceries"}] * 20}, "lines"),  # the warning must stay visible
    ],
)
def test_split_bad_input(book, patch, field):
    before = book.snapshot()
    with pytest.raises(ActionError) as err:
        book.plan("split_transaction", **dict(SPLIT, **patch))
    assert err.value.field == field, err.value.message
    assert book.snapshot() == before


# -- reconcile_account ---------------------------------------------------------------------------------


def test_reconcile_question_apply_and_undo(book):
    before = book.snapshot()
    plan = book.plan("reconcile_account", account_id="acc_checking", balance="2250.00")
    assert plan.preview.question() == (
        "Reconcile Checking: mark 3 cleared transaction(s) reconciled?\n"
        "Bank balance: 2250.00\nCleared balance: 2253.10\nDifference to adjust: -3.10\n"
        "An adjustment of -3.10 is entered as ‘Reconciliation Balance Adjustment’ (Ready to Assign)."
    )
    result = book.apply("reconcile_account", plan)
    txns = book.all_txns()
    assert [txns[t]["cleared"] for t in ("t_pay", "t_market", "t_bistro", "t_shop", "t_court")] == \
        ["reconciled", "reconciled", "reconciled", "uncleared", "reconciled"]
    adj = txns[result["adjustment_transaction_id"]]
    assert (adj["amount"], adj["category_id"], adj["cleared"], adj["date"]) == (
        -3_100, RTA_ID, "reconciled", "2026-09-20")
    assert book.read("list_accounts")["accounts"][0]["cleared_balance"] == "2250.00"
    undo = book.plan("undo_operation", operation_id=result["operation_id"])
    assert undo.preview.title == "Undo: reconcile Checking: mark 3 cleared transaction(s) reconciled?"
    assert "Delete 2026-09-20, Reconciliation Balance Adjustment, -3.10" in undo.preview.lines
    book.apply("undo_operation", undo)
    assert book.snapshot() == before


def test_reconcile_without_difference_adds_no_adjustment(book):
    plan = book.plan("reconcile_account", account_id="acc_checking", balance=2253.1)
    assert plan.preview.lines[-1] == "Difference to adjust: 0.00"
    result = book.apply("reconcile_account", plan)
    assert result["adjustment_transaction_id"] is None and len(book.all_txns()) == 6


def test_reconcile_drift_when_a_transaction_clears(book):
    plan = book.plan("reconcile_account", account_id="acc_checking", balance=2250)
    book.set_txn("t_shop", cleared="cleared")
    again = book.plan("reconcile_account", account_id="acc_checking", balance=2250)
    assert again.preview.title == "Reconcile Checking: mark 4 cleared transaction(s) reconciled?"
    with pytest.raises(ActionError) as err:
        book.apply("reconcile_account", plan)
    assert err.value.message.startswith(DRIFT)
    assert book.txn("t_market")["cleared"] == "cleared"


def test_reconcile_bad_input(book):
    for args, field in [({"account_id": "acc_nope", "balance": 1}, "account_id"),
                        ({"account_id": "acc_checking", "balance": "1.2.3"}, "balance")]:
        with pytest.raises(ActionError) as err:
            book.plan("reconcile_account", **args)
        assert err.value.field == field
    book.do("reconcile_account", account_id="acc_savings", balance=2.1)
    with pytest.raises(ActionError) as nothing:
        book.plan("reconcile_account", account_id="acc_savings", balance=2.1)
    assert nothing.value.field == "account_id" and "no cleared transaction" in nothing.value.message


# -- approve_transactions ---------------------------------------------------------------------------------


def test_approve_runs_and_undoes(book):
    plan = book.plan("approve_transactions", transaction_ids=["t_market", "t_bistro", "t_shop"])
    assert plan.preview.question() == (
        "Approve 2 transaction(s)?\n2026-09-12, Market, -86.40\n2026-09-15, Corner Store, -12.00"
    )
    result = book.apply("approve_transactions", plan)
    assert result["approved"] == ["t_market", "t_shop"] and result["already_approved"] == ["t_bistro"]
    assert book.txn("t_market")["approved"] and book.txn("t_shop")["approved"]
    undo = book.plan("undo_operation", operation_id=result["operation_id"])
    assert undo.preview.question() == (
        "Undo: approve 2 transaction(s)?\n2026-09-12, Market, -86.40, approved → unapproved\n"
        "2026-09-15, Corner Store, -12.00, approved → unapproved"
    )
    book.apply("undo_operation", undo)
    assert not book.txn("t_market")["approved"]
    with pytest.raises(ActionError) as err:
        book.plan("approve_transactions", transaction_ids=["t_bistro"])
    assert err.value.field == "transaction_ids"
    with pytest.raises(ActionError) as unknown:
        book.plan("approve_transactions", transaction_ids=["t_market", "t_zzz"])
    assert unknown.value.field == "transaction_ids[1]"


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
