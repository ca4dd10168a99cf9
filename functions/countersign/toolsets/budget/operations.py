"""Changes, the operation log and inverses.

Every write of the budget is a list of *changes*, each with the value it expects to find
(``before``) and the value it leaves (``after``):

* ``{"t": "txn", "bucket", "id", "before", "after"}`` — the fields of one transaction that change
  (``before: None``: the transaction is created, ``after`` is all of it; ``after: None``: deleted);
* ``{"t": "budget", "month", "category", "before", "after"}`` — a budgeted amount in milliunits;
* ``{"t": "category", "id", "before", "after"}`` — a category's fields (``None``: absent).

:func:`commit` checks every ``before`` against the ledger as it is now and returns the writes of
every touched doc with the version it was read at (so a race is refused, not lost), plus an
operation that keeps the changes; the gate commits them with the card. Undoing an operation is
committing the same changes backwards, which first checks that every target still holds the
``after`` value — else the budget moved and the undo is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...core.ids import new_id
from ...gate.actions import ActionContext, ActionError
from ...store.records import DocWrite
from .model import CATEGORY, DRIFT, MONTH, OP, TXNS, Ledger, Staged, display, sort_transactions


class Moved(Exception):
    """A target no longer holds the value a change expects; ``detail`` says which."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


# -- building changes -------------------------------------------------------------------------------


def txn_change(bucket: str, txn_id: str, before: dict | None, after: dict | None) -> dict:
    return {"t": "txn", "bucket": bucket, "id": txn_id, "before": before, "after": after}


def budget_change(month: str, category_id: str, before: int, after: int) -> dict:
    return {"t": "budget", "month": month, "category": category_id, "before": before, "after": after}


def category_change(category_id: str, before: dict | None, after: dict | None) -> dict:
    return {"t": "category", "id": category_id, "before": before, "after": after}


def reverse(changes: list[dict]) -> list[dict]:
    return [dict(c, before=c["after"], after=c["before"]) for c in reversed(changes)]


# -- staging -----------------------------------------------------------------------------------------


def stage(ledger: Ledger, changes: list[dict]) -> Staged:
    """The docs after ``changes``; :class:`Moved` if any target does not hold its ``before``."""
    staged = Staged(ledger)
    for change in changes:
        kind = change["t"]
        if kind == "txn":
            _stage_txn(ledger, staged, change)
        elif kind == "budget":
            _stage_budget(ledger, staged, change)
        elif kind == "category":
            _stage_category(ledger, staged, change)
        else:  # pragma: no cover - a change this version does not know
            raise Moved(f"unknown change {kind!r}")
    return staged


def _describe_txn(ledger: Ledger, txn: dict) -> str:
    return f"the transaction {txn.get('date')}, {txn.get('payee')}, {display(txn.get('amount', 0))}"


def _stage_txn(ledger: Ledger, staged: Staged, change: dict) -> None:
    bucket = staged.get(TXNS, change["bucket"])
    before, after = change["before"], change["after"]
    found = None
    if bucket is not None:
        found = next((t for t in bucket["transactions"] if t["id"] == change["id"]), None)
    if before is None:  # create
        if found is not None:
            raise Moved(f"the transaction {change['id']} already exists")
        account_id, month = change["bucket"].rsplit(".", 1)
        if bucket is None:
            if account_id not in ledger.accounts:
                raise Moved(f"the account {account_id} no longer exists")
            bucket = {"account_id": account_id, "month": month, "transactions": []}
        bucket = dict(bucket, transactions=sort_transactions([*bucket["transactions"], dict(after)]))
        staged.put(TXNS, change["bucket"], bucket)
        return
    if found is None:
        raise Moved(f"the transaction {change['id']} no longer exists")
    assert bucket is not None  # found was read from it
    for key, value in before.items():
        if found.get(key) != value:
            raise Moved(f"{_describe_txn(ledger, found)} changed ({key})")
    if after is None:  # delete
        if found != before:
            raise Moved(f"{_describe_txn(ledger, found)} changed")
        rest = [t for t in bucket["transactions"] if t["id"] != change["id"]]
    else:
        updated = dict(found, **after)
        rest = [updated if t["id"] == change["id"] else t for t in bucket["transactions"]]
    staged.put(TXNS, change["bucket"], dict(bucket, transactions=rest))


