"""Who an MCP request comes from."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..store.connections import Connection
from ..store.limits import RequestCounts
from ..store.workspaces import Person, Workspace


@dataclass(frozen=True)
class Principal:
    """The identity behind an MCP request: one connection of one person in one workspace.

    ``counts``: this request's counts against the request limits (docs/operations.md, "Request
    limits"), read with the connection; the gate's question and answers carry them on to the
    write that files or answers the request's card, which takes them in its transaction."""

    workspace: Workspace
    person: Person
    connection: Connection
    counts: RequestCounts | None = field(default=None, compare=False, repr=False)
