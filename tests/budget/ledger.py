"""A small, fixed budget for the tests (dates in September 2026) and a
helper that plans, applies and reads through the toolset's own actions, in process."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from countersign.core.canonical import subject_fingerprint
from countersign.core.ids import new_id
from countersign.gate.errors import DriftError
from countersign.gate.question import plan_at_answer
from countersign.identity import accounts
from countersign.store.docs import DocWrite
from countersign.store.errors import Conflict
from countersign.toolkit import ActionContext, ActionError, Plan
from countersign.toolsets.budget import TOOLSET, layout, rollup
from countersign.toolsets.budget.model import (
    ACCOUNT,
    CATEGORY,
    GROUP,
    LOCATOR,
    MONTH,
    OP,
    RTA_ID,
    TOTAL,
    TXNS,
    Ledger,
    new_txn,
)

NOW = int(datetime(2026, 9, 20, 12, tzinfo=UTC).timestamp())  # "current" is 2026-09-01

ACTIONS = {a.name: a for a in TOOLSET.actions}
READS = {r.name: r for r in TOOLSET.reads}

# Categorise the seed's two uncategorised outflows (the apply_categories arguments).
RECAT = {"changes": [{"transaction_id": "t_market", "category_id": "cat_groceries"},
                     {"transaction_id": "t_shop", "category_id": "cat_household"}]}


def _txns():
    """Ids made before the chunked layout (``t_pay``): they do not carry their month, so each has a locator."""
    return {
        "acc_checking": [
            new_txn("t_pay", "2026-09-01", "Acme Payroll", 2_400_000, RTA_ID, cleared="cleared"),
            new_txn("t_market", "2026-09-12", "Market", -86_400, None, cleared="cleared", approved=False),
            new_txn("t_bistro", "2026-09-14", "Bistro", -42_500, "cat_restaurants", cleared="cleared"),
            new_txn("t_shop", "2026-09-15", "Corner Store", -12_000, None, approved=False),
            new_txn("t_court", "2026-09-16", "Court Booking", -18_000, "cat_tennis", cleared="reconciled"),
        ],
        "acc_savings": [
            new_txn("t_interest", "2026-08-31", "Interest", 2_100, RTA_ID, cleared="cleared"),
        ],
    }


def seed_small(store, workspace_id: str) -> None:
    writes = [
        DocWrite(ACCOUNT, "acc_checking", {"name": "Checking", "type": "checking", "closed": False, "position": 0}, 0),
        DocWrite(ACCOUNT, "acc_savings", {"name": "Savings", "type": "savings", "closed": False, "position": 1}, 0),
        DocWrite(GROUP, "grp_everyday", {"name": "Everyday", "position": 0, "hidden": False}, 0),
        DocWrite(GROUP, "grp_fun", {"name": "Fun", "position": 1, "hidden": False}, 0),
    ]
    for pos, (cid, name, group) in enumerate(
        [
            ("cat_groceries", "Groceries", "grp_everyday"),
            ("cat_restaurants", "Restaurants", "grp_everyday"),
            ("cat_household", "Household", "grp_everyday"),
            ("cat_tennis", "Tennis", "grp_fun"),
            ("cat_books", "Books", "grp_fun"),
        ]
    ):
        writes.append(
            DocWrite(CATEGORY, cid, {"name": name, "group_id": group, "position": pos, "hidden": False, "note": ""}, 0)
        )
    writes.extend(layout.build(((account, t) for account, txns in _txns().items() for t in txns),
                               {"2026-09-01": {"cat_restaurants": 120_000, "cat_groceries": 400_000}}))
    store.docs.write_docs(workspace_id, writes)


@dataclass
class Book:
    """One workspace's budget, driven in process through the toolset's actions."""

    store: object
    ctx: ActionContext
    _asked: dict = field(default_factory=dict)  # id(plan) → (tool, arguments) it was planned from

    @property
    def workspace_id(self) -> str:
        return self.ctx.workspace_id

    def plan(self, tool: str, **args) -> Plan:
        action = ACTIONS[tool]
        plan = action.plan(action.parse(args), self.ctx)
        self._asked[id(plan)] = (tool, args)
        return plan

    def apply(self, tool: str, plan: Plan) -> dict:
        """Apply and commit the effect as the gate does for an answer: a write that raced another
        (its expectation failed) is planned again on fresh state and runs only while the fingerprint
        is still the one shown, else :class:`DriftError`. The result."""
        shown = self.fingerprint(tool, plan)
        for _ in range(5):
            effect = ACTIONS[tool].apply(plan, self.ctx)
            try:
                for phase in effect.phases:
                    self.store.docs.write_docs(self.workspace_id, list(phase.writes))
            except Conflict:
                asked_tool, args = self._asked[id(plan)]
                action = ACTIONS[asked_tool]
                plan = plan_at_answer(action, action.parse(args), self.ctx)
                self._asked[id(plan)] = (asked_tool, args)
                if self.fingerprint(tool, plan) != shown:
                    raise DriftError(action.drift_message) from None
                continue
            return effect.result
        raise AssertionError("five conflicts in a row")

    def do(self, tool: str, **args) -> dict:
        return self.apply(tool, self.plan(tool, **args))

    def refuses(self, tool: str, field: str, **args) -> None:
        """Planning ``tool`` with ``args`` is refused naming ``field``, and nothing is written."""
        before = self.snapshot()
        with pytest.raises(ActionError) as err:
            self.plan(tool, **args)
        assert err.value.field == field, err.value.message
        assert self.snapshot() == before

    def read(self, tool: str, **args) -> dict:
        r = READS[tool]
        return r.run(r.parse(args), self.ctx)

    def fingerprint(self, tool: str, plan: Plan) -> str:
        return subject_fingerprint(self.workspace_id, tool, plan.subject)

    # -- state ------------------------------------------------------------------------------------

    def txn(self, txn_id: str) -> dict:
        for doc in self.store.docs.list_docs(self.workspace_id, TXNS):
            for t in doc.data["transactions"]:
                if t["id"] == txn_id:
                    return t
        raise KeyError(txn_id)

    def all_txns(self) -> dict[str, dict]:
        return {t["id"]: t for d in self.store.docs.list_docs(self.workspace_id, TXNS) for t in d.data["transactions"]}

    def budgeted(self, month: str, category_id: str) -> int:
        doc = self.store.docs.get_doc(self.workspace_id, MONTH, month)
        return (doc.data["budgeted"].get(category_id, 0)) if doc else 0

    def category(self, category_id: str) -> dict | None:
        doc = self.store.docs.get_doc(self.workspace_id, CATEGORY, category_id)
        return doc.data if doc else None

    def ops(self) -> list:
        return sorted(self.store.docs.list_docs(self.workspace_id, OP), key=lambda d: d.id)

    def snapshot(self) -> dict:
        """Every budget doc's data (versions left out): equal snapshots mean equal ledgers."""
        return {kind: {d.id: d.data for d in self.store.docs.list_docs(self.workspace_id, kind)}
                for kind in (ACCOUNT, GROUP, CATEGORY, MONTH, TXNS, TOTAL, LOCATOR)}

    # -- moving things behind a preview -----------------------------------------------------------

    def set_txn(self, txn_id: str, **fields) -> None:
        """Another writer changes a transaction (its totals with it), behind any plan made before."""
        ledger = Ledger(self.store.docs, self.workspace_id)
        ref = ledger.find_txn(txn_id)
        if ref is None:
            raise KeyError(txn_id)
        staged = layout.Staged(ledger)
        staged.replace(ref.chunk, txn_id, dict(ref.data, **fields))
        self.store.docs.write_docs(self.workspace_id, staged.writes())

    def set_budget(self, month: str, category_id: str, milliunits: int) -> None:
        """Another writer budgets (the roll-ups with it), behind any plan made before."""
        staged = layout.Staged(Ledger(self.store.docs, self.workspace_id))
        data = staged.get(MONTH, month) or {"budgeted": {}}
        staged.put(MONTH, month, dict(data, budgeted=dict(data["budgeted"], **{category_id: milliunits})))
        self.store.docs.write_docs(self.workspace_id, staged.writes())

    def set_category(self, category_id: str, **fields) -> None:
        doc = self.store.docs.get_doc(self.workspace_id, CATEGORY, category_id)
        self.store.docs.write_docs(
            self.workspace_id, [DocWrite(CATEGORY, category_id, dict(doc.data, **fields), doc.version)]
        )


