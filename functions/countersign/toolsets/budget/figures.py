"""A month's budget figures, from the month docs and the month totals (never the transactions).

Available carries over month to month; an overspent (negative) balance does not carry over: it
is taken from Ready to Assign the next month, as YNAB does for cash spending. So a month's
figures depend on every month before it: this reads two small docs per month of the budget's
history (its budgets and its totals, each bounded by the number of categories), however many
transactions those months hold.
"""

from __future__ import annotations

from typing import Any

from .model import MONTH, TOTAL, Ledger, add_months


def month_figures(ledger: Ledger, month: str) -> dict[str, Any]:
    """Budgeted, activity and available of every category in ``month`` (``YYYY-MM-01``), and its
    income and Ready to Assign (worked out once per ledger and month)."""
    cached = ledger.memo.get(("figures", month))
    if cached is None:
        cached = ledger.memo[("figures", month)] = _figures(ledger, month)
    return cached


def _figures(ledger: Ledger, month: str) -> dict[str, Any]:
    after = add_months(month, 1)
    budgets = {d.id: d.data.get("budgeted") or {} for d in ledger.range(MONTH, stop=after)}
    totals = {d.id[2:] + "-01": d.data for d in ledger.range(TOTAL, "m.", stop="m." + after[:7])}
    available: dict[str, int] = {}
    overspent_now: set[str] = set()  # categories whose available is negative
    rta = 0
    budgeted: dict[str, int] = {}
    for m in sorted(set(budgets) | set(totals) | {month}):
        budgeted = budgets.get(m, {})
        total = totals.get(m, {})
        overspent = 0
        for c in overspent_now:
            overspent += available[c]
            available[c] = 0  # an overspent balance does not carry over
        overspent_now = set()
        rta += total.get("income", 0) - sum(budgeted.values()) + overspent
        for source in (budgeted, total.get("activity") or {}):
            for c, v in source.items():
                available[c] = available.get(c, 0) + v
        overspent_now.update(c for c in set(budgeted) | set(total.get("activity") or {}) if available[c] < 0)
    current = totals.get(month, {})
    return {
        "month": month,
        "income": int(current.get("income", 0)),
        "ready_to_assign": rta,
        "budgeted": {k: int(v) for k, v in budgeted.items()},
        "activity": dict(current.get("activity") or {}),
        "available": available,
    }
