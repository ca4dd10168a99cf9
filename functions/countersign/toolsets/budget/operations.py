"""Changes, the operation log and inverses.

Every write of the budget is a list of *changes*, each with the value it expects to find
(``before``) and the value it leaves (``after``):

* ``{"t": "txn", "id", "account", "before", "after"}`` — the fields of one transaction that change
  (``before: None``: the transaction is created on ``account``, ``after`` is all of it; ``after:
  None``: deleted). Changes recorded before the chunked layout also name a ``bucket``; a
  transaction is found by its id either way;
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
from dataclasses import dataclass
from typing import Any

from ...core.ids import new_id
from ...toolkit import MAX_DOC_WRITES, ActionContext, ActionError, DocStore, DocWrite
from . import rollup
from .keys import attention_id, rollup_keys
from .layout import Staged
from .model import (
    CATEGORY,
    DRIFT,
    MONTH,
    OP,
    TOTAL,
    Ledger,
    account_total_id,
    display,
    month_key,
    month_total_id,
    open_total_id,
)
from .rebuild import ensure_built
from .rollup import built_ledger, change_keys
from .values import iso_time


class Moved(Exception):
    """A target no longer holds the value a change expects; ``detail`` says which."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


# -- building changes -------------------------------------------------------------------------------


def txn_change(txn_id: str, before: dict | None, after: dict | None, account: str | None = None) -> dict:
    change = {"t": "txn", "id": txn_id, "before": before, "after": after}
    if account is not None:
        change["account"] = account
    return change


def budget_change(month: str, category_id: str, before: int, after: int) -> dict:
    return {"t": "budget", "month": month, "category": category_id, "before": before, "after": after}


def category_change(category_id: str, before: dict | None, after: dict | None) -> dict:
    return {"t": "category", "id": category_id, "before": before, "after": after}


def reverse(changes: list[dict]) -> list[dict]:
    return [dict(c, before=c["after"], after=c["before"]) for c in reversed(changes)]


# -- staging -----------------------------------------------------------------------------------------


def stage(ledger: Ledger, changes: list[dict], *, prefetched: bool = False) -> Staged:
    """The docs after ``changes``; :class:`Moved` if any target does not hold its ``before``.
    ``prefetched``: ``ledger`` has read what staging them needs already (:func:`_prefetch`)."""
    if not prefetched:
        _prefetch(ledger, changes)
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


def _prefetch(ledger: Ledger, changes: list[dict], now: int | None = None) -> None:
    """Read what staging ``changes`` needs in as few reads as possible: the months holding their
    transactions, then every total, budget month and category they touch in one read (and, given
    ``now``, every roll-up their carry may move: :func:`.rollup.change_keys`)."""
    keyed = rollup_keys if now is None else (lambda month: change_keys(month, now))
    ledger.locate([c["id"] for c in changes if c["t"] == "txn"])
    keys: list[tuple[str, str]] = []
    for c in changes:
        if c["t"] == "txn":
            ref = ledger.find_txn(c["id"])
            data = ref.data if ref else c["after"] or c["before"] or {}
            account = ref.account_id if ref else c.get("account") or c.get("bucket", "").rsplit(".", 1)[0]
            if data.get("date"):
                keys += [(TOTAL, month_total_id(data["date"])), (TOTAL, attention_id(data["date"])),
                         *keyed(data["date"])]
                ledger.month_chunks(month_key(data["date"]))
            keys += [(TOTAL, account_total_id(account)), (TOTAL, open_total_id(account))]
        elif c["t"] == "budget":
            keys += [(MONTH, c["month"]), (CATEGORY, c["category"]), *keyed(c["month"])]
        elif c["t"] == "category":
            keys.append((CATEGORY, c["id"]))
    ledger.prefetch(keys)


def _describe_txn(ledger: Ledger, txn: dict) -> str:
    return f"the transaction {txn.get('date')}, {txn.get('payee')}, {display(txn.get('amount', 0))}"


def _stage_txn(ledger: Ledger, staged: Staged, change: dict) -> None:
    before, after = change["before"], change["after"]
    ref = ledger.find_txn(change["id"])
    found = staged.current(ref.chunk, ref.id) if ref is not None else None
    if before is None:  # create
        if found is not None:
            raise Moved(f"the transaction {change['id']} already exists")
        account_id = change.get("account") or change.get("bucket", "").rsplit(".", 1)[0]
        if account_id not in ledger.accounts:
            raise Moved(f"the account {account_id} no longer exists")
        staged.add(account_id, dict(after))
        return
    if ref is None or found is None:
        raise Moved(f"the transaction {change['id']} no longer exists")
    for key, value in before.items():
        if found.get(key) != value:
            raise Moved(f"{_describe_txn(ledger, found)} changed ({key})")
    if after is None:  # delete
        if found != before:
            raise Moved(f"{_describe_txn(ledger, found)} changed")
        staged.replace(ref.chunk, ref.id, None)
    else:
        staged.replace(ref.chunk, ref.id, dict(found, **after))


