"""The tools the gate serves: every enabled toolset's actions and reads, by tool name."""

from __future__ import annotations

from collections.abc import Callable

from ..toolkit.actions import Action, ActionError, Read, Toolset


class Registry:
    """The actions and reads of every enabled toolset, by tool name.

    ``toolsets`` may be a function giving them: they are then imported the first time a tool is
    looked up (a function that only sometimes plans, like the confirm API, does not pay for every
    toolset's import on every cold start)."""

    def __init__(self, toolsets: list[Toolset] | Callable[[], list[Toolset]]):
        self._source = toolsets
        self._toolsets: list[Toolset] | None = None
        self._actions: dict[str, Action] = {}
        self._reads: dict[str, Read] = {}
        if not callable(toolsets):
            self._load()

    def _load(self) -> None:
        if self._toolsets is not None:
            return
        toolsets = list(self._source() if callable(self._source) else self._source)
        for ts in toolsets:
            for a in ts.actions:
                self._claim(a.name)
                self._actions[a.name] = a
            for r in ts.reads:
                self._claim(r.name)
                self._reads[r.name] = r
        self._toolsets = toolsets

    @property
    def toolsets(self) -> list[Toolset]:
        self._load()
        assert self._toolsets is not None
        return self._toolsets

    @property
    def actions(self) -> dict[str, Action]:
        self._load()
        return self._actions

    @property
    def reads(self) -> dict[str, Read]:
        self._load()
        return self._reads

    def _claim(self, name: str) -> None:
        if name in self._actions or name in self._reads:
            raise ValueError(f"two toolsets define the tool {name!r}")

    def action(self, name: str) -> Action:
        try:
            return self.actions[name]
        except KeyError:
            for ts in self.toolsets:
                found = ts.resolve(name) if ts.resolve and name not in self.reads else None
                if found is not None:
                    return found
            if name in self.reads:
                raise ActionError(
                    f"{name} is a read: it runs at once and has nothing to confirm.", field="tool"
                ) from None
            raise ActionError(f"Unknown tool {name!r}.", field="tool") from None

    def agent_action(self, name: str) -> Action:
        """:meth:`action`, for a request an agent makes (a tool call, ``request_confirmation``, a
        code passed back): an action that is no MCP tool (``agent_tool = False``: a gateway change,
        filed only by the CLI or the Settings page) is an unknown tool to an agent, whatever path
        it names it by."""
        action = self._actions.get(name) if self._toolsets is not None else None  # loaded: one lookup
        if action is None:
            action = self.action(name)
        if not action.agent_tool:
            raise ActionError(f"Unknown tool {name!r}.", field="tool")
        return action
