"""The roll-ups and the store's per-commit limit (both stores): a budget without roll-ups gets them
in batches of their own before its first write (never inside it, never half: the ledger doc comes
last), a batch is never split, a change too big for one commit is refused before the person is
asked, and ``budget upgrade`` repairs roll-ups that disagree with the months."""

from __future__ import annotations

import pytest

from countersign.store.docs import MAX_DOC_WRITES, DocWrite
from countersign.toolkit import ActionError
from countersign.toolsets.budget import importer, layout, rebuild, rollup
from countersign.toolsets.budget.model import MONTH, TOTAL
from tests.budget.ledger import ACTIONS, assert_rolled_up
from tests.budget.test_demo_import import register
from tests.budget.test_rollup import check_reads, run


class Died(BaseException):
    """The process died (a crash, a Lambda timeout) between two store calls."""


def old_history(book, years=range(2000, 2020)) -> None:
    """One Books transaction a year, then the roll-ups forgotten: a budget last written by the
    version before them."""
    rows = [f'"Checking","","{y}-03-05","Shop {y}","Fun: Books","Fun","Books","","$1.00","","Reconciled"'
            for y in years]
    importer.import_register(book.store.docs, book.ctx, register(*rows))
    run(book, ("forget_rollups",))


def rollup_ids(book) -> set[str]:
    return {d.id for d in book.store.docs.list_docs(book.workspace_id, TOTAL)
            if rollup.is_rollup(d.id)}


def spy_batches(book, monkeypatch, die_at: int | None = None) -> list[int]:
    """Record each write_docs batch's size; ``die_at``: the call (1-based) that never happens."""
    sizes: list[int] = []
    real = book.store.docs.write_docs

    def write_docs(workspace_id, writes):
        writes = list(writes)
        if die_at is not None and len(sizes) + 1 == die_at:
            raise Died()
        sizes.append(len(writes))
        return real(workspace_id, writes)

    monkeypatch.setattr(book.store.docs, "write_docs", write_docs)
    return sizes


NEW_ROWS = [f'"Checking","","{2021 + i // 12}-{i % 12 + 1:02d}-05","New {i}","Fun: Books","Fun","Books","",'
            f'"$1.00","","Reconciled"' for i in range(40)]
READ = ["2019-12", "2021-06", "2022-06", "2023-06", "2024-04", "2026-09"]


def test_an_import_into_a_budget_without_rollups_keeps_every_batch_one_transaction(book, monkeypatch):
    old_history(book)
    sizes = spy_batches(book, monkeypatch)
    batches: list[int] = []  # what the importer means as one transaction each
    real = importer._write

    def write(store, workspace_id, writes):
        batches.append(len(writes))
        return real(store, workspace_id, writes)

    monkeypatch.setattr(importer, "_write", write)
    importer.import_register(book.store.docs, book.ctx, register(*NEW_ROWS))
    assert max(batches) <= MAX_DOC_WRITES, batches
    assert sizes[-len(batches):] == batches  # each written whole, as one write_docs
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, READ)


@pytest.mark.parametrize("die_at", [1, 3, 5])
def test_an_import_that_dies_between_batches_leaves_figures_that_agree(book, monkeypatch, die_at):
    """Wherever the process dies (in the build of the roll-ups, or between the import's batches),
    what is stored reads right, and importing the file again finishes it."""
    old_history(book)
    monkeypatch.setattr(rebuild, "MAX_DOC_WRITES", 8)  # the build takes three batches, the import two
    sizes = spy_batches(book, monkeypatch, die_at=die_at)
    with pytest.raises(Died):
        importer.import_register(book.store.docs, book.ctx, register(*NEW_ROWS))
    monkeypatch.undo()
    if die_at <= 3:  # the build was cut short: no ledger doc, so the reads add up the months
        assert rollup.LEDGER_ID not in rollup_ids(book), sizes
    check_reads(book, READ)
    importer.import_register(book.store.docs, book.ctx, register(*NEW_ROWS))
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, READ)


