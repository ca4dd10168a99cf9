"""The budget ledger of one workspace, stored as versioned docs.

Docs (kind → id → data):

* ``budget_account``  ``acc_…``      ``{name, type, closed, position}``
* ``budget_group``    ``grp_…``      ``{name, position, hidden}``
* ``budget_category`` ``cat_…``      ``{name, group_id, position, hidden, note}``
* ``budget_month``    ``2026-09-01`` ``{budgeted: {category_id: milliunits}}``
* ``budget_txns``     ``<account>.<2026-09>`` ``{account_id, month, transactions: [...]}`` — one bucket
  per account and month, so a recategorisation, a reconciliation or an import touches few docs
  and stays one atomic batch.
* ``budget_op``       ``op_…``       the operation log (see :mod:`.operations`).

A transaction is ``{id, date, payee, amount, category_id, memo, cleared, approved, flag,
subtransactions: [{amount, category_id, memo}], import_id, transfer}``. Amounts are milliunits
(outflows negative). Activity, available and account balances are computed from the
transactions, never stored, so they cannot disagree with them.

The category ``Ready to Assign`` (group ``Inflow``) is built in: income goes there.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...gate.actions import ActionError
from ...store.interface import DocReader
from ...store.records import Doc
from .values import (  # noqa: F401  (the budget's values, imported from here by the other modules)
    AMOUNT_IS,
    EARLIEST_MONTH,
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
)

ACCOUNT, GROUP, CATEGORY, MONTH, TXNS, OP = (
    "budget_account", "budget_group", "budget_category", "budget_month", "budget_txns", "budget_op",
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

def bucket_id(account_id: str, day: str) -> str:
    return f"{account_id}.{month_key(day)}"


# -- the ledger ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TxnRef:
    """A transaction found in the ledger: its bucket, its account and its data (do not mutate)."""

    bucket: str
    account_id: str
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return self.data["id"]


def is_transfer(txn: dict) -> bool:
    return bool(txn.get("transfer"))


def is_split(txn: dict) -> bool:
    return bool(txn.get("subtransactions"))


def is_uncategorised(txn: dict) -> bool:
    return txn.get("category_id") is None and not is_split(txn) and not is_transfer(txn)


def category_lines(txn: dict) -> list[tuple[str | None, int]]:
    """(category, amount) of each part of a transaction that counts towards the budget."""
    if is_split(txn):
        return [(s.get("category_id"), s["amount"]) for s in txn["subtransactions"]]
    if is_transfer(txn):
        return []
    return [(txn.get("category_id"), txn["amount"])]


@dataclass
class Ledger:
    """Everything of one workspace's budget, read at one moment, with versions kept for writing."""

    workspace_id: str
    accounts: dict[str, Doc] = field(default_factory=dict)
    groups: dict[str, Doc] = field(default_factory=dict)
    categories: dict[str, Doc] = field(default_factory=dict)
    months: dict[str, Doc] = field(default_factory=dict)
    buckets: dict[str, Doc] = field(default_factory=dict)
    _index: dict[str, TxnRef] = field(default_factory=dict)

    @classmethod
    def load(cls, store: DocReader, workspace_id: str) -> Ledger:
        def by_id(kind: str) -> dict[str, Doc]:
            return {d.id: d for d in store.list_docs(workspace_id, kind)}

        ledger = cls(workspace_id, by_id(ACCOUNT), by_id(GROUP), by_id(CATEGORY), by_id(MONTH), by_id(TXNS))
        ledger.groups.setdefault(INFLOW_GROUP_ID, Doc(GROUP, INFLOW_GROUP_ID, dict(INFLOW_GROUP), 0))
        ledger.categories.setdefault(RTA_ID, Doc(CATEGORY, RTA_ID, dict(RTA_CATEGORY), 0))
        ledger.reindex()
        return ledger

    def reindex(self) -> None:
        self._index = {}
        for bid, doc in self.buckets.items():
            for txn in doc.data.get("transactions", []):
                self._index[txn["id"]] = TxnRef(bid, doc.data["account_id"], txn)

    # -- lookups (ActionError naming the field for an unknown id) --------------------------------

    def account(self, account_id: Any, field: str = "account_id") -> Doc:
        return _need(self.accounts, account_id, field, "account", "list_accounts")

    def group(self, group_id: Any, field: str = "group_id") -> Doc:
        return _need(self.groups, group_id, field, "category group", "list_categories")

    def category(self, category_id: Any, field: str = "category_id") -> Doc:
        return _need(self.categories, category_id, field, "category", "list_categories")

    def txn(self, txn_id: Any, field: str = "transaction_id") -> TxnRef:
        return _need(self._index, txn_id, field, "transaction", "list_transactions")

    def find_txn(self, txn_id: str) -> TxnRef | None:
        return self._index.get(txn_id)

    # -- names --------------------------------------------------------------------------------------

    def category_name(self, category_id: str | None) -> str:
        if category_id is None:
            return UNCATEGORISED
        doc = self.categories.get(category_id)
        return doc.data["name"] if doc else f"(deleted category {category_id})"

    def txn_category_name(self, txn: dict) -> str:
        if is_split(txn):
            return SPLIT
        if is_transfer(txn):
            return f"Transfer ({txn['transfer']})" if isinstance(txn.get("transfer"), str) else "Transfer"
        return self.category_name(txn.get("category_id"))

    def group_name(self, group_id: str) -> str:
        doc = self.groups.get(group_id)
        return doc.data["name"] if doc else f"(deleted group {group_id})"

    def category_label(self, category_id: str) -> str:
        """``‘Tennis’ (Fun)``."""
        doc = self.categories[category_id]
        return f"‘{doc.data['name']}’ ({self.group_name(doc.data['group_id'])})"

    # -- iteration ---------------------------------------------------------------------------------

    def transactions(self) -> Iterator[TxnRef]:
        return iter(self._index.values())

    def account_transactions(self, account_id: str) -> list[TxnRef]:
        return [r for r in self._index.values() if r.account_id == account_id]

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

    # -- figures -----------------------------------------------------------------------------------

    def balances(self, account_id: str) -> tuple[int, int]:
        """(cleared, uncleared) balance of an account; reconciled counts as cleared."""
        cleared = uncleared = 0
        for ref in self.account_transactions(account_id):
            if ref.data["cleared"] == "uncleared":
                uncleared += ref.data["amount"]
            else:
                cleared += ref.data["amount"]
        return cleared, uncleared

    def budgeted(self, month: str, category_id: str) -> int:
        doc = self.months.get(month)
        return int((doc.data.get("budgeted") or {}).get(category_id, 0)) if doc else 0

    def month_figures(self, month: str) -> dict[str, Any]:
        """Budgeted, activity and available of every category in ``month`` (``YYYY-MM-01``).

        Available carries over month to month; an overspent (negative) balance does not carry
        over: it is taken from Ready to Assign the next month, as YNAB does for cash spending.
        """
        months = sorted({m for m in self.months} | {month_start(r.data["date"]) for r in self.transactions()} | {month})
        months = [m for m in months if m <= month]
        activity: dict[str, dict[str, int]] = {m: {} for m in months}
        income: dict[str, int] = {m: 0 for m in months}
        for ref in self.transactions():
            m = month_start(ref.data["date"])
            if m > month:
                continue
            for cat, amount in category_lines(ref.data):
                if cat == RTA_ID:
                    income[m] += amount
                elif cat is not None:
                    activity[m][cat] = activity[m].get(cat, 0) + amount
        available: dict[str, int] = {}
        rta = 0
        budgeted_now: dict[str, int] = {}
        for m in months:
            budgeted = {
                k: int(v) for k, v in ((self.months[m].data.get("budgeted") or {}) if m in self.months else {}).items()
            }
            overspent = sum(v for v in available.values() if v < 0)
            carried = {k: max(v, 0) for k, v in available.items()}
            rta += income[m] - sum(budgeted.values()) + overspent
            cats = set(carried) | set(budgeted) | set(activity[m])
            available = {c: carried.get(c, 0) + budgeted.get(c, 0) + activity[m].get(c, 0) for c in cats}
            budgeted_now = budgeted
        return {
            "month": month,
            "income": income.get(month, 0),
            "ready_to_assign": rta,
            "budgeted": budgeted_now,
            "activity": activity.get(month, {}),
            "available": available,
        }


