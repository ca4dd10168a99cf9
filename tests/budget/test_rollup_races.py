"""Two writers whose changes meet in the block docs (both stores): whichever commits second is
refused (a :class:`Conflict`, which the gate answers by planning again), never committed over a
carry it did not see."""

from __future__ import annotations

import pytest

from countersign.gate.question import Question
from countersign.store.errors import Conflict
from countersign.toolkit import ActionContext
from countersign.toolsets.budget import rollup
from countersign.toolsets.budget.model import TOTAL
from tests.budget.ledger import ACTIONS, assert_rolled_up
from tests.budget.test_rollup import check_reads


def planned(book, tool: str, **args) -> list:
    """The writes a yes to ``tool`` would commit, planned now (not committed)."""
    ctx = ActionContext.reading(book.store.docs, book.store.workspaces, book.ctx.workspace, book.ctx.person, None,
                                book.ctx.now)
    return [w for phase in Question.of(ACTIONS[tool], args, ctx).effect().phases for w in phase.writes]


def spend(book, day: str, amount: str = "-20") -> None:
    book.do("create_transactions", account_id="acc_checking", transactions=[
        {"date": day, "payee": "Shop", "amount": amount, "category_id": "cat_books"}])


def test_a_new_block_planned_while_the_block_before_it_moves_is_refused_not_left_stale(book):
    """A spending in 2021 makes the block 2020–2024, whose start is the carry out of 2015–2019.
    A budget in 2016 committed meanwhile moves that carry (and rewrites the blocks it knows of,
    not the new one): the 2021 change, committed after it, is refused; planned again it goes
    through, and every figure agrees with the transactions."""
    spend(book, "2016-05-03")
    writes = planned(book, "create_transactions", account_id="acc_checking", transactions=[
        {"date": "2021-04-03", "payee": "Shop", "amount": "-20", "category_id": "cat_books"}])
    blocks = {w.id: w for w in writes if w.kind == TOTAL and w.id.startswith("e.")}
    assert set(blocks) == {"e.2015", "e.2020", "e.2025"}  # (its spending moves the flow on into 2025)
    before = book.store.docs.get_doc(book.workspace_id, TOTAL, "e.2015")
    assert (blocks["e.2015"].data, blocks["e.2015"].expected_version) == (before.data, before.version)  # as read
    book.do("set_category_budget", category_id="cat_books", month="2016-02", amount="300")
    with pytest.raises(Conflict):
        book.store.docs.write_docs(book.workspace_id, writes)
    assert rollup.block_id("2020") not in {d.id for d in book.store.docs.list_docs(book.workspace_id, TOTAL)}
    spend(book, "2021-04-03")
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, ["2016-05", "2021-04", "2026-09"])


def test_two_changes_in_one_block_conflict_on_its_doc(book):
    """Two years of the same block hold their effects in its one doc: a change to 2017 planned
    while one to 2018 commits is refused, though their year docs differ."""
    spend(book, "2017-05-03")
    spend(book, "2018-05-03")
    writes = planned(book, "set_category_budget", category_id="cat_books", month="2017-03", amount="15")
    book.do("set_category_budget", category_id="cat_books", month="2018-03", amount="25")
    with pytest.raises(Conflict):
        book.store.docs.write_docs(book.workspace_id, writes)
    book.do("set_category_budget", category_id="cat_books", month="2017-03", amount="15")
    assert_rolled_up(book.store, book.workspace_id)
    check_reads(book, ["2017-05", "2018-05", "2026-09"])
