"""The months' needs-attention docs (``u.<YYYY-MM>``): each holds a copy of every transaction of
its month that is uncategorised or unapproved, so a page of those reads no chunk; a month an older
version wrote, or one with more than the doc takes, is read from its chunks, with the same answer;
``countersign budget upgrade`` rebuilds what an older version left out. On SQLite and DynamoDB."""

from __future__ import annotations

from countersign.store.docs import DocWrite
from countersign.toolkit import ActionContext
from countersign.toolsets.budget import attention, layout
from countersign.toolsets.budget.model import TOTAL, TXNS, Ledger
from tests.budget import brute
from tests.budget.ledger import READS, Book
from tests.budget.test_rollup import Counting


def stored_attention(book: Book) -> dict[str, dict]:
    return {d.id: d.data["txns"] for d in book.store.docs.list_docs(book.workspace_id, TOTAL, "u.")}


def expected_attention(book: Book) -> dict[str, dict]:
    """What the docs must hold, worked out from every chunk."""
    out: dict[str, dict] = {}
    for chunk in book.store.docs.list_docs(book.workspace_id, TXNS):
        for txn in chunk.data["transactions"]:
            if txn["category_id"] is None and not txn["subtransactions"] and not txn["transfer"] \
                    or not txn["approved"]:
                out.setdefault(f"u.{txn['date'][:7]}", {})[txn["id"]] = {
                    "account_id": chunk.data["account_id"], "txn": txn}
    return out


def pages(book: Book) -> list[dict]:
    return [book.read("list_transactions", limit=50, **args)
            for args in ({"uncategorised": True}, {"unapproved": True},
                         {"uncategorised": True, "account_id": "acc_checking"},
                         {"unapproved": True, "since": "2026-09-13"})]


def reading(book: Book, tool: str, **args) -> tuple[dict, list[str]]:
    """A read's answer, and the kinds (and prefixes) of every list it made."""
    counting = Counting(book.store)
    listed: list[str] = []
    list_docs = counting.store.docs.list_docs

    def listing(workspace_id, kind, prefix="", **bounds):
        listed.append(f"{kind}:{prefix}")
        return list_docs(workspace_id, kind, prefix, **bounds)

    counting.store.docs.list_docs = listing
    r = READS[tool]
    return r.run(r.parse(args), ActionContext.reading(counting.store.docs, counting.store.workspaces,
                                                      book.ctx.workspace, book.ctx.person, None,
                                                 book.ctx.now)), listed


def test_every_transaction_needing_attention_is_in_its_months_doc_after_writes_of_every_kind(book):
    assert stored_attention(book) == expected_attention(book)
    assert set(stored_attention(book)["u.2026-09"]) == {"t_market", "t_shop"}
    book.do("create_transactions", account_id="acc_savings", approved=False, transactions=[
        {"date": "2026-10-03", "payee": "Shop", "amount": "-12.00", "category_id": "cat_books"},
        {"date": "2026-09-30", "payee": "Pay", "amount": "-100"}])
    book.do("apply_categories", changes=[{"transaction_id": "t_market", "category_id": "cat_groceries"}])
    book.do("split_transaction", transaction_id="t_shop", lines=[
        {"amount": "-7", "category_id": "cat_household"}, {"amount": "-5", "category_id": "cat_books"}])
    assert stored_attention(book) == expected_attention(book)
    book.do("approve_transactions", transaction_ids=["t_market", "t_shop"])
    book.do("undo_operation", operation_id=book.ops()[-1].id)
    assert stored_attention(book) == expected_attention(book)
    book.do("apply_categories", changes=[{"transaction_id": t, "category_id": "cat_books"}
                                         for t in book.all_txns() if book.txn(t)["category_id"] is None
                                         and not book.txn(t)["subtransactions"]])
    book.do("approve_transactions", transaction_ids=[t for t in book.all_txns() if not book.txn(t)["approved"]])
    assert stored_attention(book) == expected_attention(book) == {}  # docs of nothing are gone


def test_a_page_of_uncategorised_or_unapproved_reads_no_chunk_and_agrees_with_every_transaction(book):
    book.do("create_transactions", account_id="acc_savings", approved=False, transactions=[
        {"date": "2026-07-03", "payee": "Old", "amount": "-3"}, {"date": "2026-09-17", "payee": "New", "amount": "-4"}])
    txns, _ = brute.everything(book.store, book.workspace_id)
    want = brute.newest_first(txns, lambda a, t: t["category_id"] is None and not t["subtransactions"])
    got, listed = reading(book, "list_transactions", uncategorised=True, limit=10)
    assert [t["id"] for t in got["transactions"]] == want and got["total"] == len(want) == 4
    assert got["transactions"][0]["payee"] == "New" and got["transactions"][0]["account_name"] == "Savings"
    assert not [kind for kind in listed if kind.startswith(TXNS)]
    got, listed = reading(book, "list_transactions", unapproved=True, limit=10)
    assert [t["id"] for t in got["transactions"]] == brute.newest_first(txns, lambda a, t: not t["approved"])
    assert not [kind for kind in listed if kind.startswith(TXNS)]
    with_docs = pages(book)
    book.store.docs.write_docs(book.workspace_id, [DocWrite(TOTAL, d.id, None, d.version)
                                              for d in book.store.docs.list_docs(book.workspace_id, TOTAL, "u.")])
    assert pages(book) == with_docs  # the same pages, read from the chunks


