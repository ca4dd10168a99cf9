"""The carry: how a category's available moves from month to month and year to year — pure
arithmetic on the roll-ups' numbers (:mod:`.rollup`), no store.

A category's available is ``a(m) = max(a(m-1), 0) + net(m)``: an overspent balance does not
carry over (it is taken from Ready to Assign instead). So one month with a net ``v`` maps the
balance before it by ``c ↦ max(v, c + v)``, a month without one by ``c ↦ max(c, 0)``, and a
whole year by ``c ↦ max(L, c + K)`` for two numbers ``(L, K)`` of that year alone (its
*effect*): such maps compose, ``(L₂, K₂)∘(L₁, K₁) = (max(L₂, L₁ + K₂), K₁ + K₂)``, and
``L ≥ K`` always. Every year begins by taking its overspent balances, so a year's effect gives
the same from ``c`` as from ``max(c, 0)``: the carry between years is kept clamped at 0 (only
what is carried over), and a year without a net for a category leaves its carry as it is. Money
is conserved besides (Ready to Assign + every available = the flow, income + activity of every
month so far), so a carry is ``{"available": {category: milliunits > 0}, "flow": milliunits}``.
"""

from __future__ import annotations

from typing import Any


def empty_start() -> dict[str, Any]:
    return {"available": {}, "flow": 0}


def year_effect(year: dict[str, Any], was: dict[str, Any] | None = None,
                cats: set[str] | None = None) -> dict[str, Any]:
    """A year's effect on the carry, from its year doc's data: ``e``, each category's ``[L, K]``
    (those that leave a carry as ``max(c, 0)`` left out), and ``f``, the year's flow (if any).
    Given ``was``, its effect before a change that moved only the nets of ``cats``, only those are
    worked out again."""
    nets = year.get("d") or {}
    effects = dict((was or {}).get("e") or {}) if cats is not None else {}
    for cat in (cats if cats is not None else nets):
        months = nets.get(cat) or {}
        low = total = 0
        for month in sorted(months):
            v = int(months[month])
            low, total = max(v, low + v), total + v
        if low or total:
            effects[cat] = [low, total]
        else:
            effects.pop(cat, None)
    flow = sum(int(v) for v in (year.get("f") or {}).values())
    entry: dict[str, Any] = {}
    if effects:
        entry["e"] = effects
    if flow:
        entry["f"] = flow
    return entry


def advance(start: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """The carry at the end of a year whose effect is ``entry``, from ``start`` at the end of the
    year before (clamped at 0)."""
    available = dict(start.get("available") or {})
    for cat, (low, total) in (entry.get("e") or {}).items():
        a = max(0, low, available.get(cat, 0) + total)
        if a:
            available[cat] = a
        else:
            available.pop(cat, None)
    return {"available": available, "flow": int(start.get("flow", 0)) + int(entry.get("f", 0))}


def through(block: dict[str, Any], before: str | None = None) -> dict[str, Any]:
    """The carry out of a block doc's years (those before ``before``, if given), from its start."""
    end = block.get("start") or empty_start()
    for year in sorted(block.get("y") or {}):
        if before is not None and year >= before:
            break
        end = advance(end, block["y"][year])
    return end


def moved_out(now: dict[str, Any], was: dict[str, Any]) -> tuple[dict[str, int], int]:
    """How the carry out of block ``now`` differs from the carry out of ``was``, the same block
    before a change (each ``{"start", "y"}``): (every category whose carry out moved, with its
    carry out now; how much the flow moved). Only the categories whose start or some year's
    effect moved are carried again — one or two of many, for one change."""
    new, old = now.get("start") or empty_start(), was.get("start") or empty_start()
    new_years, old_years = now.get("y") or {}, was.get("y") or {}
    cats = _differing(new.get("available") or {}, old.get("available") or {})
    flow = int(new.get("flow", 0)) - int(old.get("flow", 0))
    years = sorted({*new_years, *old_years})
    for year in years:
        a, b = new_years.get(year) or {}, old_years.get(year) or {}
        if a != b:
            cats |= _differing(a.get("e") or {}, b.get("e") or {})
            flow += int(a.get("f", 0)) - int(b.get("f", 0))
    moved = {}
    for cat in cats:
        carried = _chain(int((new.get("available") or {}).get(cat, 0)), new_years, years, cat)
        if carried != _chain(int((old.get("available") or {}).get(cat, 0)), old_years, years, cat):
            moved[cat] = carried
    return moved, flow


def with_moved(out: dict[str, Any], moved: dict[str, int], flow: int) -> dict[str, Any]:
    """``out`` (a carry) with :func:`moved_out`'s changes."""
    available = dict(out.get("available") or {})
    for cat, a in moved.items():
        _settle(available, cat, a)
    return {"available": available, "flow": int(out.get("flow", 0)) + flow}


def _differing(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    return {key for key in {*a, *b} if a.get(key) != b.get(key)}


def _chain(a: int, entries: dict[str, Any], years: list[str], cat: str) -> int:
    for year in years:
        effect = ((entries.get(year) or {}).get("e") or {}).get(cat)
        if effect:
            a = max(0, effect[0], a + effect[1])
    return a


def carry(end: dict[str, Any], year: dict[str, Any], last: int = 12) -> dict[str, Any]:
    """The carry at the end of month ``last`` (1–12) of ``year`` (a year doc's data), from ``end``,
    the carry at the end of any December before it (months between that hold nothing only take
    the overspent balances, as this year's first month does). A category overspent in month
    ``last`` itself keeps its negative balance: it is taken the month after."""
    until = f"{last:02d}"
    available = dict(end.get("available") or {})
    nets = year.get("d") or {}
    for cat in set(available) | set(nets):
        _settle(available, cat, _carried(available.get(cat, 0), nets.get(cat) or {}, until))
    flow = int(end.get("flow", 0)) + sum(v for m, v in (year.get("f") or {}).items() if m <= until)
    return {"available": available, "flow": flow}


def _carried(a: int, nets: dict[str, int], until: str) -> int:
    """One category's available at the end of month ``until``, from ``a`` at the end of the year before."""
    months = sorted(m for m in nets if m <= until)
    for m in months:
        a = max(a, 0) + nets[m]
    if not months or months[-1] < until:
        a = max(a, 0)  # a month without a net passed: an overspent balance was taken
    return a


def _settle(available: dict[str, int], cat: str, a: int) -> None:
    if a:
        available[cat] = a
    else:
        available.pop(cat, None)
