"""How transactions are laid out in docs, and the totals kept beside them.

* A transaction lives in a **chunk**, ``budget_txns`` ``<YYYY-MM>.<account>.<nnnn>``: one account's
  transactions of one month, sorted by date. A new transaction joins the account-month's last
  chunk while it stays under :data:`CHUNK_TARGET` bytes, else starts the next one; a chunk that
  grows past :data:`CHUNK_MAX` (a transaction split into many lines) is cut in two. So an item's
  size never depends on how big the ledger is.
* Its **id** carries its date, ``t_20260912_<16 random>``, so it is found by reading one month.
  A transaction whose id does not (made before this layout) has a ``budget_locator`` doc.
* Every change to a transaction changes, in the same commit, the **totals** it counts towards:
  ``m.<YYYY-MM>`` (count, income, activity and transaction count per category, uncategorised,
  unapproved, transactions per account), ``a.<account>`` (count, cleared and uncleared balance)
  and ``o.<account>`` (per month, how many cleared transactions wait to be reconciled: only
  ``reconcile_account`` reads it, so the balances ``list_accounts`` reads stay a few numbers; an
  ``a.`` doc written before kept them itself, and gives them to ``o.`` at its next write).
  Reads add up totals, never transactions. Beside them, ``u.<YYYY-MM>`` holds a copy of the
  month's transactions that are uncategorised or unapproved (:mod:`.attention`), so the pages
  that ask for those read only them.
* Every change to a budget month or a month total changes, in the same commit, the
  **roll-ups** (:mod:`.rollup`): the ``ledger`` doc (the whole ledger's counts), the year docs
  ``y.<YYYY>`` (each year's nets and flow) and the block docs ``e.<YYYY>`` (per five years the
  carry into them and each year's effect on it), so a month's figures read a fixed number of docs
  however long the history (:meth:`Staged.writes`). A budget without the ``ledger`` doc (or with
  one of an older layout) has no roll-ups: its writes keep none, its reads add up the months, and a writer
  builds them first, in batches of their own, the ledger doc last (:mod:`.rebuild`).

  Deploying: a version before the roll-ups writes months without updating them, so every function
  (every Lambda, every local server) must run this code before the first write after a deploy;
  if an older one wrote meanwhile, ``countersign budget upgrade`` finds the roll-ups that
  disagree with the months and rebuilds them.

:class:`Staged` is the one way a change is written: working copies of the docs it touches, with
the versions they were read at (:class:`.staging.Staging`), and everything above kept with them.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any

from ...core.canonical import canonical_json
from ...core.ids import _ALPHABET
from ...toolkit import MAX_DOC_WRITES, DocReader, DocStore, DocWrite
from . import attention, rebuild, rollup
from .keys import ATTENTION_PREFIX
from .model import (
    LOCATOR,
    MONTH,
    RTA_ID,
    TOTAL,
    TXNS,
    Ledger,
    account_total_id,
    category_lines,
    is_uncategorised,
    month_key,
    month_total_id,
    open_total_id,
    sort_transactions,
    txn_categories,
    txn_month,
)
from .staging import Staging, add_into

CHUNK_TARGET = 48 * 1024  # a transaction joins a chunk only while the chunk stays under this
CHUNK_MAX = 96 * 1024  # a chunk that grew past this (lines added to its transactions) is cut


def new_txn_id(day: str) -> str:
    """``t_20260912_…``: the id of a new transaction of ``day``, carrying its month."""
    return f"t_{day[:4]}{day[5:7]}{day[8:10]}_" + "".join(secrets.choice(_ALPHABET) for _ in range(16))


def chunk_id(month: str, account_id: str, n: int) -> str:
    return f"{month_key(month)}.{account_id}.{n:04d}"


def chunk_number(chunk: str) -> int:
    return int(chunk.rsplit(".", 1)[1])


def size_of(value: Any) -> int:
    return len(canonical_json(value).encode("utf-8"))


# -- totals -------------------------------------------------------------------------------------------


def contribution(account_id: str, txn: dict) -> dict[str, dict[str, Any]]:
    """What one transaction adds to its month's totals and its account's totals."""
    month: dict[str, Any] = {"n": 1, "accounts": {account_id: 1}}
    activity: dict[str, int] = {}
    for cat, amount in category_lines(txn):
        if cat == RTA_ID:
            month["income"] = month.get("income", 0) + amount
        elif cat is not None:
            activity[cat] = activity.get(cat, 0) + amount
    if activity:
        month["activity"] = activity
    cats = txn_categories(txn)
    if cats:
        month["cats"] = dict.fromkeys(cats, 1)
    if is_uncategorised(txn):
        month["uncategorised"] = 1
    if not txn.get("approved"):
        month["unapproved"] = 1
    account: dict[str, Any] = {"n": 1, "uncleared" if txn["cleared"] == "uncleared" else "cleared": txn["amount"]}
    out = {month_total_id(txn["date"]): month, account_total_id(account_id): account}
    if txn["cleared"] == "cleared":
        out[open_total_id(account_id)] = {"open": {month_key(txn["date"]): 1}}
    return out


# -- staging ------------------------------------------------------------------------------------------


class Staged(Staging):
    """A change to the ledger, staged: its transactions laid out in chunks, and the totals, the
    copies of those needing attention (:mod:`.attention`) and the roll-ups (:mod:`.rollup`) they
    count towards, written in the same commit (:meth:`writes`)."""

    def __init__(self, ledger: Ledger):
        super().__init__(ledger)
        self._last: dict[tuple[str, str], int] = {}  # (month, account) → its highest chunk number (-1: none)
        self._sizes: dict[str, int] = {}  # chunk → its size, while only appended to

    def working_copy(self, kind: str, doc_id: str, data: dict[str, Any]) -> dict[str, Any]:
        if kind == TXNS:  # never changed in place: each change makes a new list (and new transactions)
            return dict(data, transactions=list(data.get("transactions", [])))
        if kind == TOTAL and doc_id.startswith(ATTENTION_PREFIX):
            return attention.working_copy(data)
        return super().working_copy(kind, doc_id, data)

    # -- transactions ---------------------------------------------------------------------------------

    def _count(self, account_id: str, txn: dict, sign: int) -> None:
        for total_id, delta in contribution(account_id, txn).items():
            data = self.get(TOTAL, total_id) or {}
            add_into(data, delta, sign)
            self.put(TOTAL, total_id, data)
        account = self.get(TOTAL, account_total_id(account_id))
        if account and "open" in account:  # kept there before the open months had a doc of their own
            opened = self.get(TOTAL, open_total_id(account_id)) or {}
            add_into(opened, {"open": account.pop("open")}, +1)
            self.put(TOTAL, open_total_id(account_id), opened)
        attention.count(self, account_id, txn, sign)

    def _locate(self, txn_id: str, month: str | None) -> None:
        if txn_month(txn_id) is None:
            self.put(LOCATOR, txn_id, {"month": month} if month else None)

    def _last_number(self, month: str, account_id: str) -> int:
        key = (month, account_id)
        if key not in self._last:
            mine = [chunk_number(c.id) for c in self.ledger.month_chunks(month) if c.data["account_id"] == account_id]
            self._last[key] = max(mine, default=-1)
        return self._last[key]

    def _new_chunk(self, month: str, account_id: str) -> str:
        number = self._last_number(month, account_id) + 1
        self._last[(month, account_id)] = number
        ident = chunk_id(month, account_id, number)
        self.get(TXNS, ident)
        return ident

    def add(self, account_id: str, txn: dict) -> str:
        """Enter ``txn`` (a new id) on ``account_id``; returns the chunk it went into."""
        month = month_key(txn["date"])
        last = self._last_number(month, account_id)
        target = chunk_id(month, account_id, last) if last >= 0 else self._new_chunk(month, account_id)
        data = self.get(TXNS, target)
        grows = size_of(txn) + 1
        if data is not None:
            if target not in self._sizes:
                self._sizes[target] = size_of(data)
            if self._sizes[target] + grows > CHUNK_TARGET:
                target, data = self._new_chunk(month, account_id), None
        if data is None:
            data = {"account_id": account_id, "month": month, "transactions": []}
            self._sizes[target] = size_of(data)
        data = dict(data, transactions=sort_transactions([*data["transactions"], dict(txn)]))
        self._sizes[target] += grows
        self.put(TXNS, target, data)
        self._count(account_id, txn, +1)
        self._locate(txn["id"], month)
        return target

    def replace(self, chunk: str, txn_id: str, new: dict | None) -> dict:
        """Replace (``new``) or remove (None) a transaction of ``chunk``; returns it as it was."""
        data = self.get(TXNS, chunk)
        assert data is not None
        old = next(t for t in data["transactions"] if t["id"] == txn_id)
        rest = [t for t in data["transactions"] if t["id"] != txn_id]
        if new is not None:
            rest = sort_transactions([*rest, new])
        self.put(TXNS, chunk, dict(data, transactions=rest))
        self._sizes.pop(chunk, None)
        self._count(data["account_id"], old, -1)
        if new is not None:
            self._count(data["account_id"], new, +1)
        else:
            self._locate(txn_id, None)
        return old

    def current(self, chunk: str, txn_id: str) -> dict | None:
        """The transaction as staged so far (None once removed)."""
        data = self.get(TXNS, chunk)
        return next((t for t in (data or {}).get("transactions", []) if t["id"] == txn_id), None)

    # -- the writes -------------------------------------------------------------------------------------

    def _cut(self) -> None:
        """Cut every chunk that grew past :data:`CHUNK_MAX` into chunks under :data:`CHUNK_TARGET`."""
        for (kind, ident), data in list(self.docs.items()):
            if kind != TXNS or data is None or size_of(data) <= CHUNK_MAX:
                continue
            month, account = data["month"], data["account_id"]
            pieces: list[list[dict]] = [[]]
            used = 0
            for txn in data["transactions"]:
                size = size_of(txn) + 1
                if pieces[-1] and used + size > CHUNK_TARGET:
                    pieces.append([])
                    used = 0
                pieces[-1].append(txn)
                used += size
            self.docs[(kind, ident)] = dict(data, transactions=pieces[0])
            for piece in pieces[1:]:
                self.put(TXNS, self._new_chunk(month, account), dict(data, transactions=piece))

    def rollup_bound(self, *, assume_built: bool = False) -> int:
        """At most how many roll-up docs :meth:`writes` adds to the staged docs (:mod:`.rollup`)."""
        return rollup.bound(self, assume_built=assume_built)

    def writes(self, *, build_rollup: bool = False) -> list[DocWrite]:
        self._cut()
        rollup.stage(self, build_rollup)
        out = []
        for (kind, doc_id), data in self.docs.items():
            version = self.versions[(kind, doc_id)]
            if kind == TXNS and data is not None and not data.get("transactions"):
                data = None  # an emptied chunk goes away
            if kind == TOTAL and not data:
                data = None  # so do totals of nothing
            if data is None and version == 0:
                continue
            out.append(DocWrite(kind, doc_id, data, version))
        return out


def build(entries: Iterable[tuple[str, dict]], budgets: dict[str, dict[str, int]] | None = None) -> list[DocWrite]:
    """The docs of a new ledger's transactions (``(account id, transaction)`` pairs, none stored
    yet) and budget months (``{"2026-09-01": {category: milliunits}}``): their chunks, totals,
    locators and roll-ups, every one a creation. Demo data and tests use it."""
    staged = Staged(_Empty())
    for account_id, txn in sorted(entries, key=lambda e: (e[1]["date"], e[1]["id"])):
        staged.add(account_id, txn)
    for month, budgeted in sorted((budgets or {}).items()):
        staged.put(MONTH, month, {"budgeted": dict(budgeted)})
    return staged.writes(build_rollup=True)


class _Empty(Ledger):
    """A ledger with nothing stored (for :func:`build`)."""

    def __init__(self) -> None:
        super().__init__(_NoDocs(), "")


class _NoDocs(DocReader):
    def get_doc(self, workspace_id, kind, doc_id):
        return None

    def get_docs(self, workspace_id, keys):
        return {}

    def list_docs(self, workspace_id, kind, prefix="", *, start=None, stop=None, limit=None, descending=False):
        return []


def upgrade(store: DocStore, workspace_id: str) -> int:
    """Bring a budget written by an older version to this layout (``countersign budget upgrade``;
    safe to run again, or after an interruption):

    * a budget written before the chunked layout (one ``budget_txns`` doc per account-month,
      ``<account>.<YYYY-MM>``) has its transactions moved into chunks with their totals and
      locators, each old doc replaced in one batch with its chunks and totals, after its locators
      (harmless alone) are written;
    * a budget without the roll-ups (:mod:`.rollup`), or with those of an older layout, gets them
      (:func:`.rebuild.ensure_built`: year and block docs first, the ledger doc last; a budget
      that is written to gets them before its first write anyway; until then its reads add up
      its history);
    * a month whose transactions needing attention are not all in its ``u.`` doc (written before
      there was one, or by an older version since) gets it rebuilt (:func:`.attention.rebuild`);
    * roll-ups that disagree with the budget months and month totals (year or block docs missing or stale:
      months written by a version that did not keep them, a build cut short by an older version)
      are rebuilt (:func:`.rebuild.rebuild`); roll-ups that agree are left alone.

    Returns how many transactions moved."""
    moved = 0
    # a chunk id starts with its month (a digit); an old doc's with its account id (a letter)
    for old in store.list_docs(workspace_id, TXNS, start=":"):
        staged = Staged(Ledger(store, workspace_id))
        for txn in old.data.get("transactions", []):
            staged.add(old.data["account_id"], txn)
        writes = staged.writes()
        locators = [w for w in writes if w.kind == LOCATOR]
        for start in range(0, len(locators), MAX_DOC_WRITES):
            store.write_docs(workspace_id, locators[start:start + MAX_DOC_WRITES])
        store.write_docs(workspace_id, [*(w for w in writes if w.kind != LOCATOR),
                                        DocWrite(TXNS, old.id, None, old.version)])
        moved += len(old.data.get("transactions", []))
    rebuild.rebuild(store, workspace_id)
    attention.rebuild(store, workspace_id)
    return moved
