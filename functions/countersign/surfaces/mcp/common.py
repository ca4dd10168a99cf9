"""What every tool of the MCP surface shares: a tool made from an argument model that receives its
arguments as sent (:func:`make_tool`), who is calling (:func:`caller`), and how a refusal reaches the
agent (:func:`tool_error`).

Arguments reach the gate exactly as the client sent them. The SDK would otherwise validate them
against a model built from the function's signature first, in its lax mode, which turns ``"true"``
into ``True`` and drops names it does not know (``aproved: false`` would be ignored). Each tool
publishes its argument model's input schema, but receives the raw arguments; the gate checks them
strictly and refuses with sentences of its own (:mod:`countersign.toolkit.arguments`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import pydantic_core
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp_types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from ...core.card_states import Refusal
from ...identity.principal import Principal
from ...store.errors import StoreError
from ...toolkit import ActionError
from .auth import principal_of

Result = dict[str, Any] | InputRequiredResult
Run = Callable[..., Awaitable[Any]]


class _AsSent(FuncMetadata):
    """Hands a tool its arguments untouched, as ``arguments`` (see the module docstring)."""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        return {"arguments": arguments_to_validate}

    def convert_result(self, result: Any) -> CallToolResult | InputRequiredResult:
        """As the SDK converts a tool's result, but with the structured content's text copy as
        compact JSON: the SDK indents it by two spaces, which adds about a third to a
        listing's bytes, to be sent and parsed (and, by a host that shows the text to its
        model, read) for the same content."""
        if isinstance(result, dict) and self.output_schema is not None and not self.wrap_output:
            text = pydantic_core.to_json(result, fallback=str).decode()
            result = CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)
        return super().convert_result(result)


def _signature_of(model: type[BaseModel], extra: list[inspect.Parameter], returns: Any) -> inspect.Signature:
    params = []
    for name, info in model.model_fields.items():
        # A default factory stays inside the FieldInfo (pydantic refuses both); a plain default is
        # mirrored on the parameter so the schema marks the field optional.
        default = inspect.Parameter.empty if info.is_required() or info.default_factory else info.default
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                        annotation=Annotated[info.annotation, info], default=default))
    params.extend(extra)
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))
    return inspect.Signature(params, return_annotation=returns)


def make_tool(run: Run, *, name: str, title: str, description: str, annotations: ToolAnnotations,
              model: type[BaseModel], extra: list[inspect.Parameter] | None = None, returns: Any = Result) -> Tool:
    """A tool that publishes ``model``'s input schema (unknown names refused) and calls
    ``run(arguments=<as sent>, ctx=<Context>)``."""

    async def shape(**kwargs: Any) -> Any:  # pragma: no cover - only its signature is read
        raise NotImplementedError

    shape.__signature__ = _signature_of(model, extra or [], returns)  # type: ignore[attr-defined]
    shape.__annotations__ = {"ctx": Context, "return": returns}
    shape.__name__ = name
    built = Tool.from_function(shape, name=name, title=title or None, description=description,
                               annotations=annotations)
    meta = built.fn_metadata
    as_sent = _AsSent(arg_model=meta.arg_model, output_schema=meta.output_schema, output_model=meta.output_model,
                      wrap_output=meta.wrap_output)
    parameters = dict(built.parameters, additionalProperties=False)
    return built.model_copy(update={"fn": run, "fn_metadata": as_sent, "parameters": parameters})


def caller(ctx: Context) -> Principal:
    principal = principal_of(ctx.request_context.request)
    if principal is None:  # the auth middleware runs first; this is defence in depth
        raise ToolError("This call carries no valid connection token.")
    return principal


def tool_error(exc: Exception) -> ToolError:
    if isinstance(exc, (ActionError, Refusal, StoreError)):
        return ToolError(exc.message)
    return ToolError(str(exc))
