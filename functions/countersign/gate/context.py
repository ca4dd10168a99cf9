"""Who is calling and what they act on: handed to every plan, apply and read."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..store.interface import Store
from ..store.records import Connection, Person, Workspace


@dataclass(frozen=True)
class Principal:
    """The identity behind an MCP request: one connection of one person in one workspace."""

    workspace: Workspace
    person: Person
    connection: Connection


@dataclass(frozen=True)
class ActionContext:
    """What a toolset may use: the store (through its interface), the workspace, the person the
    card waits on (who confirms it), the connection that asked, and the time of the call."""

    store: Store
    workspace: Workspace
    person: Person
    connection: Connection | None
    now: int

    @property
    def workspace_id(self) -> str:
        return self.workspace.id

    def refreshed(self, now: int) -> "ActionContext":
        """The same caller at a later time, with the workspace settings read again."""
        return replace(self, now=now, workspace=self.store.get_workspace(self.workspace.id))
