"""The budget ledger of one workspace, stored as versioned docs whose reads follow the question.

Docs (kind → id → data; named in :mod:`.keys`):

* ``budget_account``  ``acc_…``      ``{name, type, closed, position}``
* ``budget_group``    ``grp_…``      ``{name, position, hidden}``
* ``budget_category`` ``cat_…``      ``{name, group_id, position, hidden, note}``
* ``budget_month``    ``2026-09-01`` ``{budgeted: {category_id: milliunits}}``
* ``budget_txns``     ``2026-09.<account>.0003`` ``{account_id, month, transactions: [...]}`` — a
  chunk of one account's transactions of one month, at most :data:`~.layout.CHUNK_MAX` bytes
  (a month holds as many chunks as it needs), so no item grows with the ledger.
* ``budget_total``    ``m.2026-09`` (a month: income, activity and counts), ``a.<account>`` (an
  account: balances), ``o.<account>`` (the months holding its cleared transactions not yet
  reconciled), ``u.2026-09`` (a copy of the month's transactions that are uncategorised or
  unapproved, :mod:`.attention`) — kept in the same commit as the transactions they sum
  (:mod:`.layout`) — and the
  roll-ups ``ledger`` (the whole ledger's counts), ``y.2026`` (a year's nets) and ``e.2025``
  (a block of five years: the carry into it and each year's effect on it), kept in the same
  commit as the month totals and budget months they sum (:mod:`.rollup`), so a read never adds
  up history.
* ``budget_locator``  ``<transaction id>`` ``{month}`` — only for ids that do not carry their month
  (ones made before this layout); a new id is ``t_20260912_…``.
* ``budget_op``       ``op_…``       the operation log (see :mod:`.operations`); ids sort by time.

A transaction is ``{id, date, payee, amount, category_id, memo, cleared, approved, flag,
subtransactions: [{amount, category_id, memo}], import_id, transfer}``. Amounts are milliunits
(outflows negative). Activity, available and account balances are computed from the
transactions (through their totals), never entered, so they cannot disagree with them.

The category ``Ready to Assign`` (group ``Inflow``) is built in: income goes there.

A :class:`Ledger` reads lazily: each kind or month the first time a plan or read needs it, never
the whole budget. A plan keeps its ledger for ``apply`` (:class:`BudgetPlan`), so a change is read
once per answer; every write still names the version it read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...toolkit import ActionError, Doc, DocReader, Plan
from .keys import (  # noqa: F401  (the docs' names, imported from here by the other modules)
    ACCOUNT,
    CATEGORY,
    GROUP,
    LOCATOR,
    MONTH,
    OP,
    TOTAL,
    TXNS,
    account_total_id,
    attention_id,
    month_total_id,
    open_total_id,
    rollup_keys,
)
from .txn import (  # noqa: F401  (what a transaction is, imported from here by the other modules)
    TxnRef,
    category_lines,
    is_split,
    is_transfer,
    is_uncategorised,
    new_txn,
    sort_transactions,
    txn_categories,
    txn_line,
    txn_month,
)
from .values import (  # noqa: F401  (the budget's values, imported from here by the other modules)
    AMOUNT_IS,
    EARLIEST_MONTH,
    MAX_CATEGORIES,
    MAX_UNITS,
    YEARS_AHEAD,
    add_months,
    amounts,
    display,
    month_key,
    month_start,
    month_window,
    parse_date,
    resolve_month,
    to_milliunits,
    today,
    too_many_categories,
)

DRIFT = "The budget changed between the preview and the answer"

INFLOW_GROUP_ID = "inflow"
RTA_ID = "ready_to_assign"
INFLOW_GROUP = {"name": "Inflow", "position": -1, "hidden": False, "internal": True}
RTA_CATEGORY = {"name": "Ready to Assign", "group_id": INFLOW_GROUP_ID, "position": 0, "hidden": False, "note": "",
                "internal": True}

CLEARED_STATES = ("uncleared", "cleared", "reconciled")
ACCOUNT_TYPES = ("checking", "savings", "cash", "creditCard", "lineOfCredit", "otherAsset", "otherLiability")
UNCATEGORISED = "Uncategorised"
SPLIT = "Split"
TRANSFER_PREFIX = "Transfer : "


# -- the ledger ------------------------------------------------------------------------------------


class Ledger:
    """One workspace's budget as one plan or read sees it, read lazily and kept for writing.

    Small kinds (accounts, groups, categories) are read whole the first time they are needed;
    anything else only as asked: one doc (:meth:`get`, several at once with :meth:`prefetch`), a
    month's transactions (:meth:`month_chunks`), the totals up to a month.
    """

    def __init__(self, store: DocReader, workspace_id: str):
        self.store = store
        self.workspace_id = workspace_id
        self._whole: dict[str, dict[str, Doc]] = {}
        self._point: dict[tuple[str, str], Doc | None] = {}
        self._chunks: dict[str, list[Doc]] = {}  # month key → its chunks
        self._index: dict[str, TxnRef] = {}  # transactions of the months read so far
        self._refs: dict[str, list[TxnRef]] = {}  # month key → its transactions, as its chunks hold them
        self._ranges: dict[tuple[str, str, str], list[Doc]] = {}
        self.memo: dict[Any, Any] = {}  # what a read works out from these docs (figures), kept with them

    @classmethod
    def load(cls, store: DocReader, workspace_id: str) -> Ledger:
        return cls(store, workspace_id)

    # -- reading docs --------------------------------------------------------------------------------

    def _all(self, kind: str) -> dict[str, Doc]:
        if kind not in self._whole:
            docs = {d.id: d for d in self.store.list_docs(self.workspace_id, kind)}
            if kind == GROUP:
                docs.setdefault(INFLOW_GROUP_ID, Doc(GROUP, INFLOW_GROUP_ID, dict(INFLOW_GROUP), 0))
            elif kind == CATEGORY:
                docs.setdefault(RTA_ID, Doc(CATEGORY, RTA_ID, dict(RTA_CATEGORY), 0))
            self._whole[kind] = docs
        return self._whole[kind]

    @property
    def accounts(self) -> dict[str, Doc]:
        return self._all(ACCOUNT)

    @property
    def groups(self) -> dict[str, Doc]:
        return self._all(GROUP)

    @property
    def categories(self) -> dict[str, Doc]:
        return self._all(CATEGORY)

    def prefetch(self, keys: Iterable[tuple[str, str]]) -> None:
        """Read every doc of ``keys`` not read yet, in one read."""
        wanted = [k for k in dict.fromkeys(keys) if k not in self._point and k[0] not in self._whole]
        for start in range(0, len(wanted), 100):
            batch = wanted[start:start + 100]
            found = self.store.get_docs(self.workspace_id, batch)
            for key in batch:
                self._point[key] = found.get(key)

    def get(self, kind: str, doc_id: str) -> Doc | None:
        """One doc as this ledger read it (a built-in group or category included)."""
        if kind in self._whole:
            return self._whole[kind].get(doc_id)
        key = (kind, doc_id)
        if key not in self._point and kind == TXNS and doc_id[:7] in self._chunks:
            self._point[key] = None  # its month was read whole: a chunk not in it does not exist
        if key not in self._point:
            self._point[key] = self.store.get_doc(self.workspace_id, kind, doc_id)
        found = self._point[key]
        if found is None and kind == CATEGORY and doc_id == RTA_ID:
            return Doc(CATEGORY, RTA_ID, dict(RTA_CATEGORY), 0)
        if found is None and kind == GROUP and doc_id == INFLOW_GROUP_ID:
            return Doc(GROUP, INFLOW_GROUP_ID, dict(INFLOW_GROUP), 0)
        return found

    def range(self, kind: str, prefix: str = "", stop: str | None = None) -> list[Doc]:
        """Docs of ``kind`` whose id starts with ``prefix`` (below ``stop``), read once."""
        key = (kind, prefix, stop or "")
        if key not in self._ranges:
            self._ranges[key] = self.store.list_docs(self.workspace_id, kind, prefix, stop=stop)
            for doc in self._ranges[key]:
                self._point.setdefault((kind, doc.id), doc)
        return self._ranges[key]

    def month_totals_newest_first(self, since: str | None = None) -> Iterator[Doc]:
        """The month totals (``m.<YYYY-MM>``), newest first, back to month ``since``; read a few at
        a time, as the caller goes on (so a page of recent transactions reads recent months only)."""
        stop, size = None, 4
        while True:
            docs = self.store.list_docs(self.workspace_id, TOTAL, "m.", start=f"m.{since}" if since else None,
                                        stop=stop, limit=size, descending=True)
            for doc in docs:
                self._point.setdefault((TOTAL, doc.id), doc)
            yield from docs
            if len(docs) < size:
                return
            stop, size = docs[-1].id, min(size * 4, 100)

    # -- transactions --------------------------------------------------------------------------------

    def month_chunks(self, month: str) -> list[Doc]:
        """Every chunk of ``month`` (``YYYY-MM``), all accounts, read once."""
        if month not in self._chunks:
            chunks = self.store.list_docs(self.workspace_id, TXNS, f"{month}.")
            self._chunks[month] = chunks
            for doc in chunks:
                self._point.setdefault((TXNS, doc.id), doc)
        return self._chunks[month]

    def _month_refs(self, month: str) -> list[TxnRef]:
        """A month's transactions as its chunks hold them, each indexed by id (made once, and only
        when a plan looks one up or a read wants them all)."""
        if month not in self._refs:
            refs = self._refs[month] = []
            for doc in self.month_chunks(month):
                account_id = doc.data["account_id"]
                for txn in doc.data.get("transactions", []):
                    ref = self._index[txn["id"]] = TxnRef(doc.id, account_id, txn)
                    refs.append(ref)
        return self._refs[month]

    def month_transactions(self, month: str, keep: Callable[[str, dict], bool] | None = None) -> list[TxnRef]:
        """A month's transactions, by date and id; with ``keep(account_id, transaction)``, only the
        ones it accepts (a filtered page makes no ref for the others)."""
        if keep is None:
            refs = self._month_refs(month)
        else:
            refs = [TxnRef(doc.id, doc.data["account_id"], txn) for doc in self.month_chunks(month)
                    for txn in doc.data.get("transactions", []) if keep(doc.data["account_id"], txn)]
        return sorted(refs, key=lambda r: (r.data["date"], r.data["id"]))

    def locate(self, txn_ids: Sequence[str]) -> None:
        """Read the months that hold these transactions (their locators first, in one read, for
        ids that do not carry their month)."""
        legacy = [i for i in txn_ids if isinstance(i, str) and i and txn_month(i) is None]
        self.prefetch((LOCATOR, i) for i in legacy)
        for txn_id in txn_ids:
            month = self.month_of(txn_id)
            if month is not None:
                self.month_chunks(month)

    def locate_with(self, txn_ids: Sequence[Any], keys: Iterable[tuple[str, str]] = ()) -> None:
        """:meth:`locate`, then ``keys`` and the totals a change of those transactions writes, in
        one read (so staging the change reads nothing more)."""
        ids = [i for i in txn_ids if isinstance(i, str)]
        self.locate(ids)
        totals = [key for r in filter(None, map(self.find_txn, ids))
                  for key in [(TOTAL, month_total_id(r.data["date"])), (TOTAL, attention_id(r.data["date"])),
                              (TOTAL, account_total_id(r.account_id)),
                              (TOTAL, open_total_id(r.account_id)), *rollup_keys(r.data["date"])]]
        self.prefetch([*keys, *totals])

    def month_of(self, txn_id: str) -> str | None:
        if not isinstance(txn_id, str) or not txn_id:
            return None
        month = txn_month(txn_id)
        if month is None:
            locator = self.get(LOCATOR, txn_id)
            month = locator.data["month"] if locator else None
        return month

    def find_txn(self, txn_id: str) -> TxnRef | None:
        if txn_id not in self._index:
            month = self.month_of(txn_id)
            if month is not None:
                self._month_refs(month)
        return self._index.get(txn_id)

    # -- lookups (ActionError naming the field for an unknown id) --------------------------------

    def account(self, account_id: Any, field: str = "account_id") -> Doc:
        return _need(self.accounts, account_id, field, "account", "list_accounts")

    def group(self, group_id: Any, field: str = "group_id") -> Doc:
        return _need(self.groups, group_id, field, "category group", "list_categories")

    def category(self, category_id: Any, field: str = "category_id") -> Doc:
        found = self.get(CATEGORY, category_id) if isinstance(category_id, str) else None
        return _need({category_id: found} if found else {}, category_id, field, "category", "list_categories")

    def txn(self, txn_id: Any, field: str = "transaction_id") -> TxnRef:
        found = self.find_txn(txn_id) if isinstance(txn_id, str) else None
        return _need({txn_id: found} if found else {}, txn_id, field, "transaction", "list_transactions")

    # -- names --------------------------------------------------------------------------------------

    def category_name(self, category_id: str | None) -> str:
        if category_id is None:
            return UNCATEGORISED
        doc = self.get(CATEGORY, category_id)
        return doc.data["name"] if doc else f"(deleted category {category_id})"

    def txn_category_name(self, txn: dict) -> str:
        if is_split(txn):
            return SPLIT
        if is_transfer(txn):
            return f"Transfer ({txn['transfer']})" if isinstance(txn.get("transfer"), str) else "Transfer"
        return self.category_name(txn.get("category_id"))

    def group_name(self, group_id: str) -> str:
        doc = self.get(GROUP, group_id)
        return doc.data["name"] if doc else f"(deleted group {group_id})"

    def category_label(self, category_id: str) -> str:
        """``‘Tennis’ (Fun)``."""
        doc = self.categories[category_id]
        return f"‘{doc.data['name']}’ ({self.group_name(doc.data['group_id'])})"

    # -- ordering -----------------------------------------------------------------------------------

    def ordered_groups(self) -> list[Doc]:
        return sorted(self.groups.values(), key=lambda d: (d.data.get("position", 0), d.data["name"], d.id))

    def ordered_categories(self, group_id: str | None = None) -> list[Doc]:
        docs = [d for d in self.categories.values() if group_id is None or d.data["group_id"] == group_id]
        groups = {g.id: i for i, g in enumerate(self.ordered_groups())}
        return sorted(
            docs, key=lambda d: (groups.get(d.data["group_id"], 99), d.data.get("position", 0), d.data["name"], d.id)
        )

    def ordered_accounts(self) -> list[Doc]:
        return sorted(self.accounts.values(), key=lambda d: (d.data.get("position", 0), d.data["name"], d.id))

    # -- figures kept in totals ---------------------------------------------------------------------

    def account_total(self, account_id: str) -> dict[str, Any]:
        doc = self.get(TOTAL, account_total_id(account_id))
        return doc.data if doc else {}

    def balances(self, account_id: str) -> tuple[int, int]:
        """(cleared, uncleared) balance of an account; reconciled counts as cleared."""
        total = self.account_total(account_id)
        return int(total.get("cleared", 0)), int(total.get("uncleared", 0))

    def budgeted(self, month: str, category_id: str) -> int:
        doc = self.get(MONTH, month)
        return int((doc.data.get("budgeted") or {}).get(category_id, 0)) if doc else 0

    def account_transactions(self, account_id: str, cleared: str | None = None) -> Iterator[TxnRef]:
        """An account's transactions in the months its totals name (``cleared``: only in that state,
        read from the months that hold one; otherwise every month of the ledger)."""
        if cleared == "cleared":
            opened = self.get(TOTAL, open_total_id(account_id))
            months = sorted({*(self.account_total(account_id).get("open") or {}),  # (written before o. docs)
                             *((opened.data.get("open") if opened else None) or {})})
        else:
            months = sorted(d.id[2:] for d in self.range(TOTAL, "m."))
        for month in months:
            for ref in self.month_transactions(month):
                if ref.account_id == account_id and (cleared is None or ref.data["cleared"] == cleared):
                    yield ref


@dataclass(frozen=True)
class BudgetPlan(Plan):
    """A budget plan and the ledger it read, which ``apply`` reuses (not part of the fingerprint)."""

    ledger: Ledger | None = field(default=None, compare=False, repr=False)


def ledger_of(plan: Plan, store: DocReader, workspace_id: str) -> Ledger:
    """The ledger ``plan`` read (apply is always handed the plan just made), else a fresh one."""
    ledger = getattr(plan, "ledger", None)
    return ledger if isinstance(ledger, Ledger) else Ledger(store, workspace_id)


def _need(table: dict, ident: Any, field: str, noun: str, read_tool: str):
    """``table[ident]``, or the error naming the argument, what is missing and where ids come from."""
    found = table.get(ident) if isinstance(ident, str) else None
    if found is None:
        raise ActionError(f"{field}: no {noun} {ident!r} in this budget; {read_tool} gives the ids.", field=field)
    return found
