"""Building the roll-ups (:mod:`.rollup`) of a budget that has none, and repairing them.

The ``ledger`` doc says the roll-ups are built: reads trust the year and block docs only while
it exists in this layout (:data:`.rollup.LAYOUT`), and a writer keeps them only then. So a build
writes every year and block doc first, in as many batches as it takes (each a conditional write
of the version it read), and the ledger doc **last** (a creation, or over one in an older
layout): a build cut short (a crash, a timeout) leaves no ledger doc in this layout, reads keep
adding up the months, and the next writer (or ``countersign budget upgrade``) builds again from
the start, overwriting what the cut-short one wrote. Two builders racing: each write names the
version it read, so one is refused (:class:`~countersign.store.errors.Conflict`) and reads again.

A budget change never carries a build in its own commit: :func:`ensure_built` runs first, as its
own batches (:func:`.operations.commit`, the importer), so the change's commit stays within
``MAX_DOC_WRITES`` and is one transaction.
"""

from __future__ import annotations

from typing import Any

from ...toolkit import MAX_DOC_WRITES, Conflict, Doc, DocStore, DocWrite
from .keys import LEDGER_ID
from .model import MONTH, TOTAL, Ledger
from .rollup import built_ledger, rolled_up

ATTEMPTS = 5


def expected(ledger: Ledger) -> dict[str, dict[str, Any]]:
    """Every roll-up doc (by id) the stored budget months and month totals give."""
    months = [(d.id, d.data) for d in ledger.range(MONTH)]
    totals = [(d.id[2:], d.data) for d in ledger.range(TOTAL, "m.")]
    return rolled_up(months, totals)


def stored_rollups(ledger: Ledger) -> dict[str, Doc]:
    """Every stored roll-up doc (by id), in whatever layout."""
    found = [ledger.get(TOTAL, LEDGER_ID), *ledger.range(TOTAL, "e."), *ledger.range(TOTAL, "y.")]
    return {d.id: d for d in found if d is not None}


def _build_writes(ledger: Ledger) -> list[DocWrite]:
    """The writes that make the stored roll-ups what the months give: every year and block doc
    that differs (or should not exist), each naming the version read, and the ledger doc last."""
    want = expected(ledger)
    stored = stored_rollups(ledger)
    old_ledger = stored.pop(LEDGER_ID, None)
    writes = []
    for ident, data in sorted(want.items()):
        if ident == LEDGER_ID:
            continue
        old = stored.pop(ident, None)
        if old is None or old.data != data:
            writes.append(DocWrite(TOTAL, ident, data, old.version if old else 0))
    writes += [DocWrite(TOTAL, ident, None, old.version) for ident, old in sorted(stored.items())]
    writes.append(DocWrite(TOTAL, LEDGER_ID, want[LEDGER_ID], old_ledger.version if old_ledger else 0))
    return writes


def ensure_built(store: DocStore, workspace_id: str) -> bool:
    """Build the roll-ups of a budget without a ledger doc in this layout (year and block docs
    first, in batches of at most ``MAX_DOC_WRITES``; the ledger doc in the last). Returns
    whether this call built them (False: they were there, or another writer built them
    meanwhile). Raises :class:`Conflict` only if every attempt raced another writer."""
    for _ in range(ATTEMPTS):
        ledger = Ledger(store, workspace_id)
        if built_ledger(ledger) is not None:
            return False
        writes = _build_writes(ledger)
        try:
            for start in range(0, len(writes), MAX_DOC_WRITES):
                store.write_docs(workspace_id, writes[start:start + MAX_DOC_WRITES])
        except Conflict:
            continue  # another builder (or writer) got there first: look again
        return True
    raise Conflict("the budget's roll-ups were being built by another writer; try again")


def is_consistent(ledger: Ledger) -> bool:
    """Whether the stored roll-ups are built and are exactly what the budget months and month
    totals give."""
    if built_ledger(ledger) is None:
        return False
    return {i: d.data for i, d in stored_rollups(ledger).items()} == expected(ledger)


def rebuild(store: DocStore, workspace_id: str) -> bool:
    """Repair roll-ups that disagree with the months (year docs missing or stale: a build cut short
    by an older version, or months written by a version that did not keep the roll-ups): the
    ledger doc goes first (reads add up the months meanwhile, and are right), then they are built
    again. Returns whether anything was repaired; a budget whose roll-ups agree is left alone."""
    for _ in range(ATTEMPTS):
        ledger = Ledger(store, workspace_id)
        rolled = built_ledger(ledger)
        if rolled is None:
            return ensure_built(store, workspace_id)
        if is_consistent(ledger):
            return False
        try:
            store.write_docs(workspace_id, [DocWrite(TOTAL, LEDGER_ID, None, rolled.version)])
        except Conflict:
            continue
        ensure_built(store, workspace_id)
        return True
    raise Conflict("the budget was being written meanwhile; run the repair again")
