"""Roll-ups: what a read would otherwise add up over the whole history, kept so that it reads a
fixed number of docs however long the history is.

Two kinds of ``budget_total`` doc, written in the same commit as the change they summarise
(:meth:`.layout.Staged.writes`):

* ``ledger`` — the whole ledger's counts (``n``, ``accounts``, ``cats``, ``uncategorised``,
  ``unapproved``: the month totals' counts added up) and ``years``, the years that have a
  year doc. Its presence says the roll-up is built; a budget written before it has none until its
  first write that changes a total or a budget or ``countersign budget upgrade`` builds it from
  the month totals and budget months, in batches of their own before that write's commit, the
  ledger doc last (:mod:`.rebuild`). Until then reads add up history as before, and writes keep
  no roll-ups.
* ``y.<YYYY>`` — a year: per category the month's *net* (budgeted + activity) of each month that
  has one (``d``: ``{category: {"09": milliunits}}``), the month's *flow* (income + activity of
  every category, ``f``: ``{"09": milliunits}``), ``start``: the carry at the end of the year
  before — every category's available (``available``) and the flow of every month so far
  (``flow``) — and ``end``: the carry at the end of December.

Why that suffices: a category's available is ``a(m) = max(a(m-1), 0) + net(m)`` (an overspent
balance does not carry over; it is taken from Ready to Assign instead), and money is conserved:
Ready to Assign + the sum of every available = income + activity of every month so far. So a
month's figures are its year's ``start`` carried through the year's months up to it (at most 12)
— one year doc, whatever the history (a year without one: the ``end`` of the last year before it
that has one). A change to a month of year Y rewrites ``y.Y`` and, since its ``end`` is the next
year's ``start``, every later year doc whose carry it moves: a change the year absorbs (the
category is overspent later that year, and an overspent balance is not carried; a budget or a
move between categories leaves the flow as it was) rewrites ``y.Y`` alone, one carried to the
end every later year doc (one doc per year: bounded by the budget's window of years, some 37);
a year doc made new also rewrites the year doc before it, unchanged, so that a change to that one
meanwhile is a conflict rather than a lost carry. Those rewrites count towards the commit's
``MAX_DOC_WRITES``, counted at the most they could be (:func:`counted`, :func:`bound`: every year from the first
touched one on, whether or not its carry moves): a change is counted when planned
(:func:`.operations.commit`), and one that would pass it is refused before the person is asked
(split it); the importer counts them before a batch grows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .model import MONTH, TOTAL

if TYPE_CHECKING:
    from ...store.records import DocWrite
    from .layout import Staged

COUNTS = ("n", "accounts", "cats", "uncategorised", "unapproved")
LEDGER_ID = "ledger"


def year_id(year: str) -> str:
    return f"y.{year}"


def rollup_keys(month: str) -> list[tuple[str, str]]:
    """The docs a read or change of ``month`` (``YYYY-MM…``) needs in the usual case: the ledger
    doc and its year (read with the month's own docs, in one read)."""
    return [(TOTAL, LEDGER_ID), (TOTAL, year_id(month[:4]))]


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
    until = f"{last:02d}"
    available = dict(end.get("available") or {})
    nets = year.get("d") or {}
    for cat in set(available) | set(nets):
        _settle(available, cat, _carried(available.get(cat, 0), nets.get(cat) or {}, until))
    flow = int(end.get("flow", 0)) + sum(v for m, v in (year.get("f") or {}).items() if m <= until)
    return {"available": available, "flow": flow}


def carry_moved(start: dict[str, Any], was: dict[str, Any], year: dict[str, Any]) -> dict[str, Any]:
    """:func:`carry` of ``year`` (to December) from ``start``, given that from ``was`` it gives the
    year's stored ``end``: only the categories whose carry-in moved are carried again (a budget
    change moves one), and the flow by as much as it moved."""
    old, new = was.get("available") or {}, start.get("available") or {}
    available = dict(year["end"].get("available") or {})
    nets = year.get("d") or {}
    for cat in {c for c in {*old, *new} if old.get(c, 0) != new.get(c, 0)}:
        _settle(available, cat, _carried(new.get(cat, 0), nets.get(cat) or {}, "12"))
    moved = int(start.get("flow", 0)) - int(was.get("flow", 0))
    return {"available": available, "flow": int(year["end"].get("flow", 0)) + moved}


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


def copy_of(data: dict[str, Any]) -> dict[str, Any]:
    """A working copy of a roll-up doc (dicts of numbers, dicts of dicts of numbers, lists)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out[key] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in value.items()}
        elif isinstance(value, list):
            out[key] = list(value)
        else:
            out[key] = value
    return out


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
    # a year whose months add no net and no flow (a budget set back to nothing, only uncategorised
    # spending) has no doc, as a change staged by :func:`stage` would make none
    years = {year: data for year, data in years.items() if data}
    end = empty_end()
    for year in sorted(years):
        years[year]["start"] = end
        end = years[year]["end"] = carry(end, years[year])
    ledger["years"] = sorted(years)
    return ledger, years


# -- staging: the roll-ups of a change, in the same commit ------------------------------------------

Nets = dict[str, dict[str, tuple[dict[str, int], int]]]  # year → month → (net per category, flow)


def _month_of(kind: str, ident: str) -> str | None:
    if kind == MONTH:
        return ident
    if kind == TOTAL and ident.startswith("m."):
        return ident[2:]
    return None


def changes(staged: Staged) -> tuple[Nets, dict[str, Any]]:
    """What the staged budget months and month totals change: per year and month the (net per
    category, flow) added, and the counts added to the ledger's."""
    from .layout import add_into

    nets: Nets = {}
    counts: dict[str, Any] = {}
    for (kind, ident), data in staged.docs.items():
        month = _month_of(kind, ident)
        if month is None:
            continue
        for sign, side in ((-1, staged.stored(kind, ident) or {}), (+1, data or {})):
            net, flow = budget_net(side.get("budgeted") or {}) if kind == MONTH else total_net(side)
            of_year = nets.setdefault(month[:4], {})
            n0, f0 = of_year.get(month[5:7], ({}, 0))
            of_year[month[5:7]] = ({c: n0.get(c, 0) + sign * net.get(c, 0) for c in {*n0, *net}}, f0 + sign * flow)
            if kind == TOTAL:
                add_into(counts, counts_of(side), sign)
    for year in list(nets):
        nets[year] = {m: ({c: v for c, v in net.items() if v}, flow) for m, (net, flow) in nets[year].items()
                      if flow or any(net.values())}
        if not nets[year]:
            del nets[year]
    return nets, counts


def stage(staged: Staged, build: bool = False) -> None:
    """Bring the roll-ups up to date with the staged budget months and month totals: the ledger
    doc's counts, the nets of the touched years and the carry (``end``) of every later year
    whose carry moved (:func:`_carry_on`). A budget without a ledger doc has no roll-ups to keep:
    nothing is added (a writer builds them first, in batches of their own: :func:`ensure_built`),
    unless ``build`` (a new ledger staged whole in memory, :func:`.layout.build`): then they are
    built with it."""
    from .layout import add_into

    nets, counts = changes(staged)
    if not (nets or counts or build):
        return
    stored = staged.stored(TOTAL, LEDGER_ID)
    if stored is None:
        if not build:  # not built: reads add up the months; the build is its own batches (ensure_built)
            return
        _build(staged)
    if not (nets or counts):
        return
    current = staged.peek(TOTAL, LEDGER_ID) or {}
    years = sorted(set(current.get("years") or []) | set(nets))
    if counts or years != current.get("years"):
        ledger = copy_of(current)
        add_into(ledger, counts, +1)
        ledger["years"] = years
        staged.put(TOTAL, LEDGER_ID, ledger)
    if not nets:
        return
    _carry_on(staged, years, nets)


def _carry_on(staged: Staged, years: list[str], nets: Nets) -> None:
    """Stage the year docs of ``years`` (every year with a doc, and the touched ones) from the
    first touched one on: the touched years get their nets, and each later year its new carry,
    until the carry stops moving — a change absorbed by an overspent month (its balance is taken
    from Ready to Assign, not carried) leaves every later year as it is, up to the next touched
    year. The later years are read as the carry moves on, twice as many each time: a change
    absorbed soon reads few, one carried to the end a handful of reads."""
    later = [y for y in years if y >= min(nets)]
    window = 2
    fetched = window  # later[:fetched] are read (with every touched year)
    staged.ledger.prefetch([(TOTAL, year_id(y)) for y in nets] + [(TOTAL, year_id(y)) for y in later[:fetched]])
    start = (staged.peek(TOTAL, year_id(later[0])) or {}).get("start")
    end = start if start is not None else empty_end()
    i = 0
    while i < len(later):
        if i >= fetched:
            window *= 2
            staged.ledger.prefetch((TOTAL, year_id(y)) for y in later[i:i + window])
            fetched = i + window
        year = later[i]
        stored = staged.peek(TOTAL, year_id(year))
        if year not in nets and stored and stored.get("start") == end:  # its carry did not move
            i = next((j for j in range(i + 1, len(later)) if later[j] in nets), len(later))
            if i < len(later):  # so neither did any year's up to the next touched one
                end = (staged.peek(TOTAL, year_id(later[i])) or {}).get("start", end)
            continue
        if year not in nets and stored:  # only its carry-in moved: its nets are as stored
            data = dict(stored, start=end, end=carry_moved(end, stored.get("start") or empty_end(), stored))
            staged.put(TOTAL, year_id(year), data)
            end = data["end"]
            i += 1
            continue
        data = copy_of(stored or {})
        earlier = [y for y in years if y < year] if not data else []
        if earlier:  # a new year carries on from the one before: write that too, so a change to
            before = year_id(earlier[-1])  # that one meanwhile is a conflict, not a lost carry
            previous = staged.peek(TOTAL, before)
            staged.put(TOTAL, before, previous)
            end = (previous or {}).get("end") or end
        for month, (net, flow) in nets.get(year, {}).items():
            add_net(data, month, net, flow, +1)
        data["start"] = end
        end = data["end"] = carry(end, data)
        staged.put(TOTAL, year_id(year), data)  # so is every later year whose carry moved
        i += 1


def _build(staged: Staged) -> None:
    """Stage the roll-up of what is stored (before this change), every doc a creation."""
    ledger, years = from_months(_stored_months(staged, MONTH), [(i[2:], d) for i, d in _stored_months(staged, TOTAL)])
    staged.ledger.prefetch((TOTAL, year_id(y)) for y in years)
    staged.put(TOTAL, LEDGER_ID, ledger)
    for year, data in years.items():
        staged.put(TOTAL, year_id(year), data)


def _stored_months(staged: Staged, kind: str) -> list[tuple[str, dict]]:
    found = (staged.ledger.get(kind, d.id) for d in staged.ledger.range(kind, "m." if kind == TOTAL else ""))
    return [(d.id, d.data) for d in found if d is not None and d.version]


def bound(staged: Staged, *, assume_built: bool = False) -> int:
    """At most how many roll-up docs :func:`stage` adds for what is staged (so a batch that must
    stay within ``MAX_DOC_WRITES`` can count them before it grows): the ledger doc, the year doc
    before the first touched year and every year doc from that year on. None for a budget
    without a ledger doc (nothing is kept until it is built) unless ``assume_built``: then as
    many as after :func:`ensure_built` (whose own batches are not counted)."""
    touched = {m[:4] for m in (_month_of(k, i) for k, i in staged.docs) if m is not None}
    if not touched:
        return 0
    stored = staged.stored(TOTAL, LEDGER_ID)
    if stored is not None:
        years = set(stored.get("years") or [])
    elif assume_built:  # what a build from every stored month would hold
        years = {i[:4] for i, _ in _stored_months(staged, MONTH)} | {i[2:6] for i, _ in _stored_months(staged, TOTAL)}
    else:
        return 0
    years |= touched
    return 2 + sum(1 for y in years if y >= min(touched))


def counted(staged: Staged, writes: list[DocWrite], *, built: bool) -> int:
    """How many records a commit of ``writes`` (:meth:`.layout.Staged.writes`) counts against
    ``MAX_DOC_WRITES``: its roll-ups at the most they could be (:func:`bound`), not as many as
    this carry happens to move, so that a change planned while a later month absorbs its carry is
    not refused at its apply, after the person said yes, because another write meanwhile stopped
    that. A change that moves no net (an approval, say) rewrites no year and counts as it is;
    ``built``: whether the budget had its roll-ups (else they are counted as if it had)."""
    if built and not changes(staged)[0]:
        return len(writes)
    rolled = sum(1 for w in writes if w.kind == TOTAL and (w.id == LEDGER_ID or w.id.startswith("y.")))
    return len(writes) - rolled + bound(staged, assume_built=True)
