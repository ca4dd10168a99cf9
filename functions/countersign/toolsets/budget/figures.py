"""A month's budget figures, from the month's docs and the roll-ups (never the transactions).

Available carries over month to month; an overspent (negative) balance does not carry over: it
is taken from Ready to Assign the next month, as YNAB does for cash spending. So a month's
figures depend on every month before it; the roll-ups (:mod:`.rollup`) keep that carry at the start
of every block of years and each year's effect on it, so a read takes the month's budget and
totals, the ledger doc, its year doc and its block doc — the same five docs, in one read, however
long the history. A budget whose roll-ups are not built yet (written by an older version, or
kept in an older layout, and not written to since) is added up month by month from its first,
as before.
"""

from __future__ import annotations

from typing import Any

from .carry import carry
from .keys import rollup_keys, year_id
from .model import MONTH, TOTAL, Ledger, add_months, month_total_id
from .rollup import built_ledger, start_of


def month_figures(ledger: Ledger, month: str) -> dict[str, Any]:
    """Budgeted, activity and available of every category in ``month`` (``YYYY-MM-01``), and its
    income and Ready to Assign (worked out once per ledger and month)."""
    cached = ledger.memo.get(("figures", month))
    if cached is None:
        cached = ledger.memo[("figures", month)] = _figures(ledger, month)
    return cached


def _figures(ledger: Ledger, month: str) -> dict[str, Any]:
    ledger.prefetch([(MONTH, month), (TOTAL, month_total_id(month)), *rollup_keys(month)])
    rolled = built_ledger(ledger)
    if rolled is None:
        return _added_up(ledger, month)
    year = month[:4]
    this_year = ledger.get(TOTAL, year_id(year))
    start = start_of(ledger, rolled.data.get("years") or [], year)
    carried = carry(start, this_year.data if this_year is not None else {}, int(month[5:7]))
    available = carried["available"]
    budgets = ledger.get(MONTH, month)
    current = ledger.get(TOTAL, month_total_id(month))
    totals = current.data if current else {}
    return {
        "month": month,
        "income": int(totals.get("income", 0)),
        "ready_to_assign": carried["flow"] - sum(available.values()),
        "budgeted": {k: int(v) for k, v in ((budgets.data.get("budgeted") if budgets else None) or {}).items()},
        "activity": dict(totals.get("activity") or {}),
        "available": available,
    }


def _added_up(ledger: Ledger, month: str) -> dict[str, Any]:
    """The figures added up from the budget's first month (a budget without roll-ups)."""
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