# -- staging writes -------------------------------------------------------------------------------


@dataclass
class Staged:
    """Working copies of the docs a change touches, with the versions they were read at."""

    ledger: Ledger
    docs: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    versions: dict[tuple[str, str], int] = field(default_factory=dict)

    def _source(self, kind: str) -> dict[str, Doc]:
        return {
            ACCOUNT: self.ledger.accounts, GROUP: self.ledger.groups, CATEGORY: self.ledger.categories,
            MONTH: self.ledger.months, TXNS: self.ledger.buckets,
        }[kind]

    def get(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        key = (kind, doc_id)
        if key not in self.docs:
            doc = self._source(kind).get(doc_id)
            self.versions[key] = doc.version if doc else 0
            self.docs[key] = copy.deepcopy(doc.data) if doc and doc.version else None
        return self.docs[key]

    def put(self, kind: str, doc_id: str, data: dict[str, Any] | None) -> None:
        self.get(kind, doc_id)
        self.docs[(kind, doc_id)] = data

    def writes(self) -> list[tuple[str, str, dict[str, Any] | None, int]]:
        out = []
        for (kind, doc_id), data in self.docs.items():
            version = self.versions[(kind, doc_id)]
            if kind == TXNS and data is not None and not data.get("transactions"):
                data = None  # an emptied bucket goes away
            if data is None and version == 0:
                continue
            out.append((kind, doc_id, data, version))
        return out


def sort_transactions(txns: Iterable[dict]) -> list[dict]:
    return sorted(txns, key=lambda t: (t["date"], t["id"]))


def new_txn(txn_id: str, day: str, payee: str, amount: int, category_id: str | None = None, *, memo: str = "",
            cleared: str = "uncleared", approved: bool = True, flag: str | None = None,
            subtransactions: list[dict] | None = None, import_id: str | None = None,
            transfer: str | None = None) -> dict[str, Any]:
    """A transaction with every field present (so a change's ``before`` always compares like with like)."""
    return {
        "id": txn_id, "date": day, "payee": payee, "amount": int(amount), "category_id": category_id, "memo": memo,
        "cleared": cleared, "approved": bool(approved), "flag": flag, "subtransactions": list(subtransactions or []),
        "import_id": import_id, "transfer": transfer,
    }


def txn_line(txn: dict) -> str:
    """``2026-09-12, Market, -86.40``: how a budget preview names a transaction (date, payee, amount)."""
    return f"{txn['date']}, {txn['payee']}, {display(txn['amount'])}"


def _need(table: dict, ident: Any, field: str, noun: str, read_tool: str):
    """``table[ident]``, or the error naming the argument, what is missing and where ids come from."""
    found = table.get(ident) if isinstance(ident, str) else None
    if found is None:
        raise ActionError(f"{field}: no {noun} {ident!r} in this budget; {read_tool} gives the ids.", field=field)
    return found