def test_an_import_batch_over_the_limit_is_refused_not_split(store):
    writes = [DocWrite(MONTH, f"2001-{i:02d}-01", {"budgeted": {}}, 0) for i in range(1, 13)] * 8
    with pytest.raises(importer.RegisterError, match="limit is 90"):
        importer._write(store, "ws_nothing", writes)


RENT = [{"date": f"{2023 + i // 12}-{i % 12 + 1:02d}-01", "payee": "Landlord", "amount": "-900",
         "category_id": "cat_household"} for i in range(40)]


def test_backfilling_forty_months_into_a_budget_without_rollups_fits_one_commit(book):
    """The build runs first, in its own batches; the change's commit holds only the change and
    the roll-ups it rewrites."""
    old_history(book)
    plan = book.plan("create_transactions", account_id="acc_checking", transactions=RENT)
    assert not rollup_ids(book)  # planning builds nothing
    writes = [w for phase in ACTIONS["create_transactions"].apply(plan, book.ctx).phases for w in phase.writes]
    assert len(writes) <= MAX_DOC_WRITES
    assert rollup.LEDGER_ID in rollup_ids(book)  # built before the commit, on its own
    book.do("create_transactions", account_id="acc_checking", transactions=RENT)
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, ["2019-12", "2023-06", "2025-12", "2026-09"])


@pytest.mark.parametrize("forgotten", [False, True])
def test_a_backdated_change_too_big_for_one_commit_is_refused_before_the_person_is_asked(book, forgotten):
    """42 transactions in the 42 months of 2000–2003 (87 writes alone) rewrite their four years'
    roll-ups and may move every block's up to 2030 (counted as if they did): over the limit,
    refused at plan time, naming the problem and the way out; nothing is written (no build
    either). The same change a year at a time goes through."""
    old_history(book, range(2003, 2031))
    if not forgotten:
        book.do("set_category_budget", category_id="cat_books", month="2026-10", amount="5")
    before = book.snapshot()
    old = [{"date": f"{2000 + i // 12}-{i % 12 + 1:02d}-02", "payee": "Old rent", "amount": "-10",
            "category_id": "cat_household"} for i in range(42)]
    with pytest.raises(ActionError) as refused:
        book.plan("create_transactions", account_id="acc_checking", transactions=old)
    assert f"the limit is {MAX_DOC_WRITES}" in refused.value.message
    assert "roll-ups from 2000" in refused.value.message and "Split it" in refused.value.message
    assert book.snapshot() == before
    for year in range(4):
        book.do("create_transactions", account_id="acc_checking", transactions=old[12 * year:12 * year + 12])
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, ["2000-06", "2002-06", "2003-01", "2003-07", "2026-09", "2030-12"])


def test_a_change_is_counted_as_if_its_carry_reached_every_later_year(book, monkeypatch):
    """A budget in 2019 that an overspending later that year absorbs writes its month, its year and
    its operation; it is counted against the limit as if its carry moved every later year, since a
    write meanwhile can stop the absorbing and the count must not refuse it after the person said
    yes. Under a limit of 6 it is refused when planned, nothing written; under 12, it goes through.
    An approval moves no net: it rewrites no year and is counted as the 4 writes it makes."""
    from countersign.toolsets.budget import operations

    for year in range(2019, 2026):
        book.do("create_transactions", account_id="acc_checking", approved=year != 2019, transactions=[
            {"date": f"{year}-05-03", "payee": "Court", "amount": "-30", "category_id": "cat_tennis"}])
    before = book.snapshot()
    monkeypatch.setattr(operations, "MAX_DOC_WRITES", 6)
    with pytest.raises(ActionError) as refused:
        book.plan("set_category_budget", category_id="cat_tennis", month="2019-03", amount="10")
    assert "the limit is 6" in refused.value.message
    assert book.snapshot() == before
    (court_2019,) = (t["id"] for t in book.all_txns().values() if t["date"] == "2019-05-03")
    book.do("approve_transactions", transaction_ids=[court_2019])
    assert book.txn(court_2019)["approved"]
    monkeypatch.setattr(operations, "MAX_DOC_WRITES", 12)
    book.do("set_category_budget", category_id="cat_tennis", month="2019-03", amount="10")
    assert book.budgeted("2019-03-01", "cat_tennis") == 10_000
    assert_rolled_up(book.store, book.workspace_id)


