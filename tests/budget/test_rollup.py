"""The roll-ups (year docs and the ledger doc) against the slow, obvious computation from every
transaction: over random histories of years, with backdated writes, undos (deletes), category
moves and budgets in past and future years, every read agrees; and a read costs the same
whatever the history's length."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from countersign.store.docs import Doc, DocWrite
from countersign.store.sqlite import SQLiteStore
from countersign.toolkit import ActionContext, ActionError
from countersign.toolsets.budget import layout, rollup
from countersign.toolsets.budget.importer import import_register
from countersign.toolsets.budget.model import RTA_ID, TOTAL, display
from tests.budget import brute
from tests.budget.ledger import READS, assert_rolled_up, new_book
from tests.support.stores import calls_recorded

CATEGORIES = ["cat_groceries", "cat_restaurants", "cat_household", "cat_tennis", "cat_books"]
ACCOUNTS = ["acc_checking", "acc_savings"]
YEARS = [2019, 2020, 2022, 2025, 2026, 2027, 2029]  # gaps between some of them

_STORE: list[SQLiteStore] = []


def shared_store() -> SQLiteStore:
    """One SQLite store for every example (each gets its own workspace)."""
    if not _STORE:
        _STORE.append(SQLiteStore(str(Path(tempfile.mkdtemp()) / "rollup.db")))
    return _STORE[0]


months = st.builds(lambda y, m: f"{y}-{m:02d}", st.sampled_from(YEARS), st.integers(1, 12))
amounts = st.integers(-40_000, 30_000).filter(bool).map(lambda cents: cents * 10)  # what display() shows exactly
new_txn = st.fixed_dictionaries({
    "month": months, "day": st.integers(1, 28), "amount": amounts,
    "category": st.sampled_from([*CATEGORIES, RTA_ID, None]), "cleared": st.sampled_from(["cleared", "uncleared"]),
    "approved": st.booleans(),  # (a call's first transaction says, for the call)
})
ops = st.one_of(
    st.tuples(st.just("create"), st.sampled_from(ACCOUNTS), st.lists(new_txn, min_size=1, max_size=4)),
    st.tuples(st.just("budget"), st.sampled_from(CATEGORIES), months, st.integers(0, 50_000).map(lambda c: c * 10)),
    st.tuples(st.just("recategorise"), st.integers(0, 10_000), st.sampled_from([*CATEGORIES, RTA_ID])),
    st.tuples(st.just("undo"), st.integers(0, 10_000)),
    st.tuples(st.just("move_category"), st.sampled_from(CATEGORIES)),
    st.tuples(st.just("approve"), st.integers(0, 10_000)),
    st.tuples(st.just("forget_rollups"),),
    st.tuples(st.just("forget_attention"),),
)


def run(book, op) -> None:
    kind = op[0]
    if kind == "create":
        _, account, txns = op
        book.do("create_transactions", account_id=account, approved=txns[0].get("approved", True), transactions=[
            {"date": f"{t['month']}-{t['day']:02d}", "payee": "P", "amount": display(t["amount"]),
             "category_id": t["category"], "cleared": t["cleared"]} for t in txns])
    elif kind == "budget":
        _, category, month, amount = op
        if book.budgeted(f"{month}-01", category) != amount:
            book.do("set_category_budget", category_id=category, month=month, amount=display(amount))
    elif kind in ("recategorise", "approve"):
        ids = sorted(book.all_txns())
        txn = book.all_txns()[ids[op[1] % len(ids)]]
        if kind == "approve" and not txn["approved"]:
            book.do("approve_transactions", transaction_ids=[txn["id"]])
        elif kind == "recategorise" and not txn["subtransactions"] and txn["category_id"] != op[2]:
            book.do("apply_categories", changes=[{"transaction_id": txn["id"], "category_id": op[2]}])
    elif kind == "undo":
        undoable = [d for d in book.ops() if d.data["undoable"] and not d.data["undone_by"]]
        if undoable:
            try:
                book.do("undo_operation", operation_id=undoable[op[1] % len(undoable)].id)
            except ActionError as exc:  # a later write changed what it wrote: refused, nothing written
                assert "changed since" in exc.message
    elif kind == "move_category":
        group = "grp_fun" if book.category(op[1])["group_id"] == "grp_everyday" else "grp_everyday"
        book.do("update_category", category_id=op[1], group_id=group)
    elif kind == "forget_rollups":  # as a budget written by the version before the roll-ups
        gone = [DocWrite(TOTAL, d.id, None, d.version) for d in book.store.docs.list_docs(book.workspace_id, TOTAL)
                if rollup.is_rollup(d.id)]
        book.store.docs.write_docs(book.workspace_id, gone)
    elif kind == "forget_attention":  # as a budget written by the version before the needs-attention docs
        book.store.docs.write_docs(book.workspace_id, [DocWrite(TOTAL, d.id, None, d.version) for d in
                                                  book.store.docs.list_docs(book.workspace_id, TOTAL, "u.")])


def check_reads(book, months_to_read: list[str]) -> None:
    txns, budgets = brute.everything(book.store, book.workspace_id)
    attending = {t["id"]: {"account_id": a, "txn": t} for a, t in txns
                 if not t["approved"] or (t["category_id"] is None and not t["subtransactions"])}
    for doc in book.store.docs.list_docs(book.workspace_id, TOTAL, "u."):  # each entry as its transaction is
        assert all(attending.get(i) == e and e["txn"]["date"][:7] == doc.id[2:] for i, e in doc.data["txns"].items())
    for month in months_to_read:
        got = book.read("get_month", month=month)
        want = brute.month_figures(txns, budgets, f"{month}-01")
        assert got["ready_to_assign_milliunits"] == want["ready_to_assign"], month
        assert got["income_milliunits"] == want["income"], month
        for row in got["categories"]:
            assert row["available_milliunits"] == want["available"].get(row["id"], 0), (month, row["name"])
            assert row["activity_milliunits"] == want["activity"].get(row["id"], 0), (month, row["name"])
            assert row["budgeted_milliunits"] == want["budgeted"].get(row["id"], 0), (month, row["name"])
    accounts = {a["id"]: a for a in book.read("list_accounts")["accounts"]}
    for account, (cleared, uncleared) in brute.balances(txns).items():
        assert (accounts[account]["cleared_balance_milliunits"], accounts[account]["uncleared_balance_milliunits"]) \
            == (cleared, uncleared)
    for args, keep in [({}, lambda a, t: True),
                       ({"category_id": "cat_books"}, lambda a, t: "cat_books" in {t["category_id"]}
                        | {s["category_id"] for s in t["subtransactions"]}),
                       ({"account_id": "acc_savings"}, lambda a, t: a == "acc_savings"),
                       ({"uncategorised": True}, lambda a, t: t["category_id"] is None and not t["subtransactions"]),
                       ({"unapproved": True, "account_id": "acc_checking"},
                        lambda a, t: not t["approved"] and a == "acc_checking")]:
        want_ids = brute.newest_first(txns, keep)
        page = book.read("list_transactions", limit=3, **args)
        assert page["total"] == len(want_ids), args
        assert [t["id"] for t in page["transactions"]] == want_ids[:3], args
        if len(want_ids) > 4:
            later = book.read("list_transactions", limit=2, cursor="3", **args)
            assert [t["id"] for t in later["transactions"]] == want_ids[3:5], args


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ops, min_size=1, max_size=10), st.lists(months, min_size=1, max_size=4))
def test_reads_agree_with_every_transaction_over_random_histories(history, read_months):
    book = new_book(shared_store())
    for op in history:
        run(book, op)
    years = sorted({m[:4] for m in read_months} | {"2026"})
    check_reads(book, sorted({*read_months, "2026-09", *(f"{y}-01" for y in years), *(f"{y}-12" for y in years)}))
    if any(d.id == rollup.LEDGER_ID for d in book.store.docs.list_docs(book.workspace_id, TOTAL)):
        assert_rolled_up(book.store, book.workspace_id)


def test_backdated_changes_carry_through_every_later_year(book):
    """On both stores: an overspending in 2019 is taken from 2019's Ready to Assign, a budget in
    2019 carries to 2027, and undoing the backdated write puts every year back."""
    book.do("set_category_budget", category_id="cat_books", month="2027-03", amount="10")
    book.do("create_transactions", account_id="acc_checking", transactions=[
        {"date": "2019-05-02", "payee": "Old shop", "amount": "-30", "category_id": "cat_books"},
        {"date": "2019-05-03", "payee": "Old pay", "amount": "100", "category_id": RTA_ID}])
    book.do("set_category_budget", category_id="cat_tennis", month="2019-04", amount="25")
    created = [d for d in book.ops() if d.data["kind"] == "create_transactions"][-1].id
    check_reads(book, ["2019-04", "2019-05", "2019-06", "2020-01", "2026-09", "2027-03", "2028-01"])
    assert book.read("get_month", month="2027-03")["categories"][-1]["available_milliunits"] is not None
    book.do("undo_operation", operation_id=created)
    check_reads(book, ["2019-05", "2020-01", "2026-09", "2027-03"])
    assert_rolled_up(book.store, book.workspace_id)


def test_undoing_the_only_write_of_a_block_of_years_leaves_no_rollup_of_it(book):
    """A spending in 2016 makes the year doc and the block doc of 2015–2019 and moves the carry
    of every later block; undoing it takes both docs away and puts every later carry back."""
    before = {d.id: d.data for d in book.store.docs.list_docs(book.workspace_id, TOTAL) if rollup.is_rollup(d.id)}
    book.do("create_transactions", account_id="acc_checking", transactions=[
        {"date": "2016-02-03", "payee": "Pay", "amount": "300", "category_id": RTA_ID},
        {"date": "2016-02-04", "payee": "Shop", "amount": "-30", "category_id": "cat_books"}])
    assert {"y.2016", "e.2015"} <= set(_year_versions(book))
    check_reads(book, ["2016-02", "2021-01", "2026-09"])
    created = [d for d in book.ops() if d.data["kind"] == "create_transactions"][-1].id
    book.do("undo_operation", operation_id=created)
    after = {d.id: d.data for d in book.store.docs.list_docs(book.workspace_id, TOTAL) if rollup.is_rollup(d.id)}
    assert after == before
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, ["2016-02", "2021-01", "2026-09"])


def _year_versions(book) -> dict[str, int]:
    """The version of every year doc and block doc."""
    return {d.id: d.version for d in book.store.docs.list_docs(book.workspace_id, TOTAL) if d.id.startswith(("y.",
                                                                                                             "e."))}


def test_a_backdated_change_an_overspent_month_absorbs_rewrites_no_later_year(book):
    """On both stores: a budget in 2019 for a category overspent later that year (the overspending
    is taken from Ready to Assign, not carried) leaves the carry at the end of 2019 as it was, so
    only 2019 and its block's doc are written, no later block; moving a 2020 spending between two
    overspent categories and a 2024 one in one write rewrites those two years, their block and
    the block after it (whose carry moved), no other year; every figure still agrees with the
    transactions."""
    for year in range(2019, 2026):
        book.do("create_transactions", account_id="acc_checking", transactions=[
            {"date": f"{year}-02-03", "payee": "Pay", "amount": "500", "category_id": RTA_ID},
            {"date": f"{year}-05-03", "payee": "Court", "amount": "-30", "category_id": "cat_tennis"},
            {"date": f"{year}-07-03", "payee": "Shop", "amount": "-20", "category_id": "cat_books"}])
        book.do("set_category_budget", category_id="cat_books", month=f"{year}-06", amount="50")
    before = _year_versions(book)
    book.do("set_category_budget", category_id="cat_tennis", month="2019-03", amount="10")
    after = _year_versions(book)
    assert [y for y in sorted(after) if after[y] != before[y]] == ["e.2015", "y.2019"]
    check_reads(book, ["2019-03", "2019-05", "2019-06", "2020-01", "2022-05", "2026-09"])
    assert_rolled_up(book.store, book.workspace_id)

    court_2020, shop_2024 = (t["id"] for t in sorted(book.all_txns().values(), key=lambda t: t["date"])
                             if t["date"] in ("2020-05-03", "2024-07-03"))
    book.do("apply_categories", changes=[{"transaction_id": court_2020, "category_id": "cat_household"},
                                         {"transaction_id": shop_2024, "category_id": "cat_groceries"}])
    moved = _year_versions(book)
    assert [y for y in sorted(moved) if moved[y] != after[y]] == ["e.2020", "e.2025", "y.2020", "y.2024"]
    check_reads(book, ["2020-05", "2020-12", "2021-01", "2023-12", "2024-07", "2025-01", "2026-09"])
    assert_rolled_up(book.store, book.workspace_id)


def test_a_backdated_change_carried_through_every_later_year_writes_one_doc_per_later_block():
    """A budget in 2014 so large that no later month absorbs it moves the carry of every later
    year: its own year doc is rewritten and each block doc from its block on (2010, 2015, 2020,
    2025: no other year doc), all read in the plan's one read."""
    from countersign.gate.question import Question
    from tests.budget.ledger import ACTIONS

    book = new_book(shared_store())
    for year in range(2014, 2026):
        run(book, ("create", "acc_checking", [{"month": f"{year}-03", "day": 3, "amount": -5_000,
                                               "category": "cat_books", "cleared": "cleared"}]))
    counting = Counting(book.store)
    ctx = ActionContext.reading(counting.store.docs, counting.store.workspaces, book.ctx.workspace, book.ctx.person,
                                None, book.ctx.now)
    effect = Question.of(ACTIONS["set_category_budget"], {"category_id": "cat_books", "month": "2014-01",
                                                          "amount": "5000"}, ctx).effect()
    written = {w.id for phase in effect.phases for w in phase.writes if rollup.is_rollup(w.id)}
    assert written == {"y.2014", "e.2010", "e.2015", "e.2020", "e.2025"}
    assert sum(counting.calls.values()) == 1, counting.calls  # the later blocks are read with the plan's first read
    book.do("set_category_budget", category_id="cat_books", month="2014-01", amount="5000")
    check_reads(book, ["2014-01", "2014-12", "2019-06", "2020-03", "2025-12", "2026-09"])
    assert_rolled_up(book.store, book.workspace_id)


