"""Who is calling and what they act on: handed to every plan, apply and read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..store.connections import Connection
from ..store.docs import DocReader
from ..store.workspaces import Person, Workspace, WorkspaceStore


@dataclass(frozen=True)
class ActionContext:
    """What a toolset may use: its documents (read only: writes go back to the gate in an
    :class:`~countersign.toolkit.effects.Effect`), the workspace, the person the card waits on (who
    confirms it), the connection that asked, the time of the call, and the workspace's members."""

    store: DocReader
    workspace: Workspace
    person: Person
    connection: Connection | None
    now: int
    # How members and the workspace record are read again (the gate passes its account store).
    load_members: Callable[[str], list[Person]] | None = field(default=None, compare=False, repr=False)
    load_workspace: Callable[[str], Workspace] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def reading(cls, docs: DocReader, workspaces: WorkspaceStore, workspace: Workspace, person: Person,
                connection: Connection | None, now: int) -> ActionContext:
        """A context reading ``docs``, and members and the workspace record from ``workspaces``."""
        return cls(docs, workspace, person, connection, now, load_members=workspaces.list_persons,
                   load_workspace=workspaces.get_workspace)

    @property
    def workspace_id(self) -> str:
        return self.workspace.id

    def members(self) -> list[Person]:
        """Every member of the workspace, ordered by when they joined."""
        if self.load_members is None:
            return [self.person]
        return self.load_members(self.workspace.id)

    def refreshed(self, now: int) -> ActionContext:
        """The same caller at a later time, with the workspace (settings, name) read again."""
        workspace = self.load_workspace(self.workspace.id) if self.load_workspace else self.workspace
        return replace(self, now=now, workspace=workspace)