def _stage_budget(ledger: Ledger, staged: Staged, change: dict) -> None:
    # (as staged so far, not a working copy: the doc staged is a new one, its budgeted a copy)
    doc = staged.peek(MONTH, change["month"]) or {"budgeted": {}}
    budgeted = dict(doc.get("budgeted") or {})
    current = int(budgeted.get(change["category"], 0))
    if current != change["before"]:
        name = ledger.category_name(change["category"])
        raise Moved(f"{name} for {change['month']} is now budgeted {display(current)}, not {display(change['before'])}")
    if ledger.get(CATEGORY, change["category"]) is None:
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
    for doc in ledger.range(TOTAL, "m."):
        if (doc.data.get("cats") or {}).get(category_id):
            month = doc.id[2:]
            ref = next((r for r in ledger.month_transactions(month)
                        if category_id in {r.data.get("category_id")}
                        | {s.get("category_id") for s in r.data.get("subtransactions") or []}), None)
            return _describe_txn(ledger, ref.data) if ref else f"a transaction of {month}"
    for doc in ledger.range(MONTH):
        if (doc.data.get("budgeted") or {}).get(category_id):
            return f"the budget of {doc.id}"
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


@dataclass
class Planning:
    """One plan's staging of its change, handed to :func:`commit` while planning (its apply run
    to size the change, :class:`.base.BudgetAction`): ``complete`` unless :func:`commit` left out
    roll-ups it would have built first (then the staged writes are only counted, never committed)."""

    complete: bool = True


def commit(ctx: ActionContext, ledger: Ledger, changes: list[dict], kind: str, summary: str, *,
           undoable: bool = True, note: str | None = None, extra: Iterable[DocWrite] = (), undo_of: str | None = None,
           moved_message: str = DRIFT, op_id: str | None = None,
           planning: Planning | None = None) -> tuple[str, list[DocWrite]]:
    """The writes of ``changes`` and their operation, for the gate to commit as one transaction
    (with the card, when there is one); returns (the operation id, the writes).

    A target that moved since the ledger was read raises :class:`ActionError` with
    ``moved_message``; every write names the version it read, so one that moves between this read
    and the commit is refused there (and the gate plans again).

    A budget without roll-ups gets them first, in batches of their own (:func:`.rebuild.ensure_built`),
    never inside this commit. A change whose writes (the roll-up docs it rewrites counted) would
    pass ``MAX_DOC_WRITES`` raises :class:`ActionError` — at plan time too, since every budget
    action's plan runs its apply with a :class:`Planning` (:class:`.base.BudgetAction`).

    Given ``planning`` (the change is being planned, not applied), nothing is built: what a build
    would leave to rewrite is counted as if built, and ``planning.complete`` says whether the
    writes returned are the whole change.
    """
    built = prefetched = True
    if any(c["t"] in ("txn", "budget") for c in changes):
        _prefetch(ledger, changes, ctx.now)  # the roll-ups with them (so stage() reads nothing more)
        if built_ledger(ledger) is None:  # no roll-ups yet: built first, in batches of their own
            built = False
            if planning is not None:
                planning.complete = False  # these writes leave out the roll-ups: only their count holds
            elif isinstance(ctx.store, DocStore):
                ensure_built(ctx.store, ctx.workspace_id)
                ledger = Ledger(ctx.store, ctx.workspace_id)
                prefetched = False
    else:
        prefetched = False
    try:
        staged = stage(ledger, changes, prefetched=prefetched)
    except Moved as exc:
        raise ActionError(f"{moved_message} ({exc.detail}); nothing was written.") from None
    new_op_id, op = new_operation(ctx, kind, summary, changes, undoable=undoable, undo_of=undo_of, note=note)
    op_id = op_id or new_op_id
    writes = staged.writes()
    writes.extend(extra)
    writes.append(DocWrite(OP, op_id, op, 0))
    count = rollup.counted(staged, writes, built=built)
    if count > MAX_DOC_WRITES:
        raise ActionError(too_many(count, staged))
    return op_id, writes


def too_many(count: int, staged: Staged) -> str:
    months = sorted({i if k == MONTH else i[2:] for (k, i) in staged.docs
                     if k == MONTH or (k == TOTAL and i.startswith("m."))})
    since = f" and the budget's yearly roll-ups from {months[0][:4]} on" if months else ""
    return (f"This change would write {count} records in one commit (its transactions, their month and "
            f"account totals{since}); the limit is {MAX_DOC_WRITES}. Split it into smaller changes: fewer "
            "transactions or months at once (a change to an early year may also rewrite every later year's "
            "roll-up, and is counted as if it did). Nothing was written.")


def get_operation(ledger: Ledger, op_id: Any, field: str = "operation_id"):
    doc = ledger.get(OP, op_id) if isinstance(op_id, str) and op_id else None
    if doc is None:
        raise ActionError(
            f"{field}: no operation {op_id!r} in this budget; list_operations gives the ids.", field=field
        )
    return doc


def operation_view(doc) -> dict[str, Any]:
    data = doc.data
    return {
        "id": doc.id,
        "kind": data["kind"],
        "summary": data["summary"],
        "at": iso_time(data["at"]),
        "changes": len(data.get("changes") or []),
        "undoable": bool(data.get("undoable")) and not data.get("undone_by") and not data.get("undo_of"),
        "undo_of": data.get("undo_of"),
        "undone_by": data.get("undone_by"),
        "note": data.get("note"),
    }
