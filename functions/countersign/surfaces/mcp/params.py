"""A ``tools/call`` whose ``params`` are the wrong shape gets a sentence naming the field.

The MCP SDK validates request params with a model and, on failure, answers ``-32602 Invalid
request parameters`` with no detail (it deliberately keeps pydantic's text off the wire). That
leaves an agent that sent ``"arguments": "note_id=n1"`` guessing. This server middleware looks at
the raw params of ``tools/call`` before the SDK does and refuses, with the same code, saying which
field is wrong and what it must be. Nothing has been written at that point, and the message says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

NOTHING_WRITTEN = "Nothing was written."


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "null" if value is None else type(value).__name__


def shape_problem(params: Any) -> str | None:
    """The sentence for ``tools/call`` params that no tool could accept, or None when their shape is
    right (each tool then checks its own arguments strictly)."""
    if not isinstance(params, Mapping):
        return f"params: must be an object with the tool's name and its arguments, got {_kind(params)}."
    name = params.get("name")
    if not isinstance(name, str) or not name:
        return "params.name: required, the name of the tool to call (a string, as tools/list names it)."
    if "arguments" in params and params["arguments"] is not None and not isinstance(params["arguments"], Mapping):
        return (f"params.arguments: must be an object mapping each argument's name to its value "
                f"(e.g. {{\"note_id\": \"n1\"}}), got {_kind(params['arguments'])}.")
    return None


async def tool_call_shape(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware (``MCPServer(middleware=[...])``): see the module docstring."""
    if ctx.method == "tools/call" and ctx.request_id is not None:
        problem = shape_problem(ctx.params)
        if problem is not None:
            raise MCPError(code=INVALID_PARAMS, message=f"Invalid params: {problem} {NOTHING_WRITTEN}",
                           data={"field": problem.split(":", 1)[0]})
    return await call_next(ctx)