def test_a_year_whose_months_add_nothing_has_no_rollup_and_the_rollups_check_as_consistent(book):
    """A year whose only transaction is uncategorised adds no net and no flow: the write makes no
    year doc for it, and a rebuild from the months (what ``countersign budget upgrade`` compares
    against) expects none, so a consistent budget is not reported, or rewritten, as stale."""
    from countersign.toolsets.budget import rebuild
    from countersign.toolsets.budget.model import Ledger

    book.do("create_transactions", account_id="acc_checking", transactions=[
        {"date": "2015-12-03", "payee": "Shop", "amount": "-40", "category_id": "cat_books"},
        {"date": "2018-05-03", "payee": "Unsorted", "amount": "-5", "category_id": None},
        {"date": "2019-03-03", "payee": "Court", "amount": "-8", "category_id": "cat_tennis"}])
    assert "y.2018" not in _year_versions(book)
    assert rebuild.is_consistent(Ledger(book.store.docs, book.workspace_id))
    assert_rolled_up(book.store, book.workspace_id)
    assert rebuild.rebuild(book.store.docs, book.workspace_id) is False  # nothing to repair
    check_reads(book, ["2018-05", "2019-03", "2026-09"])


def test_a_budget_without_rollups_reads_the_same_and_its_first_write_builds_them(book):
    before = {m: book.read("get_month", month=m) for m in ("2026-08", "2026-09", "2026-10")}
    run(book, ("forget_rollups",))
    assert {m: book.read("get_month", month=m) for m in before} == before
    assert book.read("list_transactions")["total"] == len(book.all_txns())
    book.do("set_category_budget", category_id="cat_books", month="2026-10", amount="5")
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, ["2026-08", "2026-09", "2026-10"])
    run(book, ("forget_rollups",))
    assert layout.upgrade(book.store.docs, book.workspace_id) == 0  # nothing to move; the roll-ups are built
    assert_rolled_up(book.store, book.workspace_id)
    assert layout.upgrade(book.store.docs, book.workspace_id) == 0


