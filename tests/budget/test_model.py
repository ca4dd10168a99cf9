"""The ledger model: amounts, dates, month resolution, figures, and versioned commits (both stores)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from countersign.gate.actions import ActionError
from countersign.store.errors import Conflict
from countersign.store.records import DocWrite
from countersign.toolsets.budget.model import (
    DRIFT,
    RTA_ID,
    TXNS,
    Ledger,
    display,
    month_start,
    parse_date,
    resolve_month,
    to_milliunits,
)
from countersign.toolsets.budget.operations import budget_change, commit, reverse, txn_change
from tests.budget.ledger import NOW


def ts(y, m, d):
    return int(datetime(y, m, d, 12, tzinfo=UTC).timestamp())


# -- amounts ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("value, milli", [
    (150, 150_000), (150.5, 150_500), ("150.00", 150_000), ("-86.40", -86_400), ("0.001", 1), (" 12 ", 12_000),
    (0, 0), ("+3.5", 3_500), (-0.1, -100), (".5", 500), (0.1 + 0.2, 300),
])
def test_amounts_become_milliunits(value, milli):
    assert to_milliunits(value, "amount") == milli


@pytest.mark.parametrize("value", ["abc", "", "1,5", "1e3", "NaN", "inf", None, True, [], {}, "12.3456", 1e12, "--1"])
def test_amounts_that_are_not_numbers_name_the_field(value):
    with pytest.raises(ActionError) as err:
        to_milliunits(value, "lines[1].amount")
    assert err.value.field == "lines[1].amount"
    assert err.value.message.startswith("lines[1].amount: ")


@pytest.mark.parametrize(
    "milli, text",
    [
        (150_000, "150.00"),
        (-86_400, "-86.40"),
        (0, "0.00"),
        (1, "0.00"),
        (-4, "0.00"),
        (1_234_567, "1234.57"),
        (120_000, "120.00"),
    ],
)
def test_amounts_show_with_two_decimals(milli, text):
    assert display(milli) == text


# -- dates and months --------------------------------------------------------------------------------


@pytest.mark.parametrize("value, month", [
    ("2026-09", "2026-09-01"), ("2026-09-01", "2026-09-01"), ("2026-09-30", "2026-09-01"), ("current", "2026-09-01"),
    ("next", "2026-10-01"), ("previous", "2026-08-01"), (" Current ", "2026-09-01"), ("2026-12", "2026-12-01"),
])
def test_months_resolve_to_their_first_day(value, month):
    assert resolve_month(value, NOW) == month


def test_next_month_crosses_the_year():
    assert resolve_month("next", ts(2026, 12, 31)) == "2027-01-01"
    assert resolve_month("current", ts(2027, 1, 1)) == "2027-01-01"
    assert resolve_month("previous", ts(2027, 1, 15)) == "2026-12-01"


@pytest.mark.parametrize(
    "value", ["2026-13", "2026-00", "2026-02-30", "September", "", "2026/09", 202609, None, "later"]
)
def test_bad_months_name_the_field(value):
    with pytest.raises(ActionError) as err:
        resolve_month(value, NOW)
    assert err.value.field == "month"


@pytest.mark.parametrize("value", ["2026-02-29", "2026-09-31", "2026-9-1", "12/09/2026", "", "tomorrow", None])
def test_dates_that_do_not_exist_are_refused(value):
    with pytest.raises(ActionError) as err:
        parse_date(value, "transactions[0].date")
    assert err.value.field == "transactions[0].date"


def test_leap_day_exists_in_a_leap_year():
    assert parse_date("2028-02-29", "date") == "2028-02-29"
    assert month_start("2028-02-29") == "2028-02-01"


# -- the ledger (both stores) ----------------------------------------------------------------------


def test_ledger_loads_every_record_with_versions(book):
    ledger = Ledger.load(book.store, book.workspace_id)
    assert set(ledger.accounts) == {"acc_checking", "acc_savings"}
    assert ledger.category(RTA_ID).data["name"] == "Ready to Assign"  # built in, never stored
    assert ledger.txn("t_market").bucket == "acc_checking.2026-09"
    assert ledger.txn("t_market").account_id == "acc_checking"
    assert ledger.buckets["acc_checking.2026-09"].version == 1
    assert [d.data["name"] for d in ledger.ordered_categories("grp_fun")] == ["Tennis", "Books"]
    with pytest.raises(ActionError) as err:
        ledger.txn("t_nope", "changes[0].transaction_id")
    assert err.value.field == "changes[0].transaction_id" and "t_nope" in err.value.message


def test_balances_and_month_figures(book):
    ledger = Ledger.load(book.store, book.workspace_id)
    assert ledger.balances("acc_checking") == (2_400_000 - 86_400 - 42_500 - 18_000, -12_000)
    figures = ledger.month_figures("2026-09-01")
    assert figures["budgeted"] == {"cat_restaurants": 120_000, "cat_groceries": 400_000}
    assert figures["activity"] == {"cat_restaurants": -42_500, "cat_tennis": -18_000}
    assert figures["available"]["cat_restaurants"] == 77_500
    assert figures["available"]["cat_tennis"] == -18_000
    assert figures["income"] == 2_400_000
    assert figures["ready_to_assign"] == 2_100 + 2_400_000 - 520_000
    october = ledger.month_figures("2026-10-01")
    assert october["available"]["cat_restaurants"] == 77_500  # carried over
    assert october["available"]["cat_tennis"] == 0  # overspending does not carry over...
    assert october["ready_to_assign"] == figures["ready_to_assign"] - 18_000  # ...it comes out of Ready to Assign


def test_commit_writes_changes_and_operation_atomically(book):
    ledger = Ledger.load(book.store, book.workspace_id)
    changes = [
        txn_change("acc_checking.2026-09", "t_market", {"category_id": None}, {"category_id": "cat_groceries"}),
        budget_change("2026-09-01", "cat_groceries", 400_000, 450_000),
    ]
    before = book.snapshot()
    op_id, writes = commit(book.ctx, ledger, changes, "test", "test two changes")
    assert book.snapshot() == before and book.ops() == []  # the writes are returned, not made
    book.store.write_docs(book.workspace_id, writes)  # as the gate commits them: one transaction
    assert book.txn("t_market")["category_id"] == "cat_groceries"
    assert book.budgeted("2026-09-01", "cat_groceries") == 450_000
    [op] = book.ops()
    assert op.id == op_id and op.data["changes"] == changes and op.data["by"] == book.ctx.person.id


def test_writes_staged_before_a_race_conflict_and_write_nothing(book):
    ledger = Ledger.load(book.store, book.workspace_id)  # read before the other writer
    change = txn_change("acc_checking.2026-09", "t_market", {"category_id": None}, {"category_id": "cat_groceries"})
    _, writes = commit(book.ctx, ledger, [change], "test", "test")
    book.set_txn("t_shop", memo="written meanwhile")  # same bucket, other transaction
    before = book.snapshot()
    with pytest.raises(Conflict) as err:
        book.store.write_docs(book.workspace_id, writes)
    assert (err.value.kind, err.value.id) == (TXNS, "acc_checking.2026-09")
    assert book.snapshot() == before and book.ops() == []


def test_commit_refuses_a_moved_target(book):
    book.set_txn("t_market", category_id="cat_household")
    ledger = Ledger.load(book.store, book.workspace_id)
    change = txn_change("acc_checking.2026-09", "t_market", {"category_id": None}, {"category_id": "cat_groceries"})
    with pytest.raises(ActionError) as err:
        commit(book.ctx, ledger, [change], "test", "test")
    assert DRIFT in err.value.message and "Market" in err.value.message
    assert book.txn("t_market")["category_id"] == "cat_household"


def test_reverse_restores_exactly_and_empties_vanish(book):
    before = book.snapshot()
    ledger = Ledger.load(book.store, book.workspace_id)
    from countersign.toolsets.budget.model import new_txn

    txn = new_txn("t_new", "2026-11-02", "Shop", -1_000, None)
    changes = [txn_change("acc_savings.2026-11", "t_new", None, txn)]
    book.store.write_docs(book.workspace_id, commit(book.ctx, ledger, changes, "test", "test")[1])
    assert book.store.get_doc(book.workspace_id, TXNS, "acc_savings.2026-11") is not None
    ledger = Ledger.load(book.store, book.workspace_id)
    book.store.write_docs(book.workspace_id, commit(book.ctx, ledger, reverse(changes), "test", "test")[1])
    assert book.snapshot() == before
    assert book.store.get_doc(book.workspace_id, TXNS, "acc_savings.2026-11") is None


def test_stale_bucket_write_is_a_conflict_not_a_loss(book):
    doc = book.store.get_doc(book.workspace_id, TXNS, "acc_checking.2026-09")
    book.set_txn("t_shop", memo="first")
    with pytest.raises(Conflict):
        book.store.write_docs(book.workspace_id, [DocWrite(TXNS, doc.id, doc.data, doc.version)])
    assert book.txn("t_shop")["memo"] == "first"
