"""Roll-ups: what a read would otherwise add up over the whole history, kept so that a read,
a plan and an apply read and write a fixed number of docs however long the history is.

Three kinds of ``budget_total`` doc, written in the same commit as the change they summarise
(:meth:`.layout.Staged.writes`):

* ``ledger`` — the whole ledger's counts (``n``, ``accounts``, ``cats``, ``uncategorised``,
  ``unapproved``: the month totals' counts added up), ``years``, the years that have a year doc,
  and ``v``, the layout (:data:`LAYOUT`). Its presence, in this layout, says the roll-ups are
  built; a budget written before them (or in an older layout) has none until its first write
  that changes a total or a budget or ``countersign budget upgrade`` builds them from the month
  totals and budget months, in batches of their own before that write's commit, the ledger doc
  last (:mod:`.rebuild`). Until then reads add up history, and writes keep no roll-ups.
* ``y.<YYYY>`` — a year: per category the month's *net* (budgeted + activity) of each month that
  has one (``d``: ``{category: {"09": milliunits}}``) and the month's *flow* (income + activity
  of every category, ``f``: ``{"09": milliunits}``). Only that year's own numbers.
* ``e.<YYYY>`` — a block of :data:`BLOCK_YEARS` years from ``YYYY``: ``start``, the carry at
  the end of the year before the block (:mod:`.carry`), and ``y``, each of its years that has a
  year doc with that year's *effect* on the carry (``{"2016": {"e": {category: [L, K]}, "f":
  flow}}``). Five years, so that a block of the most categories a budget holds stays under half
  of DynamoDB's item limit, while a budget's window (2000 to ten years ahead) holds some 8.

So a month's figures are its block's ``start`` carried through the effects of the block's years
before it (at most four) and then through its own year's months (at most 12): its year doc and
its block doc, whatever the history (a block without a doc: the last block before it that has
one, carried through all of its years). A change to a month of year Y rewrites ``y.Y``, its
block doc, and every later block doc whose ``start`` it moves: none when the change leaves the
year's effect as it was or the block absorbs it (an overspent balance is not carried; a budget
or a move between categories leaves the flow as it was), one per later block when carried to
the end (bounded by the budget's window of years: some 8 blocks). A block doc made new also
rewrites the block doc before it, unchanged, so that a change to that one meanwhile is a
conflict rather than a lost carry. Those rewrites count towards the commit's ``MAX_DOC_WRITES``,
counted at the most they could be (:func:`counted`, :func:`bound`: every block from the first
touched one on, whether or not its carry moves): a change is counted when planned
(:func:`.operations.commit`), and one that would pass it is refused before the person is asked
(split it); the importer counts them before a batch grows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...toolkit import Doc, DocWrite
from .carry import empty_start, moved_out, through, with_moved, year_effect
from .keys import BLOCK_YEARS, LEDGER_ID, block_id, block_of, is_rollup, rollup_keys, year_id
from .model import MONTH, TOTAL, Ledger
from .staging import Staging, add_into
from .values import today

COUNTS = ("n", "accounts", "cats", "uncategorised", "unapproved")
LAYOUT = 2  # 1 (no ``v``): year docs that held the carry at their start and end


def is_built(ledger_doc: dict[str, Any] | None) -> bool:
    """Whether ``ledger_doc`` (the ``ledger`` doc's data, or None) says the roll-ups are built in
    this layout (an older layout's are rebuilt before anything trusts them)."""
    return ledger_doc is not None and ledger_doc.get("v") == LAYOUT


def built_ledger(ledger: Ledger) -> Doc | None:
    """The ``ledger`` doc ``ledger`` read, if it says the roll-ups are built in this layout."""
    doc = ledger.get(TOTAL, LEDGER_ID)
    return doc if doc is not None and is_built(doc.data) else None


def change_keys(month: str, now: int) -> list[tuple[str, str]]:
    """What a change to ``month`` reads first: :func:`rollup_keys`, and the doc of every later
    block up to the current year's. A change to an earlier block whose carry moves on needs
    those (:func:`_carry_on`), and one read is cheaper than a second; one absorbed reads them
    for nothing, and a block without a doc costs nothing to ask for."""
    first, last = int(block_of(month[:4])), int(block_of(str(today(now).year)))
    return rollup_keys(month) + [(TOTAL, block_id(str(b))) for b in range(first + BLOCK_YEARS, last + 1, BLOCK_YEARS)]


def start_of(ledger: Ledger, years: list[str], year: str) -> dict[str, Any]:
    """The carry at the end of the December before ``year``, from the roll-ups ``ledger`` holds,
    whose ledger doc lists ``years``: ``year``'s block doc, else
    (a block without one) the last block before it that has one, carried through all its years."""
    block = ledger.get(TOTAL, block_id(block_of(year)))
    if block is not None:
        return through(block.data, before=year)
    earlier = [y for y in years if y < year]
    found = ledger.get(TOTAL, block_id(block_of(earlier[-1]))) if earlier else None
    return through(found.data) if found is not None else empty_start()


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


def rolled_up(budgets: Iterable[tuple[str, dict]], totals: Iterable[tuple[str, dict]]) -> dict[str, dict]:
    """Every roll-up doc (by id) of a budget's months: ``budgets`` are (``YYYY-MM-01``, budget
    month data), ``totals`` (``YYYY-MM``, month total data)."""
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
    # spending) has no doc, as a change staged by :func:`stage` would leave none
    years = {year: data for year, data in sorted(years.items()) if data}
    docs: dict[str, dict] = {year_id(year): data for year, data in years.items()}
    start = empty_start()
    for block in sorted({block_of(y) for y in years}):
        doc = {"start": start, "y": {y: year_effect(data) for y, data in years.items() if block_of(y) == block}}
        docs[block_id(block)] = doc
        start = through(doc)
    docs[LEDGER_ID] = dict(ledger, years=sorted(years), v=LAYOUT)
    return docs


# -- staging: the roll-ups of a change, in the same commit ------------------------------------------

Nets = dict[str, dict[str, tuple[dict[str, int], int]]]  # year → month → (net per category, flow)


def _month_of(kind: str, ident: str) -> str | None:
    if kind == MONTH:
        return ident
    if kind == TOTAL and ident.startswith("m."):
        return ident[2:]
    return None


def changes(staged: Staging) -> tuple[Nets, dict[str, Any]]:
    """What the staged budget months and month totals change: per year and month the (net per
    category, flow) added, and the counts added to the ledger's."""
    nets: Nets = {}
    counts: dict[str, Any] = {}
    for (kind, ident), data in staged.docs.items():
        month = _month_of(kind, ident)
        if month is None:
            continue
        for sign, side in ((-1, staged.stored(kind, ident) or {}), (+1, data or {})):
            net, flow = budget_net(side.get("budgeted") or {}) if kind == MONTH else total_net(side)
            of_year = nets.setdefault(month[:4], {})
            n0, f0 = of_year.get(month[5:7]) or ({}, 0)  # (n0: this function's own dict, added into)
            for c, v in net.items():
                n0[c] = n0.get(c, 0) + sign * v
            of_year[month[5:7]] = (n0, f0 + sign * flow)
            if kind == TOTAL:
                add_into(counts, counts_of(side), sign)
    for year in list(nets):
        nets[year] = {m: ({c: v for c, v in net.items() if v}, flow) for m, (net, flow) in nets[year].items()
                      if flow or any(net.values())}
        if not nets[year]:
            del nets[year]
    return nets, counts


def stage(staged: Staging, build: bool = False) -> None:
    """Bring the roll-ups up to date with the staged budget months and month totals: the ledger
    doc's counts and years, the nets of the touched years, their blocks' effects and the
    ``start`` of every later block whose carry moved (:func:`_carry_on`). A budget whose roll-ups
    are not built has none to keep: nothing is added (a writer builds them first, in batches of
    their own: :func:`.rebuild.ensure_built`), unless ``build`` (a new ledger staged whole in
    memory, :func:`.layout.build`): then they are built with it."""
    nets, counts = changes(staged)
    if not (nets or counts or build):
        return
    if not is_built(staged.stored(TOTAL, LEDGER_ID)):
        if not build:  # not built: reads add up the months; the build is its own batches (ensure_built)
            return
        _build(staged)
    if not (nets or counts):
        return
    current = staged.peek(TOTAL, LEDGER_ID) or {}
    was = sorted(current.get("years") or [])
    years = set(was)
    for year in sorted(nets):
        data = copy_of(staged.peek(TOTAL, year_id(year)) or {})
        for month, (net, flow) in nets[year].items():
            add_net(data, month, net, flow, +1)
        staged.put(TOTAL, year_id(year), data)  # one left with nothing goes away (Staged.writes)
        (years.add if data else years.discard)(year)
    if counts or sorted(years) != was:
        ledger = copy_of(current)
        add_into(ledger, counts, +1)
        ledger["years"] = sorted(years)
        staged.put(TOTAL, LEDGER_ID, ledger)
    if nets:
        _carry_on(staged, was, nets)


def _carry_on(staged: Staging, was: list[str], nets: Nets) -> None:
    """Stage the block docs from the first touched block on: the touched blocks get their years'
    new effects, and each later block its new ``start``, until the carry out of a block is what
    it was — a change absorbed by an overspent month (its balance is taken from Ready to Assign,
    not carried) leaves every later block as it is, up to the next touched one, unread.
    ``was``: the years that had a year doc before this change (so the blocks that had a doc).
    A change reads the later blocks up to the current year's with its first read
    (:func:`change_keys`); any others (budgets in years ahead) are read at once when the carry
    moves past a block."""
    touched = {block_of(y) for y in nets}
    had = {block_of(y) for y in was}
    blocks = sorted(had | touched)
    later = [b for b in blocks if b >= min(touched)]
    read = set(touched)
    keys = [(TOTAL, block_id(b)) for b in sorted(touched)]
    earlier = [b for b in blocks if b < later[0] and b in had]
    if later[0] not in had and earlier:  # a new block carries on from the one before it
        keys.append((TOTAL, block_id(earlier[-1])))
    staged.ledger.prefetch(keys)
    end: dict[str, Any] | None = None  # the carry into later[i] (None: as stored, or the block before's)
    old_end: dict[str, Any] | None = None  # what it was before this change
    i = 0
    while i < len(later):
        block = later[i]
        if block not in read:  # the carry moved on: every later block is read at once (a few)
            staged.ledger.prefetch((TOTAL, block_id(b)) for b in later[i:])
            read.update(later[i:])
        stored = staged.peek(TOTAL, block_id(block)) or {}
        if end is None:
            end = old_end = stored["start"] if stored else _end_before(staged, [b for b in blocks if b < block])
        entries = dict(stored.get("y") or {})
        for year in (y for y in nets if block_of(y) == block):
            data = staged.peek(TOTAL, year_id(year))
            if data:  # only the categories whose nets this change moved are worked out again
                cats = {c for net, _flow in nets[year].values() for c in net}
                entries[year] = year_effect(data, entries[year], cats) if year in entries else year_effect(data)
            else:
                entries.pop(year, None)
        data = {"start": end, "y": dict(sorted(entries.items()))} if entries else {}
        if data != stored:
            staged.put(TOTAL, block_id(block), data)  # one left without years goes away
        after = later[i + 1] if i + 1 < len(later) else None
        if after is None:
            break
        if stored:  # the categories whose carry out moved (one change: a few), not every one
            moved, flow = moved_out(data or {"start": end}, stored)
            if not (moved or flow):
                i = _next_touched(later, touched, i)  # nor does any up to the next touched block
                end = old_end = None
                continue
            if after not in read:
                staged.ledger.prefetch((TOTAL, block_id(b)) for b in later[i + 1:])
                read.update(later[i + 1:])
            was_out = (staged.stored(TOTAL, block_id(after)) or {}).get("start") or through(stored)
            end, old_end = with_moved(was_out, moved, flow), was_out  # (the next block's start was its carry out)
        else:  # a new block: what came into it went straight through before
            out = through(data) if entries else end
            if out == old_end:
                i = _next_touched(later, touched, i)
                end = old_end = None
                continue
            end = out
        i += 1


def _next_touched(later: list[str], touched: set[str], i: int) -> int:
    return next((j for j in range(i + 1, len(later)) if later[j] in touched), len(later))


def _end_before(staged: Staging, earlier: list[str]) -> dict[str, Any]:
    """The carry out of the last of the ``earlier`` blocks that has a doc, staged again unchanged
    (so that a change to it meanwhile is a conflict, not a lost carry)."""
    for block in reversed(earlier):
        data = staged.peek(TOTAL, block_id(block))
        if data:
            staged.put(TOTAL, block_id(block), data)
            return through(data)
    return empty_start()


def _build(staged: Staging) -> None:
    """Stage the roll-up of what is stored (before this change), every doc a creation."""
    docs = rolled_up(_stored_months(staged, MONTH), [(i[2:], d) for i, d in _stored_months(staged, TOTAL)])
    staged.ledger.prefetch((TOTAL, ident) for ident in docs)
    for ident, data in docs.items():
        staged.put(TOTAL, ident, data)


def _stored_months(staged: Staging, kind: str) -> list[tuple[str, dict]]:
    found = (staged.ledger.get(kind, d.id) for d in staged.ledger.range(kind, "m." if kind == TOTAL else ""))
    return [(d.id, d.data) for d in found if d is not None and d.version]


def bound(staged: Staging, *, assume_built: bool = False) -> int:
    """At most how many roll-up docs :func:`stage` adds for what is staged (so a batch that must
    stay within ``MAX_DOC_WRITES`` can count them before it grows): the ledger doc, each touched
    year doc, the block doc before the first touched block and every block doc from that block
    on. 0 for a budget whose roll-ups are not built (nothing is kept until they are) unless
    ``assume_built``: then as many as after :func:`.rebuild.ensure_built` (whose own batches are
    not counted)."""
    touched = {m[:4] for m in (_month_of(k, i) for k, i in staged.docs) if m is not None}
    if not touched:
        return 0
    stored = staged.stored(TOTAL, LEDGER_ID)
    if is_built(stored):
        years = set((stored or {}).get("years") or [])
    elif assume_built:  # what a build from every stored month would hold
        years = {i[:4] for i, _ in _stored_months(staged, MONTH)} | {i[2:6] for i, _ in _stored_months(staged, TOTAL)}
    else:
        return 0
    return most_rollups(years, touched)


def most_rollups(years: set[str], touched: set[str]) -> int:
    """:func:`bound` of a change to months of the ``touched`` years in a budget whose ledger doc
    lists ``years``: the ledger doc, each touched year doc, the block doc before the first touched
    block and every block doc from that block on."""
    first = block_of(min(touched))
    return 2 + len(touched) + sum(1 for b in {block_of(y) for y in years | touched} if b >= first)


def counted(staged: Staging, writes: list[DocWrite], *, built: bool) -> int:
    """How many records a commit of ``writes`` (:meth:`.layout.Staged.writes`) counts against
    ``MAX_DOC_WRITES``: its roll-ups at the most they could be (:func:`bound`), not as many as
    this carry happens to move, so that a change planned while a later month absorbs its carry is
    not refused at its apply, after the person said yes, because another write meanwhile stopped
    that. A change that moves no net (an approval, say) rewrites no year and counts as it is;
    ``built``: whether the budget had its roll-ups (else they are counted as if it had)."""
    if built and not any(w.kind == TOTAL and w.id.startswith("y.") for w in writes):
        return len(writes)  # (a change that moves a net rewrites that net's year doc)
    rolled = sum(1 for w in writes if w.kind == TOTAL and is_rollup(w.id))
    return len(writes) - rolled + bound(staged, assume_built=True)
