"""Upstream tools on the MCP surface: each workspace sees its own upstreams' approved tools.

The server's own tools are registered once; upstream tools differ per workspace, so
:class:`GatedServer` adds the caller's to ``tools/list`` (from the approved snapshot in the store:
listing asks no upstream) and routes a call of ``server__tool`` here. A read runs at once and its
result is passed through as the upstream gave it; every other call goes to the gate like a
built-in action (:func:`countersign.surfaces.mcp.actions.action_run`). Held tools are listed without
their output schema: a held reply is countersign's, not the upstream's.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    TextContent,
    Tool,
    ToolAnnotations,
)

from ...gate.ask import context_for
from ...gate.desk import CardDesk
from ...identity.principal import Principal
from ...store.errors import StoreError
from ...toolkit import ActionError
from .actions import action_run
from .auth import principal_of

HOLDS = {"read": "Runs at once: it only reads.",
         "held": "Waits for a person on the confirm page.",
         "client": "Waits for a person's yes: asked in your client when it can, else on the confirm page."}


def upstream_tools(desk: CardDesk, principal: Principal) -> list[Tool]:
    from ...toolsets.gateway.config import SEPARATOR, load_all  # the toolset on first use, not at a cold start

    ctx = context_for(desk, principal)
    tools = []
    for upstream in load_all(ctx):
        for name, pin in sorted(upstream.tools.items()):
            d = pin.definition
            hints = d.get("annotations")
            tools.append(Tool(
                name=f"{upstream.name}{SEPARATOR}{name}", title=d.get("title"),
                description=f"{d.get('description') or ''} (From {upstream.name}.) {HOLDS[pin.cls]}".strip(),
                input_schema=d.get("inputSchema") or {"type": "object"},
                output_schema=d.get("outputSchema") if pin.cls == "read" else None,
                annotations=ToolAnnotations.model_validate(hints) if hints else None,
            ))
    return tools


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


async def _read(desk: CardDesk, principal: Principal, name: str, arguments: dict[str, Any]) -> CallToolResult:
    # the toolset on first use, not at a cold start
    from ...toolsets.gateway import client
    from ...toolsets.gateway.action import UpstreamCall, check_arguments, pin_check, resolve

    ctx = context_for(desk, principal)
    upstream, tool, pin = resolve(ctx, name)
    check_arguments(pin, arguments)
    action = desk.registry.action(name)
    assert isinstance(action, UpstreamCall)
    link = action.env.link(upstream)
    try:
        result = await client.call(link, tool, arguments, pin_check(upstream.name, tool, pin))
    except client.UpstreamError as exc:
        return _error(exc.message)
    return CallToolResult.model_validate(result)


def _no_cursor(method: str, params: Any) -> None:
    """Every list here is one page (no ``nextCursor``), so a cursor is one this server never issued:
    the spec's -32602, not the whole list again as if it were the next page."""
    if params is not None and getattr(params, "cursor", None) is not None:
        raise MCPError(INVALID_PARAMS, f"Invalid params: params.cursor is not one this server issued ({method} "
                       "returns everything in one page, with no nextCursor); call it without a cursor.")


class GatedServer(MCPServer):
    def __init__(self, desk: CardDesk, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._desk = desk

    async def _handle_list_tools(self, ctx, params) -> ListToolsResult:
        _no_cursor("tools/list", params)
        listed = await super()._handle_list_tools(ctx, params)
        principal = principal_of(ctx.request)
        if principal is not None:
            listed.tools.extend(upstream_tools(self._desk, principal))
        return listed

    async def _handle_list_resources(self, ctx, params):
        _no_cursor("resources/list", params)
        return await super()._handle_list_resources(ctx, params)

    async def _handle_list_resource_templates(self, ctx, params):
        _no_cursor("resources/templates/list", params)
        return await super()._handle_list_resource_templates(ctx, params)

    async def _handle_list_prompts(self, ctx, params):
        _no_cursor("prompts/list", params)
        return await super()._handle_list_prompts(ctx, params)

    async def _handle_call_tool(self, ctx, params) -> CallToolResult | InputRequiredResult:
        # the toolset on first use, not at a cold start
        from ...toolsets.gateway.action import resolve
        from ...toolsets.gateway.config import split_tool

        if self._tool_manager.get_tool(params.name) is not None or split_tool(params.name) is None:
            return await super()._handle_call_tool(ctx, params)
        principal = principal_of(ctx.request)
        if principal is None:
            return _error("This call carries no valid connection token.")
        arguments = dict(params.arguments or {})  # passed on as the agent gave them, nulls included
        try:
            _, _, pin = resolve(context_for(self._desk, principal), params.name)
            if pin.cls == "read":
                return await _read(self._desk, principal, params.name, arguments)
            context = Context(request_context=ctx, mcp_server=self, input_params=params,
                              subscriptions=self._subscriptions)
            codes = self._desk.settings.fallback == "code"  # else `confirmation` is the upstream tool's own argument
            reply = await action_run(self._desk, params.name, codes=codes, keep_nulls=True)(arguments, context)
        except (ActionError, StoreError) as exc:
            return _error(exc.message)
        except ToolError as exc:
            return _error(str(exc))
        if isinstance(reply, InputRequiredResult):
            return reply
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(reply, ensure_ascii=False))],
                              structured_content=reply)