def test_upgrade_repairs_rollups_that_disagree_with_the_months(book):
    """Year docs missing (a build cut short by an older version) and months written by a version
    that did not keep the roll-ups: the figures are wrong until ``budget upgrade`` rebuilds them."""
    old_history(book, range(2016, 2026))
    book.do("set_category_budget", category_id="cat_books", month="2017-02", amount="20")
    assert layout.upgrade(book.store.docs, book.workspace_id) == 0
    untouched = {d.id: d.version for d in book.store.docs.list_docs(book.workspace_id, TOTAL)}
    layout.upgrade(book.store.docs, book.workspace_id)  # roll-ups that agree are left alone
    assert {d.id: d.version for d in book.store.docs.list_docs(book.workspace_id, TOTAL)} == untouched

    docs = {d.id: d for d in book.store.docs.list_docs(book.workspace_id, TOTAL)}
    gone = [DocWrite(TOTAL, i, None, docs[i].version) for i in ("y.2020", "y.2021", "y.2024")]
    month = book.store.docs.get_doc(book.workspace_id, MONTH, "2017-02-01")
    old_version_write = DocWrite(MONTH, month.id, {"budgeted": {"cat_books": 90_000}}, month.version)
    book.store.docs.write_docs(book.workspace_id, [*gone, old_version_write])
    with pytest.raises(AssertionError):
        check_reads(book, ["2017-06", "2021-06", "2026-09"])

    assert layout.upgrade(book.store.docs, book.workspace_id) == 0
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, ["2017-06", "2021-06", "2024-06", "2026-09"])


FITTING = [("set_category_budget", {"category_id": "cat_tennis", "month": "2019-03", "amount": "10"}),
           ("set_category_budget", {"category_id": "cat_tennis", "month": "current", "amount": "12"}),
           ("set_category_budget", {"category_id": "cat_tennis", "month": "2031-01", "amount": "14"}),
           ("update_category", {"category_id": "cat_tennis", "name": "Padel"}),
           ("create_category", {"group_id": "grp_fun", "name": "Chess"})]


@pytest.mark.parametrize(("tool", "args"), FITTING, ids=[f"{t}-{a.get('month', '')}" for t, a in FITTING])
def test_a_change_its_plan_shows_fits_one_commit_is_not_staged_until_it_is_applied(book, monkeypatch, tool, args):
    """A change whose plan alone bounds its writes (``most_writes``: a budget month with the
    roll-ups its year may move, a category) is not staged when planned, only when applied (a held
    call's plan is planned again when the person answers); the bound is at least what staging
    it counts, with budgets in seven years so the carry may move many blocks; and it applies."""
    from countersign.toolsets.budget import operations

    for year in range(2019, 2026):
        book.do("create_transactions", account_id="acc_checking", transactions=[
            {"date": f"{year}-05-03", "payee": "Court", "amount": "-30", "category_id": "cat_tennis"}])
    action = ACTIONS[tool]
    counts: list[int] = []
    real_counted = rollup.counted

    def counted(*a, **k):
        counts.append(real_counted(*a, **k))
        return counts[-1]

    monkeypatch.setattr(operations.rollup, "counted", counted)
    plan = book.plan(tool, **args)
    assert plan.effect is None and counts == []  # not staged
    most = action.most_writes(plan)
    assert most is not None and most <= MAX_DOC_WRITES
    staged = action.effect_of(plan, book.ctx, operations.Planning())
    assert sum(len(phase.writes) for phase in staged.phases) <= most
    assert len(counts) == 1 and counts[0] <= most  # what commit() counted against the limit
    before = book.snapshot()
    book.apply(tool, plan)
    assert book.snapshot() != before
    assert_rolled_up(book.store, book.workspace_id)
