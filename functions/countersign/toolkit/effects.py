"""What an action's ``apply`` returns: its effect, for the gate to commit with the card.

An action never writes. ``apply(plan, ctx)`` returns an :class:`Effect` — the result the agent
sees and the writes that make it true — and the gate commits those writes in the same transaction
as the card's move to ``completed`` and its audit entry (on SQLite one ``BEGIN IMMEDIATE``, on
DynamoDB one ``TransactWriteItems``). So a confirmed request runs exactly once: either everything
committed together, or nothing did and the card still waits. If a write's expectation failed (a
document moved between the read and the commit), the gate plans again from fresh state and, if
what the person saw is unchanged, stages and commits again.

* :meth:`Effect.writes` — the common case: one set of writes, committed with the card.
* :class:`Phase` — an effect in steps that must stand on their own (the mail toolset's launch:
  publishing runs first, so designs stay published if the launch then stops). Each phase commits
  atomically with a progress mark on the card; after a crash the card says exactly which steps ran.
* :class:`Outside` — an effect outside the store (a payment API, a mail house). It is called with
  an idempotency key derived from the card (:attr:`Outside.call` receives it), before the store's
  writes; a retry after a crash calls it again with the same key, so the outside service sees one
  request, and the store's writes then commit once. An outside service with no idempotency key
  (an upstream MCP server) is ``resumable=False``: a crash after the call was sent closes the card
  as *outcome unknown* instead, and the call is never made again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..store.docs import Write


@dataclass(frozen=True)
class Phase:
    """Writes committed together, as one named step of an effect."""

    label: str  # what this step does, for a person ("publish the design ‘Spring’ v2")
    writes: tuple[Write, ...] = ()
    failure: str | None = None  # said instead of the drift sentence when this step's writes moved


@dataclass(frozen=True)
class Outside:
    """A call to something outside the store, made once per card: ``call(idempotency_key)``
    returns a dict merged into the result. The key is the same on every retry of the same card;
    pass it to the outside service's idempotency header or field."""

    label: str
    call: Callable[[str], dict[str, Any]] = field(compare=False)
    resumable: bool = True  # False: no idempotency key upstream; after a crash, never call again


@dataclass(frozen=True)
class Effect:
    result: dict[str, Any]
    phases: tuple[Phase, ...] = ()
    outside: Outside | None = None

    @classmethod
    def writes(cls, result: dict[str, Any], writes: Sequence[Write] = (), label: str = "") -> Effect:
        """The common effect: ``writes`` committed with the card, ``result`` for the agent."""
        return cls(result, (Phase(label, tuple(writes)),))

    @property
    def steps(self) -> list[str]:
        """The labels of every step, outside call first (what a card reports after a crash)."""
        return ([self.outside.label] if self.outside else []) + [p.label for p in self.phases]

    @property
    def single(self) -> bool:
        """One commit does it all: no outside call, at most one phase."""
        return self.outside is None and len(self.phases) <= 1

    def all_writes(self) -> tuple[Write, ...]:
        return tuple(w for p in self.phases for w in p.writes)
