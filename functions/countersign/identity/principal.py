"""Who an MCP request comes from."""

from __future__ import annotations

from dataclasses import dataclass

from ..store.connections import Connection
from ..store.workspaces import Person, Workspace


@dataclass(frozen=True)
class Principal:
    """The identity behind an MCP request: one connection of one person in one workspace."""

    workspace: Workspace
    person: Person
    connection: Connection
