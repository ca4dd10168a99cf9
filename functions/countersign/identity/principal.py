"""Who an MCP request comes from."""

from __future__ import annotations

from dataclasses import dataclass

from ..store.records import Connection, Person, Workspace


@dataclass(frozen=True)
class Principal:
    """The identity behind an MCP request: one connection of one person in one workspace."""

    workspace: Workspace
    person: Person
    connection: Connection
