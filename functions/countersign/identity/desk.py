"""The gate's card desk as identity sees it: what ending a connection or a membership, and the
OAuth consent, need of the engine above — its store, clock and settings, and withdrawing the cards
still waiting on a person. The gate's ``CardDesk`` is one; identity stands below the gate and
imports none of it."""

from __future__ import annotations

from typing import Protocol

from ..settings import Settings
from ..store import Store


class Desk(Protocol):
    @property
    def store(self) -> Store:  # whole: removing a member and an OAuth Allow each use four roles
        ...

    @property
    def settings(self) -> Settings: ...

    def now(self) -> int: ...

    def withdraw_waiting(self, workspace_id: str, person_id: str, actor: str, channel: str, reason: str,
                         connection_id: str | None = None) -> int:
        """Withdraw every card still waiting on ``person_id`` (only those filed through
        ``connection_id``, if given): how many."""
        ...