def _as_an_older_version(book: Book, txn_id: str, **fields) -> None:
    """Change a transaction as a version before the needs-attention docs wrote it: its chunk and
    totals, not its month's doc."""
    ledger = Ledger(book.store.docs, book.workspace_id)
    ref = ledger.find_txn(txn_id)
    staged = layout.Staged(ledger)
    staged.replace(ref.chunk, txn_id, dict(ref.data, **fields))
    book.store.docs.write_docs(book.workspace_id, [w for w in staged.writes() if not w.id.startswith("u.")])


def test_a_month_an_older_version_wrote_is_read_from_its_chunks_until_the_upgrade_rebuilds_its_doc(book):
    _as_an_older_version(book, "t_bistro", category_id=None)  # uncategorised, not in the doc
    _as_an_older_version(book, "t_market", approved=True)  # approved, still in it (as uncategorised)
    assert stored_attention(book) != expected_attention(book)
    got, listed = reading(book, "list_transactions", uncategorised=True)
    assert [t["id"] for t in got["transactions"]] == ["t_shop", "t_bistro", "t_market"] and got["total"] == 3
    assert "budget_txns:2026-09." in listed  # the doc holds two of the three: the chunks tell
    got, _ = reading(book, "list_transactions", unapproved=True)
    assert [t["id"] for t in got["transactions"]] == ["t_shop"]
    before = pages(book)
    # a writer of this version keeps what it changes, and the count still tells the doc is short
    book.do("create_transactions", account_id="acc_checking", transactions=[
        {"date": "2026-09-18", "payee": "Kiosk", "amount": "-2"}])
    got, listed = reading(book, "list_transactions", uncategorised=True)
    assert [t["payee"] for t in got["transactions"]] == ["Kiosk", "Corner Store", "Bistro", "Market"]
    assert "budget_txns:2026-09." in listed
    assert layout.upgrade(book.store.docs, book.workspace_id) == 0  # no transaction moved; the doc rebuilt
    assert stored_attention(book) == expected_attention(book)
    assert attention.rebuild(book.store.docs, book.workspace_id) == 0  # nothing left to rebuild
    got, listed = reading(book, "list_transactions", uncategorised=True)
    assert [t["payee"] for t in got["transactions"]] == ["Kiosk", "Corner Store", "Bistro", "Market"]
    assert not [kind for kind in listed if kind.startswith(TXNS)]
    assert [p["total"] for p in pages(book)] == [before[0]["total"] + 1, before[1]["total"], before[2]["total"] + 1,
                                                 before[3]["total"]]


def test_a_month_with_more_than_its_doc_takes_keeps_the_doc_bounded_and_still_lists_every_one(book):
    memo = "m" * 500
    for batch in range(2):
        book.do("create_transactions", account_id="acc_checking", transactions=[
            {"date": f"2026-08-{1 + i % 28:02d}", "payee": f"Row {batch}.{i}", "amount": "-1", "memo": memo}
            for i in range(100)])
    doc = book.store.docs.get_doc(book.workspace_id, TOTAL, "u.2026-08")
    assert doc.data["bytes"] <= attention.ATTENTION_MAX
    assert layout.size_of(doc.data) <= attention.ATTENTION_MAX + 64
    assert 20 < len(doc.data["txns"]) < 200
    txns, _ = brute.everything(book.store, book.workspace_id)
    want = brute.newest_first(txns, lambda a, t: t["category_id"] is None and not t["subtransactions"])
    got = book.read("list_transactions", uncategorised=True, limit=500)
    assert got["total"] == len(want) == 202 and [t["id"] for t in got["transactions"]] == want
    # categorising what the doc holds leaves it short of the month's count: still read from the chunks
    book.do("apply_categories", changes=[{"transaction_id": t, "category_id": "cat_books"}
                                         for t in list(doc.data["txns"])[:20]])
    got = book.read("list_transactions", uncategorised=True, limit=500)
    assert got["total"] == 182 and len(got["transactions"]) == 182
    assert set(stored_attention(book)["u.2026-08"]) <= set(expected_attention(book)["u.2026-08"])