def _stage_budget(ledger: Ledger, staged: Staged, change: dict) -> None:
    doc = staged.get(MONTH, change["month"]) or {"budgeted": {}}
    budgeted = dict(doc.get("budgeted") or {})
    current = int(budgeted.get(change["category"], 0))
    if current != change["before"]:
        name = ledger.category_name(change["category"])
        raise Moved(f"{name} for {change['month']} is now budgeted {display(current)}, not {display(change['before'])}")
    if change["category"] not in ledger.categories:
        raise Moved(f"the category {change['category']} no longer exists")
    if change["after"]:
        budgeted[change["category"]] = change["after"]
    else:
        budgeted.pop(change["category"], None)
    staged.put(MONTH, change["month"], dict(doc, budgeted=budgeted))


def _stage_category(ledger: Ledger, staged: Staged, change: dict) -> None:
    current = staged.get(CATEGORY, change["id"])
    before, after = change["before"], change["after"]
    if before is None:
        if current is not None:
            raise Moved(f"the category {change['id']} already exists")
        staged.put(CATEGORY, change["id"], dict(after))
        return
    if current is None:
        raise Moved(f"the category {change['id']} no longer exists")
    for key, value in before.items():
        if current.get(key) != value:
            raise Moved(f"the category ‘{current.get('name')}’ changed ({key})")
    if after is None:
        if current != before:
            raise Moved(f"the category ‘{current.get('name')}’ changed")
        in_use = _category_in_use(ledger, change["id"])
        if in_use:
            raise Moved(f"the category ‘{current.get('name')}’ is now used by {in_use}")
        staged.put(CATEGORY, change["id"], None)
        return
    staged.put(CATEGORY, change["id"], dict(current, **after))


def _category_in_use(ledger: Ledger, category_id: str) -> str | None:
    for ref in ledger.transactions():
        txn = ref.data
        if txn.get("category_id") == category_id or any(
            s.get("category_id") == category_id for s in txn.get("subtransactions") or []
        ):
            return _describe_txn(ledger, txn)
    for month, doc in ledger.months.items():
        if (doc.data.get("budgeted") or {}).get(category_id):
            return f"the budget of {month}"
    return None


# -- committing -------------------------------------------------------------------------------------


def new_operation(ctx: ActionContext, kind: str, summary: str, changes: list[dict], *, undoable: bool = True,
                  undo_of: str | None = None, note: str | None = None) -> tuple[str, dict]:
    op_id = new_id("op_")
    return op_id, {
        "kind": kind,
        "summary": summary,
        "at": ctx.now,
        "by": ctx.person.id if ctx.person else None,
        "connection": ctx.connection.id if ctx.connection else None,
        "changes": changes,
        "undoable": undoable,
        "note": note,
        "undo_of": undo_of,
        "undone_by": None,
        "undone_at": None,
    }


def commit(ctx: ActionContext, ledger: Ledger, changes: list[dict], kind: str, summary: str, *,
           undoable: bool = True, note: str | None = None, extra: Iterable[DocWrite] = (), undo_of: str | None = None,
           moved_message: str = DRIFT, op_id: str | None = None) -> tuple[str, list[DocWrite]]:
    """The writes of ``changes`` and their operation, for the gate to commit as one transaction
    (with the card, when there is one); returns (the operation id, the writes).

    A target that moved since the ledger was read raises :class:`ActionError` with
    ``moved_message``; every write names the version it read, so one that moves between this read
    and the commit is refused there (and the gate plans again).
    """
    try:
        staged = stage(ledger, changes)
    except Moved as exc:
        raise ActionError(f"{moved_message} ({exc.detail}); nothing was written.") from None
    new_op_id, op = new_operation(ctx, kind, summary, changes, undoable=undoable, undo_of=undo_of, note=note)
    op_id = op_id or new_op_id
    writes = [DocWrite(k, i, d, v) for k, i, d, v in staged.writes()]
    writes.extend(extra)
    writes.append(DocWrite(OP, op_id, op, 0))
    return op_id, writes


def get_operation(ctx: ActionContext, op_id: Any, field: str = "operation_id"):
    doc = ctx.store.get_doc(ctx.workspace_id, OP, op_id) if isinstance(op_id, str) and op_id else None
    if doc is None:
        raise ActionError(
            f"{field}: no operation {op_id!r} in this budget; list_operations gives the ids.", field=field
        )
    return doc


def operation_view(doc) -> dict[str, Any]:
    from ...gate.replies import iso

    data = doc.data
    return {
        "id": doc.id,
        "kind": data["kind"],
        "summary": data["summary"],
        "at": iso(data["at"]),
        "changes": len(data.get("changes") or []),
        "undoable": bool(data.get("undoable")) and not data.get("undone_by") and not data.get("undo_of"),
        "undo_of": data.get("undo_of"),
        "undone_by": data.get("undone_by"),
        "note": data.get("note"),
    }