def _to_older_layout(book) -> None:
    """Rewrite the roll-ups as the layout before the block docs kept them: each year doc with the
    carry at its ``start`` and ``end``, no block docs, a ledger doc without ``v``."""
    from countersign.toolsets.budget.carry import carry, empty_start

    docs = {d.id: d for d in book.store.docs.list_docs(book.workspace_id, TOTAL) if rollup.is_rollup(d.id)}
    writes, end = [], empty_start()
    for ident in sorted(i for i in docs if i.startswith("y.")):
        start, end = end, carry(end, docs[ident].data)
        writes.append(DocWrite(TOTAL, ident, dict(docs[ident].data, start=start, end=end), docs[ident].version))
    writes += [DocWrite(TOTAL, i, None, d.version) for i, d in docs.items() if i.startswith("e.")]
    ledger = docs[rollup.LEDGER_ID]
    writes.append(DocWrite(TOTAL, ledger.id, {k: v for k, v in ledger.data.items() if k != "v"}, ledger.version))
    book.store.docs.write_docs(book.workspace_id, writes)


@pytest.mark.parametrize("rebuilt_by", ["a write", "upgrade"])
def test_a_budget_in_the_older_layout_reads_right_and_is_rebuilt_in_this_one(book, rebuilt_by):
    """Roll-ups in the layout before the block docs are not trusted: reads add up the months (and
    agree with every transaction), and the first write (or ``budget upgrade``) rebuilds them."""
    from countersign.toolsets.budget import rebuild
    from countersign.toolsets.budget.model import Ledger

    for year in (2016, 2019, 2023):
        book.do("create_transactions", account_id="acc_checking", transactions=[
            {"date": f"{year}-04-03", "payee": "Shop", "amount": "-25", "category_id": "cat_books"}])
    book.do("set_category_budget", category_id="cat_tennis", month="2016-02", amount="40")
    _to_older_layout(book)
    assert not rebuild.is_consistent(Ledger(book.store.docs, book.workspace_id))
    check_reads(book, ["2016-02", "2016-12", "2019-04", "2024-01", "2026-09"])
    if rebuilt_by == "a write":
        book.do("set_category_budget", category_id="cat_books", month="2019-03", amount="30")
    else:
        assert layout.upgrade(book.store.docs, book.workspace_id) == 0
    assert_rolled_up(book.store, book.workspace_id)
    assert not any("start" in d.data for d in book.store.docs.list_docs(book.workspace_id, TOTAL, "y."))
    check_reads(book, ["2016-02", "2016-12", "2019-04", "2024-01", "2026-09"])


