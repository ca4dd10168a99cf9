"""The MCP server: one ``MCPServer`` (:class:`~.gateway.GatedServer`) whose tools are the enabled
toolsets' actions and reads plus the confirmation tools, each made on first use
(:class:`ToolsOnDemand`), the caller's upstream tools beside them, and one resource, the guide
(``countersign://guide``).

Thin by design: each tool function reads who is calling and what the client can do, hands the
call to the gate, and shapes the answer. No business rule lives here. This module composes the
others of the folder; none of them imports it.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer, RequestStateSecurity
from mcp.server.mcpserver.resources.types import TextResource
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.tools.tool_manager import ToolManager

from ... import __version__
from ...gate.desk import CardDesk
from .actions import action_tool, read_tool
from .auth import principal_of
from .confirmations import confirmation_tools
from .gateway import GatedServer
from .guide import GUIDE_TITLE, GUIDE_URI, INSTRUCTIONS, guide
from .params import tool_call_shape

SERVER_NAME = "countersign"


def build_server(desk: CardDesk, state_keys: list[bytes]) -> MCPServer:
    """An ``MCPServer`` whose tools are built when first asked for (:class:`ToolsOnDemand`): building
    the server imports no toolset and makes no tool, so a Lambda instance's cold start pays for
    neither, and its first ``tools/call`` builds only the tool it calls."""
    security = RequestStateSecurity(keys=state_keys, ttl=900, bind_principal=_principal_binding)
    resource = TextResource(uri=GUIDE_URI, name="guide", title=GUIDE_TITLE, mime_type="text/markdown",
                            description="When a person is asked, what each status means, and what calling again does.",
                            text=guide(desk.settings))
    server = GatedServer(desk, SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, tools=[],
                         resources=[resource], request_state_security=security, subscriptions=False,
                         middleware=[tool_call_shape])
    server._tool_manager = ToolsOnDemand(desk)
    return server


class ToolsOnDemand(ToolManager):
    """The server's own tools, each made the first time it is looked up and kept: the enabled
    toolsets' agent actions, then their reads, then the confirmation tools, listed in that order
    (what ``tools/list`` returns is the same whenever, and however often, it is built).

    A name that is none of these (an upstream's ``server__tool``, or unknown) is ``None``, as
    before, and :class:`~countersign.surfaces.mcp.gateway.GatedServer` routes it."""

    def __init__(self, desk: CardDesk):
        super().__init__()
        self._desk = desk
        self._confirmations: list[str] | None = None

    def _confirmation_names(self) -> list[str]:
        if self._confirmations is None:
            built = confirmation_tools(self._desk)
            for tool in built:
                self._tools.setdefault(tool.name, tool)
            self._confirmations = [tool.name for tool in built]
        return self._confirmations

    def _make(self, name: str) -> Tool | None:
        registry = self._desk.registry
        action = registry.actions.get(name)
        if action is not None:
            return action_tool(self._desk, action) if action.agent_tool else None
        read = registry.reads.get(name)
        if read is not None:
            return read_tool(self._desk, read)
        self._confirmation_names()
        return self._tools.get(name)

    def get_tool(self, name: str) -> Tool | None:
        tool = self._tools.get(name)
        if tool is None:
            tool = self._make(name)
            if tool is not None:
                self._tools[name] = tool
        return tool

    def list_tools(self) -> list[Tool]:
        registry = self._desk.registry
        names = [name for name, action in registry.actions.items() if action.agent_tool]
        names += list(registry.reads)
        names += self._confirmation_names()
        return [tool for tool in map(self.get_tool, dict.fromkeys(names)) if tool is not None]

    def add_tool(self, *args: Any, **kwargs: Any) -> Tool:
        raise TypeError("countersign's tools come from the registry and the confirmation tools; none is added later")


def _principal_binding(ctx) -> str | None:
    principal = principal_of(getattr(ctx, "request", None))
    return None if principal is None else f"{principal.workspace.id}/{principal.connection.id}"
