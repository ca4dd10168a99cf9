"""A budget's stored items stay bounded whatever it holds: its transactions live in chunks cut at a
fixed size, and what keeps an entry per category (a month's budget and totals, a year's roll-up,
the ledger's counts) is bounded by the most categories a budget holds, which create_category and
the importer refuse to pass. (On SQLite only: the rule reads the store through the one DocReader
interface the store suite tests on both, and 500 categories make moto's transactions slow.)"""

from __future__ import annotations

import pytest

from countersign.core.canonical import canonical_json
from countersign.core.ids import new_id
from countersign.store.docs import MAX_DOC_WRITES, DocWrite
from countersign.toolkit import ActionError
from countersign.toolsets.budget import importer, rollup
from countersign.toolsets.budget.model import CATEGORY, MAX_CATEGORIES
from tests.budget.test_demo_import import register

DYNAMODB_ITEM_LIMIT = 400 * 1024


@pytest.fixture(scope="module")
def backend():
    yield "sqlite", None


def size(data) -> int:
    return len(canonical_json(data).encode("utf-8"))


def test_a_block_of_years_of_the_most_categories_budgeted_and_spent_every_month_fits_half_an_item():
    """Every category budgeted and spent in every month of a whole block of years, with amounts in
    the billions: the year docs and the block doc (the largest items a budget keeps per
    category), the month docs and totals, and the ledger doc each stay under half of DynamoDB's
    item limit (JSON text: the item itself is smaller)."""
    cats = [new_id("cat_") for _ in range(MAX_CATEGORIES)]
    months = [f"{y}-{m:02d}" for y in range(2025, 2025 + rollup.BLOCK_YEARS) for m in range(1, 13)]
    budgets = [(f"{m}-01", {"budgeted": {c: -9_876_543_210 + i for i, c in enumerate(cats)}}) for m in months]
    totals = [(m, {"n": 10_000, "accounts": {"acc_checking": 10_000}, "income": 123_456_789_012,
                   "activity": {c: -1_234_567_890 - i for i, c in enumerate(cats)},
                   "cats": dict.fromkeys(cats, 20), "uncategorised": 5, "unapproved": 7}) for m in months]
    docs = rollup.rolled_up(budgets, totals)
    assert rollup.block_id("2025") in docs and len([i for i in docs if i.startswith("y.")]) == rollup.BLOCK_YEARS
    largest = max([*map(size, docs.values()), *(size(d) for _, d in budgets + totals)])
    assert largest in {size(docs["e.2025"]), size(docs["y.2025"])}  # the roll-ups grow most with categories
    assert largest < DYNAMODB_ITEM_LIMIT / 2, largest


def add_categories(book, n: int) -> None:
    """``n`` more categories in the Fun group, written straight to the store (set-up only)."""
    writes = [DocWrite(CATEGORY, new_id("cat_"), {"name": f"Extra {i}", "group_id": "grp_fun", "position": 10 + i,
                                                  "hidden": False, "note": ""}, 0) for i in range(n)]
    for start in range(0, n, MAX_DOC_WRITES):
        book.store.docs.write_docs(book.workspace_id, writes[start:start + MAX_DOC_WRITES])


def categories(book) -> int:
    return len(book.store.docs.list_docs(book.workspace_id, CATEGORY))


def test_create_category_is_refused_at_the_most_categories_and_nothing_is_written(book):
    add_categories(book, MAX_CATEGORIES - categories(book) - 1)
    book.do("create_category", group_id="grp_everyday", name="The last one")  # the 500th goes in
    assert categories(book) == MAX_CATEGORIES
    before = book.snapshot()
    with pytest.raises(ActionError) as refused:
        book.plan("create_category", group_id="grp_everyday", name="Pets")
    assert refused.value.message == (
        f"This budget has {MAX_CATEGORIES} categories; adding 1 more would pass the most one budget holds "
        f"({MAX_CATEGORIES}): rename and reuse one that is no longer needed (update_category). Nothing was written.")
    assert book.snapshot() == before


def test_an_import_whose_new_categories_would_pass_the_most_is_refused_before_anything_is_written(book):
    have = categories(book)
    add_categories(book, MAX_CATEGORIES - have - 2)  # room for two more
    before = book.snapshot()
    rows = [f'"Checking","","2026-09-0{i}","Shop {i}","Hobbies: Kind {i}","Hobbies","Kind {i}","","$1.00","",'
            f'"Cleared"' for i in range(1, 4)]
    with pytest.raises(importer.RegisterError) as refused:
        importer.import_register(book.store.docs, book.ctx, register(*rows))
    assert str(refused.value) == (
        f"This budget has {MAX_CATEGORIES - 2} categories; adding 3 more would pass the most one budget holds "
        f"({MAX_CATEGORIES}): rename and reuse one that is no longer needed (update_category). Nothing was written.")
    assert book.snapshot() == before
    # the same file less one new category fits, and rows in categories that exist never count
    importer.import_register(book.store.docs, book.ctx, register(*rows[:2], rows[0].replace("Shop 1", "Shop again")))
    assert categories(book) == MAX_CATEGORIES