def test_a_backdated_import_over_many_years_keeps_every_batch_within_one_transaction(book):
    """Rows over 26 years, most before anything in the budget, into a budget that also budgets
    a later year: every batch (the store refuses one over MAX_DOC_WRITES) carries its roll-ups,
    and the figures agree with the transactions."""
    from tests.budget.test_demo_import import register

    book.do("set_category_budget", category_id="cat_books", month="2031-02", amount="40")
    rows = [f'"Checking","","{2001 + i % 26}-{i % 12 + 1:02d}-0{1 + i % 9}","Shop {i}","Fun: Books","Fun","Books",'
            f'"","${i % 70 + 1}.00","","Cleared"' for i in range(60)]
    result = import_register(book.store.docs, book.ctx, register(*rows))
    assert result.imported == 60
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, ["2001-01", "2013-07", "2026-09", "2027-01", "2031-02", "2032-01"])


class Counting:
    """The store as a read sees it (:attr:`store`), every call of any method of any of its roles
    counted at the boundary (by method name), and every doc a call returned: a read moved to another
    method, or to another role, is still counted."""

    def __init__(self, store):
        self.calls, self.docs_read = Counter(), 0
        self.store = calls_recorded(store, self._counted)

    def _counted(self, name, args, result):
        self.calls[name] += 1
        self.docs_read += _docs_in(result)


