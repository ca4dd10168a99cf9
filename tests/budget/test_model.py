"""The ledger model: amounts, dates, month resolution, figures, and versioned commits (both stores)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from countersign.store.docs import DocWrite
from countersign.store.errors import Conflict
from countersign.toolkit import ActionError
from countersign.toolsets.budget import layout
from countersign.toolsets.budget.figures import month_figures
from countersign.toolsets.budget.model import (
    DRIFT,
    LOCATOR,
    RTA_ID,
    TOTAL,
    TXNS,
    Ledger,
    display,
    month_start,
    new_txn,
    parse_date,
    resolve_month,
    to_milliunits,
)
from countersign.toolsets.budget.operations import budget_change, commit, reverse, txn_change
from tests.budget.ledger import NOW, assert_rolled_up


def ts(y, m, d):
    return int(datetime(y, m, d, 12, tzinfo=UTC).timestamp())


# -- amounts ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("value, milli", [
    (150, 150_000), (150.5, 150_500), ("150.00", 150_000), ("-86.40", -86_400), ("0.001", 1), (" 12 ", 12_000),
    (0, 0), ("+3.5", 3_500), (-0.1, -100), (".5", 500), (0.1 + 0.2, 300),
])
def test_amounts_become_milliunits(value, milli):
    assert to_milliunits(value, "amount") == milli


@pytest.mark.parametrize("value", ["abc", "", "1,5", "1e3", "NaN", "inf", None, True, [], {}, "12.3456", 1e12, "--1",
                                   "\u0661\u0662", "\uff11\uff12"])  # other scripts' digits
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
        (120_000, "120.00"),
        (1_234_560, "1234.56"),
        # a thousandth the budget keeps is shown, never rounded away: two changes never read alike
        (1, "0.001"),
        (-4, "-0.004"),
        (1_234_567, "1234.567"),
        (10_004, "10.004"),
        (9_995, "9.995"),
    ],
)
def test_amounts_show_with_two_decimals_or_the_third_they_have(milli, text):
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
    "value", ["2026-13", "2026-00", "2026-02-30", "September", "", "2026/09", 202609, None, "later",
              "\uff12\uff10\uff12\uff16-09", "\uff12\uff10\uff12\uff16-09-01"]
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


def test_ledger_reads_what_it_is_asked_with_versions(book):
    ledger = Ledger(book.store.docs, book.workspace_id)
    assert set(ledger.accounts) == {"acc_checking", "acc_savings"}
    assert ledger.category(RTA_ID).data["name"] == "Ready to Assign"  # built in, never stored
    ref = ledger.txn("t_market")  # an id made before the chunked layout: found through its locator
    assert ref.chunk == "2026-09.acc_checking.0000" and ref.account_id == "acc_checking"
    assert ledger.get(TXNS, ref.chunk).version == 1
    assert [d.data["name"] for d in ledger.ordered_categories("grp_fun")] == ["Tennis", "Books"]
    with pytest.raises(ActionError) as err:
        ledger.txn("t_nope", "changes[0].transaction_id")
    assert err.value.field == "changes[0].transaction_id" and "t_nope" in err.value.message


def test_balances_and_month_figures(book):
    ledger = Ledger(book.store.docs, book.workspace_id)
    assert ledger.balances("acc_checking") == (2_400_000 - 86_400 - 42_500 - 18_000, -12_000)
    figures = month_figures(ledger, "2026-09-01")
    assert figures["budgeted"] == {"cat_restaurants": 120_000, "cat_groceries": 400_000}
    assert figures["activity"] == {"cat_restaurants": -42_500, "cat_tennis": -18_000}
    assert figures["available"]["cat_restaurants"] == 77_500
    assert figures["available"]["cat_tennis"] == -18_000
    assert figures["income"] == 2_400_000
    assert figures["ready_to_assign"] == 2_100 + 2_400_000 - 520_000
    october = month_figures(ledger, "2026-10-01")
    assert october["available"]["cat_restaurants"] == 77_500  # carried over
    assert october["available"].get("cat_tennis", 0) == 0  # overspending does not carry over...
    assert october["ready_to_assign"] == figures["ready_to_assign"] - 18_000  # ...it comes out of Ready to Assign


def test_commit_writes_changes_and_operation_atomically(book):
    ledger = Ledger(book.store.docs, book.workspace_id)
    changes = [
        txn_change("t_market", {"category_id": None}, {"category_id": "cat_groceries"}),
        budget_change("2026-09-01", "cat_groceries", 400_000, 450_000),
    ]
    before = book.snapshot()
    op_id, writes = commit(book.ctx, ledger, changes, "test", "test two changes")
    assert book.snapshot() == before and book.ops() == []  # the writes are returned, not made
    book.store.docs.write_docs(book.workspace_id, writes)  # as the gate commits them: one transaction
    assert book.txn("t_market")["category_id"] == "cat_groceries"
    assert book.budgeted("2026-09-01", "cat_groceries") == 450_000
    assert month_figures(Ledger(book.store.docs, book.workspace_id),
                         "2026-09-01")["activity"]["cat_groceries"] == -86_400
    [op] = book.ops()
    assert op.id == op_id and op.data["changes"] == changes and op.data["by"] == book.ctx.person.id


def test_writes_staged_before_a_race_conflict_and_write_nothing(book):
    ledger = Ledger(book.store.docs, book.workspace_id)  # read before the other writer
    change = txn_change("t_market", {"category_id": None}, {"category_id": "cat_groceries"})
    _, writes = commit(book.ctx, ledger, [change], "test", "test")
    book.set_txn("t_shop", memo="written meanwhile")  # same chunk, other transaction
    before = book.snapshot()
    with pytest.raises(Conflict) as err:
        book.store.docs.write_docs(book.workspace_id, writes)
    assert err.value.kind in (TXNS, TOTAL)
    assert book.snapshot() == before and book.ops() == []


def test_commit_refuses_a_moved_target(book):
    book.set_txn("t_market", category_id="cat_household")
    ledger = Ledger(book.store.docs, book.workspace_id)
    change = txn_change("t_market", {"category_id": None}, {"category_id": "cat_groceries"})
    with pytest.raises(ActionError) as err:
        commit(book.ctx, ledger, [change], "test", "test")
    assert DRIFT in err.value.message and "Market" in err.value.message
    assert book.txn("t_market")["category_id"] == "cat_household"


def test_reverse_restores_exactly_and_empties_vanish(book):
    before = book.snapshot()
    ledger = Ledger(book.store.docs, book.workspace_id)
    txn = new_txn("t_20261102_new", "2026-11-02", "Shop", -1_000, None)
    changes = [txn_change("t_20261102_new", None, txn, account="acc_savings")]
    book.store.docs.write_docs(book.workspace_id, commit(book.ctx, ledger, changes, "test", "test")[1])
    assert book.store.docs.get_doc(book.workspace_id, TXNS, "2026-11.acc_savings.0000") is not None
    ledger = Ledger(book.store.docs, book.workspace_id)
    book.store.docs.write_docs(book.workspace_id, commit(book.ctx, ledger, reverse(changes), "test", "test")[1])
    assert book.snapshot() == before  # chunks, totals and locators alike
    assert book.store.docs.get_doc(book.workspace_id, TXNS, "2026-11.acc_savings.0000") is None


def test_stale_chunk_write_is_a_conflict_not_a_loss(book):
    doc = book.store.docs.get_doc(book.workspace_id, TXNS, "2026-09.acc_checking.0000")
    book.set_txn("t_shop", memo="first")
    with pytest.raises(Conflict):
        book.store.docs.write_docs(book.workspace_id, [DocWrite(TXNS, doc.id, doc.data, doc.version)])
    assert book.txn("t_shop")["memo"] == "first"


def test_no_doc_grows_with_the_ledger(book):
    """A month of one account holding far more than one item may: it is spread over chunks, each
    bounded, and the totals beside them stay small; every transaction is still found."""
    entries = [("acc_checking", new_txn(f"t_20261005_{i:016d}", "2026-10-05", f"Shop {i} " + "x" * 200,
                                        -1_000 - i, "cat_books", memo="m" * 300)) for i in range(700)]
    for start in range(0, len(entries), 150):  # as a long import writes them: batch after batch
        ledger = Ledger(book.store.docs, book.workspace_id)
        staged = layout.Staged(ledger)
        for account, txn in entries[start:start + 150]:
            staged.add(account, txn)
        book.store.docs.write_docs(book.workspace_id, staged.writes())
    chunks = [d for d in book.store.docs.list_docs(book.workspace_id, TXNS, "2026-10.")]
    assert len(chunks) > 5
    assert max(layout.size_of(d.data) for d in chunks) <= layout.CHUNK_TARGET
    totals = book.store.docs.list_docs(book.workspace_id, TOTAL)
    assert max(layout.size_of(d.data) for d in totals) < 2_000
    ledger = Ledger(book.store.docs, book.workspace_id)
    assert ledger.txn("t_20261005_0000000000000699").data["payee"].startswith("Shop 699")
    assert month_figures(ledger, "2026-10-01")["activity"]["cat_books"] == -sum(1_000 + i for i in range(700))


def test_a_chunk_that_grows_past_its_bound_is_cut(book):
    entries = [("acc_savings", new_txn(f"t_20261201_{i:016d}", "2026-12-01", "Shop", -10, None)) for i in range(200)]
    staged = layout.Staged(Ledger(book.store.docs, book.workspace_id))
    for account, txn in entries:
        staged.add(account, txn)
    book.store.docs.write_docs(book.workspace_id, staged.writes())
    ledger = Ledger(book.store.docs, book.workspace_id)
    subs = [{"amount": -1, "category_id": "cat_books", "memo": "n" * 400} for _ in range(10)]
    changes = [txn_change(t["id"], {"subtransactions": []}, {"subtransactions": subs}) for _, t in entries[:40]]
    book.store.docs.write_docs(book.workspace_id, commit(book.ctx, ledger, changes, "test", "split")[1])
    chunks = book.store.docs.list_docs(book.workspace_id, TXNS, "2026-12.")
    assert len(chunks) > 1 and max(layout.size_of(d.data) for d in chunks) <= layout.CHUNK_MAX
    assert sum(len(d.data["transactions"]) for d in chunks) == 200


def test_totals_always_agree_with_the_transactions(book):
    """After writes of every kind (and an undo), each total is what its transactions add up to."""
    book.do("create_transactions", account_id="acc_savings", transactions=[
        {"date": "2026-10-03", "payee": "Shop", "amount": "-12.00", "category_id": "cat_books"},
        {"date": "2026-09-30", "payee": "Pay", "amount": "100", "category_id": RTA_ID, "cleared": "cleared"}])
    book.do("apply_categories", changes=[{"transaction_id": "t_market", "category_id": "cat_groceries"}])
    split = book.do("split_transaction", transaction_id="t_shop", lines=[
        {"amount": "-7", "category_id": "cat_household"}, {"amount": "-5", "category_id": "cat_books"}])
    book.do("reconcile_account", account_id="acc_checking", balance="2253.10")
    book.do("approve_transactions", transaction_ids=["t_market"])
    book.do("undo_operation", operation_id=book.ops()[-1].id)
    assert split["operation_id"]
    expected: dict = {}
    for chunk in book.store.docs.list_docs(book.workspace_id, TXNS):
        for txn in chunk.data["transactions"]:
            for total_id, delta in layout.contribution(chunk.data["account_id"], txn).items():
                layout.add_into(expected.setdefault(total_id, {}), delta, +1)
    totals = {d.id: d.data for d in book.store.docs.list_docs(book.workspace_id, TOTAL)}
    assert {i: d for i, d in totals.items() if i[:2] in ("m.", "a.", "o.")} == expected
    assert_rolled_up(book.store, book.workspace_id)


def test_a_budget_of_the_older_layout_is_upgraded_once(book):
    """A workspace written before the chunked layout (one doc per account-month) reads the same
    after ``layout.upgrade``, which is safe to run again."""
    expected = {t["id"]: t for t in book.all_txns().values()}
    figures = month_figures(Ledger(book.store.docs, book.workspace_id), "2026-09-01")
    for kind in (TXNS, TOTAL, LOCATOR):  # back to what an older version wrote
        book.store.docs.write_docs(book.workspace_id, [DocWrite(kind, d.id, None, d.version)
                                                  for d in book.store.docs.list_docs(book.workspace_id, kind)])
    olds = [("acc_checking", "2026-09"), ("acc_savings", "2026-08")]
    book.store.docs.write_docs(book.workspace_id, [DocWrite(TXNS, f"{a}.{m}", {"account_id": a, "month": m,
                                                                               "transactions": [
        t for t in expected.values() if t["date"][:7] == m and (a == "acc_savings") == (m == "2026-08")]}, 0)
        for a, m in olds])
    assert layout.upgrade(book.store.docs, book.workspace_id) == len(expected)
    assert layout.upgrade(book.store.docs, book.workspace_id) == 0
    assert book.all_txns() == expected
    assert not [d for d in book.store.docs.list_docs(book.workspace_id, TXNS) if not d.id[0].isdigit()]
    ledger = Ledger(book.store.docs, book.workspace_id)
    assert month_figures(ledger, "2026-09-01") == figures
    assert ledger.txn("t_interest").account_id == "acc_savings"


def test_open_months_kept_in_an_account_total_by_an_older_version_still_count(book):
    """An older version kept the months of an account's cleared transactions in ``a.<account>``:
    reconcile still finds them, and the account's next write hands them to ``o.<account>``."""
    opened = book.store.docs.get_doc(book.workspace_id, TOTAL, "o.acc_checking")
    account = book.store.docs.get_doc(book.workspace_id, TOTAL, "a.acc_checking")
    book.store.docs.write_docs(book.workspace_id, [
        DocWrite(TOTAL, "o.acc_checking", None, opened.version),
        DocWrite(TOTAL, "a.acc_checking", dict(account.data, open=opened.data["open"]), account.version)])
    plan = book.plan("reconcile_account", account_id="acc_checking", balance="2253.10")
    assert {t["id"] for t in plan.subject["transactions"]} == {"t_pay", "t_market", "t_bistro"}
    book.do("create_transactions", account_id="acc_checking", transactions=[
        {"date": "2026-09-18", "payee": "Shop", "amount": "-1.00", "cleared": "cleared"}])
    assert "open" not in book.store.docs.get_doc(book.workspace_id, TOTAL, "a.acc_checking").data
    assert book.store.docs.get_doc(book.workspace_id, TOTAL, "o.acc_checking").data == {"open": {"2026-09": 4}}
