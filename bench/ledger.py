"""Ledger-scale bench: budget reads, plan and apply at 300, 5,000 and 50,000 transactions.

    .venv/bin/python bench/ledger.py [SIZES...]     (default: 300 5000 50000; SQLite on a temporary file)

The ledger grows as a real one does, 300 transactions a month on three accounts and 23
categories, so 50,000 transactions are 14 years of history. For each size it prints the median
latency of each step (in process, through the toolset's own actions), how many docs and bytes the
step read, and its ratio to the same step at the smallest size, measured in the same run (goal:
within 2x at 50,000). Then the largest stored item at each size (goal: bounded whatever the size;
DynamoDB refuses items over 400 KB). It prints; it asserts nothing.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)

from countersign.gate.question import Question
from countersign.identity import accounts
from countersign.store.docs import MAX_DOC_WRITES
from countersign.store.sqlite import SQLiteStore
from countersign.toolkit import ActionContext
from countersign.toolsets.budget import TOOLSET, demo, layout
from countersign.toolsets.budget.model import CATEGORY, MONTH, RTA_ID, new_txn

NOW = 1_790_000_000  # 2026-09-21
PER_MONTH = 300
REPEAT = 100  # rounds of sub-millisecond steps: 25 left one stall in a median on a noisy machine
ACTIONS = {a.name: a for a in TOOLSET.actions}
READS = {r.name: r for r in TOOLSET.reads}


class Counting:
    """The store as a toolset sees it, counting the docs and bytes each call returns."""

    def __init__(self, reader):
        self.reader, self.docs, self.calls = reader, 0, 0

    def _seen(self, docs):
        self.calls += 1
        self.docs += len(docs)
        return docs

    def get_doc(self, workspace_id, kind, doc_id):
        doc = self.reader.get_doc(workspace_id, kind, doc_id)
        self._seen([doc] if doc else [])
        return doc

    def get_docs(self, workspace_id, keys):
        found = self.reader.get_docs(workspace_id, keys)
        self._seen(list(found.values()))
        return found

    def list_docs(self, workspace_id, kind, prefix="", **bounds):
        return self._seen(self.reader.list_docs(workspace_id, kind, prefix, **bounds))

    def __getattr__(self, name):
        return getattr(self.reader, name)


def fill(store, size: int) -> tuple[ActionContext, str]:
    workspace, person = accounts.create_workspace(store.workspaces, "Bench", f"bench{size}@example.com", now=NOW)
    demo_docs = demo.build(NOW)
    base = [w for w in demo_docs if w.kind not in ("budget_txns", "budget_total", "budget_locator", MONTH)]
    budgets = {w.id: w.data["budgeted"] for w in demo_docs if w.kind == MONTH and w.data}
    rng = random.Random(size)
    cats = [w.id for w in base if w.kind == CATEGORY]
    months = -(-size // PER_MONTH)
    first = date(2026, 9, 1)
    for _ in range(months - 1):
        first = (first - timedelta(days=1)).replace(day=1)
    entries = []
    span = (date(2026, 9, 20) - first).days  # up to "today": every size's newest month is the current one
    for i in range(size):
        day = first + timedelta(days=i * span // max(size - 1, 1))
        account = rng.choice(("acc_checking", "acc_checking", "acc_cash", "acc_savings"))
        income = i % 40 == 0
        txn_id = f"t_{day:%Y%m%d}_{i:016d}"
        entries.append((account, new_txn(txn_id, day.isoformat(), f"Payee {i % 97}",
                                         rng.randrange(100_000, 3_000_000) if income else -rng.randrange(1_000, 90_000),
                                         RTA_ID if income else rng.choice(cats + [None]),
                                         cleared=rng.choice(("cleared", "reconciled", "uncleared")),
                                         approved=rng.random() > 0.05, memo=rng.choice(("", "weekly", "card"))), ))
    writes = base + layout.build(entries, budgets)
    for start in range(0, len(writes), MAX_DOC_WRITES):
        store.docs.write_docs(workspace.id, writes[start:start + MAX_DOC_WRITES])
    return ActionContext.reading(store.docs, store.workspaces, workspace, person, None, NOW), entries[-1][1]["id"]


def largest_item(store, workspace_id: str) -> int:
    kinds = ("budget_txns", "budget_total", "budget_month", "budget_category", "budget_account")
    return max(layout.size_of(d.data) for k in kinds for d in store.docs.list_docs(workspace_id, k))


def steps(ctx: ActionContext, recent: str):
    def read(tool, **args):
        r = READS[tool]
        return lambda c: r.run(r.parse(args), c)

    def plan_apply(tool, **args):
        a = ACTIONS[tool]

        def run(c):  # what the gate does for a yes: plan (which stages the change), then the effect
            return Question.of(a, args, c).effect()  # staged writes, not committed: every repeat sees the same ledger
        return run

    return {
        "get_month": read("get_month"),
        "list_categories": read("list_categories"),
        "list_accounts": read("list_accounts"),
        "list_transactions (50)": read("list_transactions"),
        # a page of 20 is more than the 300 ledger holds (all 13 are the answer there, from its one
        # month; the larger ledgers read the months a page of 20 needs); a page of 5 is answered from
        # the current month at every size, so it shows what history alone costs
        "list_transactions uncategorised": read("list_transactions", uncategorised=True, limit=20),
        "list_transactions uncategorised (5)": read("list_transactions", uncategorised=True, limit=5),
        "plan+apply set_category_budget": plan_apply("set_category_budget", category_id="cat_groceries",
                                                     month="current", amount="612.34"),
        "plan+apply budget 10 years back": plan_apply("set_category_budget", category_id="cat_groceries",
                                                      month="2016-09", amount="612.34"),
        # so much that no later overspending absorbs it: every later year's carry moves (the worst case)
        "plan+apply 10 years back, carried": plan_apply("set_category_budget", category_id="cat_groceries",
                                                        month="2016-09", amount="5000000"),
        "plan+apply apply_categories": plan_apply("apply_categories", changes=[
            {"transaction_id": recent, "category_id": "cat_books"}]),
    }


def counted(ctx: ActionContext, fn) -> tuple[ActionContext, int, str]:
    """A context reading through a counting store, and the docs and calls of one (warm-up) run
    (a plan+apply step's calls are shown as calls/docs written, e.g. ``1c+4w``)."""
    counting = Counting(ctx.store)
    c = replace(ctx, store=counting, connection=None, now=NOW)
    out = fn(c)
    written = sum(len(phase.writes) for phase in getattr(out, "phases", ()))
    return c, counting.docs, f"{counting.calls}c+{written}w" if written else f"{counting.calls}c"


def main(sizes: list[int]) -> None:
    results: dict[int, dict[str, tuple[float, int, str]]] = {}
    items: dict[int, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[int, dict[str, tuple]] = {}
        stores = []
        for size in sizes:
            store = SQLiteStore(str(Path(tmp) / f"ledger{size}.db"))
            stores.append(store)
            t0 = time.perf_counter()
            ctx, recent = fill(store, size)
            print(f"{size:>6} transactions: filled in {time.perf_counter() - t0:.1f} s", flush=True)
            runs[size] = {name: (fn, *counted(ctx, fn)) for name, fn in steps(ctx, recent).items()}
            items[size] = largest_item(store, ctx.workspace_id)
        times: dict[tuple[int, str], list[float]] = {}
        for _ in range(REPEAT):  # interleaved: every size and step once per round
            for size in sizes:
                for name, (fn, c, _docs, _calls) in runs[size].items():
                    t0 = time.perf_counter()
                    fn(c)
                    times.setdefault((size, name), []).append(time.perf_counter() - t0)
        for size in sizes:
            results[size] = {name: (statistics.median(times[(size, name)]), docs, calls)
                             for name, (_fn, _c, docs, calls) in runs[size].items()}
        for store in stores:
            store.close()
    base = sizes[0]
    print(f"\nmedian of {REPEAT} interleaved rounds, in process, SQLite; ratio to the same step at {base} "
          "transactions (goal <= 2x)")
    print(f"{'step':34}" + "".join(f"{s:>27}" for s in sizes))
    for name in results[base]:
        cells = []
        for s in sizes:
            t, docs, calls = results[s][name]
            ratio = t / results[base][name][0]
            cells.append(f"{t * 1000:7.2f} ms {ratio:4.2f}x {docs:4d}d/{calls}")
        print(f"{name:34}" + "".join(f"{c:>27}" for c in cells))
    print("(d = docs read, c = store calls, w = docs written by the apply, not committed)")
    print("\nlargest item (canonical JSON bytes): " + ", ".join(f"{s}: {items[s] / 1024:.1f} KB" for s in sizes)
          + f"  (chunk bound {layout.CHUNK_MAX // 1024} KB; DynamoDB limit 400 KB)")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [300, 5000, 50000])
