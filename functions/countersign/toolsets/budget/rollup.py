"""Roll-ups: what a read would otherwise add up over the whole history, kept so that it reads a
fixed number of docs however long the history is.

Two kinds of ``budget_total`` doc, written in the same commit as the change they summarise
(:meth:`.layout.Staged.writes`):

* ``ledger`` — the whole ledger's counts (``n``, ``accounts``, ``cats``, ``uncategorised``,
  ``unapproved``: the month totals' counts added up) and ``years``, the years that have a
  year doc. Its presence says the roll-up is built; a budget written before it has none until its
  first write that changes a total or a budget (which builds it from the month totals and budget
  months, once) or ``countersign budget upgrade``. Until then reads add up history as before.
* ``y.<YYYY>`` — a year: per category the month's *net* (budgeted + activity) of each month that
  has one (``d``: ``{category: {"09": milliunits}}``), the month's *flow* (income + activity of
  every category, ``f``: ``{"09": milliunits}``), and ``end``: the carry at the end of December —
  every category's available (``available``) and the flow of every month so far (``flow``).

Why that suffices: a category's available is ``a(m) = max(a(m-1), 0) + net(m)`` (an overspent
balance does not carry over; it is taken from Ready to Assign instead), and money is conserved:
Ready to Assign + the sum of every available = income + activity of every month so far. So a
month's figures are the previous year's ``end`` carried through this year's months (at most 12)
— two year docs, whatever the history. A change to a month of year Y rewrites ``y.Y`` and, since
its ``end`` carries into every later year, every later year doc (one doc per year: bounded by the
budget's window of years, far below ``MAX_DOC_WRITES``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

COUNTS = ("n", "accounts", "cats", "uncategorised", "unapproved")
LEDGER_ID = "ledger"


def year_id(year: str) -> str:
    return f"y.{year}"


def rollup_keys(month: str, total_kind: str) -> list[tuple[str, str]]:
    """The docs a read or change of ``month`` (``YYYY-MM…``) needs in the usual case: the ledger
    doc, its year and the year before (read with the month's own docs, in one read)."""
    year = month[:4]
    return [(total_kind, LEDGER_ID), (total_kind, year_id(year)), (total_kind, year_id(f"{int(year) - 1:04d}"))]


# -- what a month doc contributes ----------------------------------------------------------------------


def budget_net(budgeted: dict[str, int]) -> tuple[dict[str, int], int]:
    """(net per category, flow) of a budget month's ``budgeted``: the net only (flow is unchanged)."""
    return {c: int(v) for c, v in budgeted.items() if v}, 0


def total_net(total: dict[str, Any]) -> tuple[dict[str, int], int]:
    """(net per category, flow) of a month total: its activity, and income + activity."""
    activity = {c: int(v) for c, v in (total.get("activity") or {}).items() if v}
    return activity, int(total.get("income", 0)) + sum(activity.values())


def counts_of(total: dict[str, Any]) -> dict[str, Any]:
    return {k: total[k] for k in COUNTS if k in total}


# -- carrying --------------------------------------------------------------------------------------


def empty_end() -> dict[str, Any]:
    return {"available": {}, "flow": 0}


def carry(end: dict[str, Any], year: dict[str, Any], last: int = 12) -> dict[str, Any]:
    """The carry at the end of month ``last`` (1–12) of ``year`` (a year doc's data), from ``end``,
    the carry at the end of any December before it (months between that hold nothing only take
    the overspent balances, as this year's first month does). A category overspent in month
    ``last`` itself keeps its negative balance: it is taken the month after."""
    available = dict(end.get("available") or {})
    nets = year.get("d") or {}
    for cat in set(available) | set(nets):
        a = available.get(cat, 0)
        months = sorted(m for m in (nets.get(cat) or {}) if int(m) <= last)
        for m in months:
            a = max(a, 0) + nets[cat][m]
        if not months or int(months[-1]) < last:
            a = max(a, 0)  # a month without a net passed: an overspent balance was taken
        if a:
            available[cat] = a
        else:
            available.pop(cat, None)
    flow = int(end.get("flow", 0)) + sum(v for m, v in (year.get("f") or {}).items() if int(m) <= last)
    return {"available": available, "flow": flow}


# -- building from the month docs -------------------------------------------------------------------


def add_net(year: dict[str, Any], mm: str, net: dict[str, int], flow: int, sign: int) -> None:
    """``year``'s nets and flow of month ``mm`` += ``sign`` × (``net``, ``flow``)."""
    d = year.setdefault("d", {})
    for cat, v in net.items():
        months = d.setdefault(cat, {})
        total = months.get(mm, 0) + sign * v
        if total:
            months[mm] = total
        else:
            months.pop(mm, None)
            if not months:
                del d[cat]
    if flow:
        f = year.setdefault("f", {})
        total = f.get(mm, 0) + sign * flow
        if total:
            f[mm] = total
        else:
            f.pop(mm, None)
    for key in ("d", "f"):
        if key in year and not year[key]:
            del year[key]


def from_months(budgets: Iterable[tuple[str, dict]], totals: Iterable[tuple[str, dict]]) -> tuple[dict, dict]:
    """(the ledger doc, {year: year doc}) of a budget's months: ``budgets`` are (``YYYY-MM-01``,
    budget month data), ``totals`` (``YYYY-MM``, month total data)."""
    from .layout import add_into  # the totals' own arithmetic

    ledger: dict[str, Any] = {}
    years: dict[str, dict[str, Any]] = {}
    for month, data in budgets:
        net, flow = budget_net(data.get("budgeted") or {})
        add_net(years.setdefault(month[:4], {}), month[5:7], net, flow, +1)
    for month, data in totals:
        net, flow = total_net(data)
        add_net(years.setdefault(month[:4], {}), month[5:7], net, flow, +1)
        add_into(ledger, counts_of(data), +1)
    end = empty_end()
    for year in sorted(years):
        end = years[year]["end"] = carry(end, years[year])
    ledger["years"] = sorted(years)
    return ledger, years
