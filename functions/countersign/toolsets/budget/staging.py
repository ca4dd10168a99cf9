"""Staging a change: working copies of the docs it touches, with the versions they were read at,
and :func:`add_into`, the arithmetic of the totals kept in them.

:class:`Staging` knows nothing of what the docs hold. The modules that keep a kind of doc change
its working copies through it: :mod:`.attention` (a month's transactions needing attention) and
:mod:`.rollup` (the roll-ups), and above them :class:`.layout.Staged`, the one way a change to
the ledger is written (its transactions in chunks, the totals beside them, then those two).
"""

from __future__ import annotations

from typing import Any

from ...core.canonical import json_copy
from .model import Ledger


class Staging:
    """Working copies of the docs a change touches, with the versions they were read at."""

    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self.docs: dict[tuple[str, str], dict[str, Any] | None] = {}
        self.versions: dict[tuple[str, str], int] = {}

    def working_copy(self, kind: str, doc_id: str, data: dict[str, Any]) -> dict[str, Any]:
        """A copy of a stored doc's data to change in place: a deep one, unless a subclass knows
        that a kind's parts are only ever replaced, never changed in place."""
        return json_copy(data)

    def get(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        """The working copy of a doc (None: absent), made the first time it is asked for."""
        key = (kind, doc_id)
        if key not in self.docs:
            doc = self.ledger.get(kind, doc_id)
            self.versions[key] = doc.version if doc else 0
            self.docs[key] = self.working_copy(kind, doc_id, doc.data) if doc and doc.version else None
        return self.docs[key]

    def put(self, kind: str, doc_id: str, data: dict[str, Any] | None) -> None:
        key = (kind, doc_id)
        if key not in self.docs:  # the version it was read at (no working copy: it is replaced)
            doc = self.ledger.get(kind, doc_id)
            self.versions[key] = doc.version if doc else 0
        self.docs[key] = data

    def peek(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        """A doc as staged so far, without staging it (so it is not written)."""
        if (kind, doc_id) in self.docs:
            return self.docs[(kind, doc_id)]
        return self.stored(kind, doc_id)

    def stored(self, kind: str, doc_id: str) -> dict[str, Any] | None:
        """A doc as the ledger read it (None: absent)."""
        doc = self.ledger.get(kind, doc_id)
        return doc.data if doc and doc.version else None


def add_into(target: dict[str, Any], delta: dict[str, Any], sign: int) -> None:
    """``target += sign * delta``, nested; entries that reach zero are dropped."""
    for key, value in delta.items():
        if isinstance(value, dict):
            inner = target.setdefault(key, {})
            add_into(inner, value, sign)
            if not inner:
                del target[key]
        else:
            total = target.get(key, 0) + sign * value
            if total:
                target[key] = total
            else:
                target.pop(key, None)