def _docs_in(result) -> int:
    if isinstance(result, Doc):
        return 1
    if isinstance(result, dict):
        result = list(result.values())
    if isinstance(result, list | tuple):
        return sum(_docs_in(item) for item in result)
    return 0


@pytest.mark.parametrize("read,args", [("get_month", {}), ("list_categories", {}), ("list_accounts", {}),
                                       ("list_transactions", {"limit": 5}),
                                       ("list_transactions", {"limit": 2, "category_id": "cat_books"})])
def test_a_read_reads_as_much_after_ten_years_as_after_one(read, args):
    """The same read of the same month reads as many docs and makes as many store calls (of each
    method) whether the history before this year holds one year or ten."""
    costs = []
    for first_year in (2025, 2016):
        book = new_book(shared_store())
        for year in range(first_year, 2026):
            run(book, ("create", "acc_checking", [
                {"month": f"{year}-{m:02d}", "day": 3, "amount": -5_000 * m, "category": "cat_books",
                 "cleared": "cleared"} for m in (1, 6, 11)]))
            run(book, ("budget", "cat_books", f"{year}-06", 20_000))
        counting = Counting(book.store)
        ctx = ActionContext.reading(counting.store.docs, counting.store.workspaces, book.ctx.workspace,
                                    book.ctx.person, None, book.ctx.now)
        r = READS[read]
        r.run(r.parse(args), ctx)
        costs.append((dict(counting.calls), counting.docs_read))
    assert costs[0][0] and costs[0][1] > 0, costs  # the read went through the counted store and read docs
    assert costs[0] == costs[1]
