"""A month's transactions that need attention, kept beside its chunks so the pages that ask for
them read only them.

``budget_total`` ``u.<YYYY-MM>`` holds a copy of each transaction of the month that is
uncategorised or unapproved, ``{"txns": {id: {"account_id", "txn"}}, "bytes": n}``. It is kept by
:class:`.layout.Staged` in the same commit as the chunk and the month total (``m.<YYYY-MM>``)
the transaction counts towards: an entry goes in when a transaction needing attention is counted
in, and out when it is counted out (a change is both). So the doc never holds a transaction that
does not need attention, and :func:`complete` can tell from the month total's exact counts
whether it holds *every* one of the kind a page asks for: when it holds as many uncategorised
(or unapproved) transactions as the month total counts, it holds them all. When not, the page
reads the month's chunks as it did before this doc existed:

* a month written by an older version has no such doc, or one missing what that version
  changed (``countersign budget upgrade`` builds it, :func:`rebuild_month`);
* the doc stops taking entries at :data:`ATTENTION_MAX` bytes (a month imported without
  categories), so its size stays bounded whatever the ledger holds.

What the counts cannot tell is an older version that, in one month, took a transaction out of the
kind and put another in: the doc keeps the stale copy and misses the other, and its count still
agrees. So, as with the roll-ups, every function runs this code before the first write after a
deploy, and ``countersign budget upgrade`` rebuilds what disagrees with the chunks.
"""

from __future__ import annotations

from typing import Any

from ...core.canonical import canonical_json
from ...toolkit import Conflict, DocStore, DocWrite
from .keys import attention_id
from .model import TOTAL, Ledger, TxnRef, is_uncategorised, month_total_id
from .staging import Staging

ATTENTION_MAX = 32 * 1024  # a month's doc takes no entry past this (its pages read the chunks)


def needs_attention(txn: dict[str, Any]) -> bool:
    return is_uncategorised(txn) or not txn.get("approved")


def _size(txn_id: str, entry: dict[str, Any]) -> int:
    """The bytes ``"<id>":<entry>,`` takes in the doc."""
    return len(canonical_json(entry).encode("utf-8")) + len(txn_id) + 4


def working_copy(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a stored doc to stage changes in: its entries are shared, since they are only
    ever replaced or removed, never changed in place (a deep copy of 27 entries costs 0.07 ms)."""
    return dict(data, txns=dict(data.get("txns") or {}))


def _enter(data: dict[str, Any], account_id: str, txn: dict[str, Any]) -> None:
    txns = data.setdefault("txns", {})
    entry = {"account_id": account_id, "txn": dict(txn)}
    size = _size(txn["id"], entry)
    if data.get("bytes", 0) + size <= ATTENTION_MAX:
        txns[txn["id"]] = entry
        data["bytes"] = data.get("bytes", 0) + size


def _leave(data: dict[str, Any], txn_id: str) -> None:
    entry = data.get("txns", {}).pop(txn_id, None)
    if entry is not None:
        data["bytes"] -= _size(txn_id, entry)
    if not data.get("txns"):
        data.clear()  # a doc of nothing goes away (Staged.writes)


def count(staged: Staging, account_id: str, txn: dict[str, Any], sign: int) -> None:
    """``txn`` counted in (+1) or out (-1) of its month: its entry follows, if it needs attention."""
    if not needs_attention(txn):
        return
    ident = attention_id(txn["date"])
    data = staged.get(TOTAL, ident) or {}
    _leave(data, txn["id"])  # (an entry counted in twice is held once)
    if sign > 0:
        _enter(data, account_id, txn)
    staged.put(TOTAL, ident, data)


def complete(ledger: Ledger, month: str, *, uncategorised: bool, unapproved: bool) -> list[TxnRef] | None:
    """The month's transactions that are uncategorised (or, without that, unapproved) with every
    other kind of transaction left out, when its doc holds all of them; None: read the chunks.
    (A ref from here names no chunk: it is for showing, not for changing.)"""
    if not (uncategorised or unapproved):
        return None
    totals = ledger.get(TOTAL, month_total_id(month))
    doc = ledger.get(TOTAL, attention_id(month))
    refs = [TxnRef("", e["account_id"], e["txn"]) for e in (doc.data.get("txns", {}).values() if doc else ())]
    if uncategorised:
        held, counted = sum(is_uncategorised(r.data) for r in refs), "uncategorised"
    else:
        held, counted = sum(not r.data.get("approved") for r in refs), "unapproved"
    return refs if totals is not None and held == totals.data.get(counted, 0) else None


def rebuild_month(store: DocStore, workspace_id: str, month: str) -> bool:
    """Write ``month``'s doc from its chunks if it differs from them, in one commit with its month
    total, rewritten unchanged (so a writer that changed the month meanwhile makes this commit fail,
    and the month is read again). Returns whether it wrote."""
    while True:
        total = store.get_doc(workspace_id, TOTAL, month_total_id(month))  # first: the chunks are as new
        if total is None:
            return False
        data: dict[str, Any] = {}
        for ref in Ledger(store, workspace_id).month_transactions(month):
            if needs_attention(ref.data):
                _enter(data, ref.account_id, ref.data)
        stored = store.get_doc(workspace_id, TOTAL, attention_id(month))
        if (stored.data if stored else {}) == data:
            return False
        try:
            store.write_docs(workspace_id, [
                DocWrite(TOTAL, attention_id(month), data or None, stored.version if stored else 0),
                DocWrite(TOTAL, total.id, total.data, total.version)])
            return True
        except Conflict:
            continue


def rebuild(store: DocStore, workspace_id: str) -> int:
    """:func:`rebuild_month` for every month with a month total; returns how many it wrote."""
    months = sorted(d.id[2:] for d in store.list_docs(workspace_id, TOTAL, "m."))
    return sum(rebuild_month(store, workspace_id, month) for month in months)