def new_book(store, now: int = NOW, seed: bool = True) -> Book:
    workspace, person = accounts.create_workspace(store.workspaces, "Budget test", f"{new_id('u')}@example.com",
                                                  now=now)
    if seed:
        seed_small(store, workspace.id)
    return Book(store, ActionContext.reading(store.docs, store.workspaces, workspace, person, None, now))


def book_for(store, workspace_id: str, person, now: int = NOW) -> Book:
    return Book(store, ActionContext.reading(store.docs, store.workspaces,
                                             store.workspaces.get_workspace(workspace_id), person, None, now))


def set_group(book: Book, group_id: str, **fields) -> None:
    doc = book.store.docs.get_doc(book.workspace_id, GROUP, group_id)
    book.store.docs.write_docs(book.workspace_id, [DocWrite(GROUP, group_id, dict(doc.data, **fields), doc.version)])


def every_transaction(ledger: Ledger) -> list:
    """Every transaction of the ledger (a test's whole view; the toolset itself never reads them all)."""
    return [ref for doc in ledger.range(TOTAL, "m.") for ref in ledger.month_transactions(doc.id[2:])]


def assert_rolled_up(store, workspace_id: str) -> None:
    """The roll-ups agree with the month totals and budget months they summarise: exactly the
    docs a rebuild from those gives (the ledger doc, the year docs and the block docs)."""
    totals = {d.id: d.data for d in store.docs.list_docs(workspace_id, TOTAL)}
    months = [(d.id, d.data) for d in store.docs.list_docs(workspace_id, MONTH)]
    want = rollup.rolled_up(months, [(i[2:], d) for i, d in sorted(totals.items()) if i.startswith("m.")])
    assert {i: d for i, d in totals.items() if rollup.is_rollup(i)} == want
