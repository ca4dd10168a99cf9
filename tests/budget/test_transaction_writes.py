"""The budget's transaction writes in process, on both stores: creating transactions
(create_transactions), splitting one (split_transaction, which cannot be undone), reconciling an
account (reconcile_account) and approving (approve_transactions). For each: the exact question,
apply, undo where there is one, drift between plan and apply, and bad input (nothing written)."""

from __future__ import annotations

import pytest

from countersign.toolkit import ActionError
from countersign.toolsets.budget.model import DRIFT, RTA_ID

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
    book.refuses("create_transactions", field, **dict(NEW, **patch))


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
    book.refuses("split_transaction", field, **dict(SPLIT, **patch))


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
