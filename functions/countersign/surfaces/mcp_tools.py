"""The MCP surface: one ``MCPServer`` whose tools are the enabled toolsets plus the confirmation tools,
and one resource, the guide (``countersign://guide``).

Thin by design: each tool function reads who is calling and what the client can do, hands the
call to the gate, and shapes the answer. No business rule lives here.

Arguments reach the gate exactly as the client sent them. The SDK would otherwise validate them
against a model built from the function's signature first, in its lax mode, which turns ``"true"``
into ``True`` and drops names it does not know (``aproved: false`` would be ignored). Each tool
publishes its argument model's input schema, but receives the raw arguments; the gate checks them
strictly and refuses with sentences of its own (:mod:`countersign.gate.arguments`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import pydantic_core
from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources.types import TextResource
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.tools.tool_manager import ToolManager
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field

from .. import __version__
from ..core.cards import Refusal
from ..gate import ask as gate_ask
from ..gate.actions import Action, ActionError, Read
from ..gate.arguments import without_nulls
from ..gate.cards import CardDesk
from ..gate.context import Principal
from ..gate.offload import read_work
from ..store.errors import StoreError
from .mcp_auth import principal_of
from .mcp_guide import GUIDE_TITLE, GUIDE_URI, INSTRUCTIONS, SEE_GUIDE, guide
from .mcp_params import tool_call_shape

SERVER_NAME = "countersign"
MODERN = "2026-07-28"
QUESTION_TITLE = "Confirm these changes"
# The one question every era is asked: one boolean, unticked until the person ticks it.
CONFIRM_SCHEMA = {
    "type": "object",
    "title": QUESTION_TITLE,
    "properties": {"confirm": {"type": "boolean", "title": "Apply these changes", "default": False}},
    "required": ["confirm"],
}

Result = dict[str, Any] | InputRequiredResult
Run = Callable[..., Awaitable[Any]]


def build_server(desk: CardDesk, state_keys: list[bytes]) -> MCPServer:
    """An ``MCPServer`` whose tools are built when first asked for (:class:`ToolsOnDemand`): building
    the server imports no toolset and makes no tool, so a Lambda instance's cold start pays for
    neither, and its first ``tools/call`` builds only the tool it calls."""
    from .mcp_gateway import GatedServer

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
    before, and :class:`~countersign.surfaces.mcp_gateway.GatedServer` routes it."""

    def __init__(self, desk: CardDesk):
        super().__init__()
        self._desk = desk
        self._confirmations: list[str] | None = None

    def _confirmation_names(self) -> list[str]:
        if self._confirmations is None:
            from .mcp_confirmations import confirmation_tools

            built = confirmation_tools(self._desk)
            for tool in built:
                self._tools.setdefault(tool.name, tool)
            self._confirmations = [tool.name for tool in built]
        return self._confirmations

    def _make(self, name: str) -> Tool | None:
        registry = self._desk.registry
        action = registry.actions.get(name)
        if action is not None:
            return _action_tool(self._desk, action) if action.agent_tool else None
        read = registry.reads.get(name)
        if read is not None:
            return _read_tool(self._desk, read)
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


# -- tools that receive their arguments as sent ----------------------------------------------------


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


# -- actions ---------------------------------------------------------------------------------------


PASSKEY_NOTE = (" If the workspace's passkey policy covers the request, only the person's passkey on the confirm page "
                "confirms it: not a click alone, not an answer in your client, not a code.")


def _action_description(action: Action) -> str:
    gate = action.gate
    held = action.hold_rule or {
        "always": "Always waits for a person on the confirm page.",
        "client": "Waits for a person's yes: asked in your client when it can, else on the confirm page.",
        "never": "Runs at once.",
        "setting": f"Waits for a person on the confirm page while the workspace setting {gate.setting} is on "
                   "(the default).",
        "when": f"Waits for a person on the confirm page while {gate.label}; otherwise runs at once.",
    }[gate.kind]
    guide_pointer = "" if gate.kind == "never" and not action.hold_rule else f" {SEE_GUIDE}"
    passkey = "" if gate.kind == "never" and not action.hold_rule else PASSKEY_NOTE
    return f"{action.description} {held}{passkey}{guide_pointer}".strip()


def _client_can(ctx: Context) -> tuple[bool, bool, bool]:
    """(modern protocol, form elicitation declared, URL elicitation declared)."""
    modern = is_version_at_least(ctx.protocol_version or "", MODERN)
    caps = ctx.client_capabilities
    elicitation = getattr(caps, "elicitation", None) if caps else None
    if elicitation is None:
        return modern, False, False
    form = elicitation.form is not None or (elicitation.form is None and elicitation.url is None)
    return modern, form, elicitation.url is not None


def _answer(action: str | None, content: dict[str, Any] | None) -> str:
    if action == "accept":
        return gate_ask.ACCEPT if (content or {}).get("confirm") is True else gate_ask.UNTICKED
    if action == "decline":
        return gate_ask.DECLINE
    return gate_ask.CANCEL


def _answer_of(ctx: Context) -> str:
    response = (ctx.input_responses or {}).get("confirm")
    return _answer(getattr(response, "action", None), getattr(response, "content", None))


def _legacy_back_channel(ctx: Context, modern: bool):
    """Questions put during the call, on a 2025-era stateful session. A client that fails to show
    one counts as having dismissed it: the call falls back, and the agent still gets its reply."""
    if modern or not ctx.request_context.session.can_send_request:
        return None, None
    session = ctx.request_context.session

    async def elicit_form(message: str) -> str:
        try:
            answer = await session.elicit_form(message, CONFIRM_SCHEMA, related_request_id=ctx.request_id)
        except MCPError:
            return gate_ask.CANCEL
        return _answer(answer.action, answer.content)

    async def elicit_url(message: str, url: str, elicitation_id: str) -> str:
        try:
            answer = await session.elicit_url(message, url, elicitation_id, related_request_id=ctx.request_id)
        except MCPError:
            return gate_ask.CANCEL
        return answer.action

    return elicit_form, elicit_url


def _as_result(reply: gate_ask.Reply) -> Result:
    if isinstance(reply, gate_ask.Done):
        return reply.payload
    params = ElicitRequestFormParams(message=reply.message, requested_schema=CONFIRM_SCHEMA)
    return InputRequiredResult(input_requests={"confirm": ElicitRequest(params=params)},
                               request_state=json.dumps(reply.state, separators=(",", ":")))


def action_run(desk: CardDesk, name: str, *, codes: bool = True, keep_nulls: bool = False) -> Run:
    """What calling the action ``name`` does: hand it to the gate with what the client can do.
    ``codes``: a ``confirmation`` argument is a confirmation code passed back (an upstream tool's
    own argument of that name is its own, unless this server confirms with codes). ``keep_nulls``:
    a null argument is a value to pass on (an upstream tool's), not one left out."""

    async def run(arguments: dict[str, Any], ctx: Context) -> Result:
        raw = dict(arguments) if keep_nulls else without_nulls(arguments)
        code = raw.pop("confirmation", None) if codes else None
        if code is not None and not isinstance(code, str):
            raise ToolError("confirmation: must be text: the code from the preview, passed back after the person "
                            "agreed. Nothing was written.")
        modern, form, url = _client_can(ctx)
        elicit_form, elicit_url = _legacy_back_channel(ctx, modern)
        state = None
        if ctx.request_state is not None:
            try:
                state = json.loads(ctx.request_state)
            except ValueError:
                raise ToolError("The request state is not one this server issued.") from None
        call = gate_ask.Call(
            principal=caller(ctx), tool=name, arguments=raw, modern=modern,
            form_elicitation=form, url_elicitation=url, elicit_form=elicit_form, elicit_url=elicit_url,
            answer=_answer_of(ctx) if state is not None else None, state=state, confirmation=code,
        )
        try:
            return _as_result(await gate_ask.ask(desk, call))
        except (ActionError, Refusal, StoreError) as exc:
            raise tool_error(exc) from None

    return run


def _action_tool(desk: CardDesk, action: Action) -> Tool:
    confirmation = inspect.Parameter(
        "confirmation", inspect.Parameter.KEYWORD_ONLY, default=None,
        annotation=Annotated[str | None, Field(description=(
            "Only with confirmation codes: the code from the preview, passed back after the person agreed."))],
    )
    run = action_run(desk, action.name)
    title = action.title or (f"Running {action.name}" if action.gate.kind == "never"
                             else f"Preparing a confirmation of {action.name}")
    annotations = ToolAnnotations(title=title, read_only_hint=False,
                                  destructive_hint=action.destructive, idempotent_hint=False, open_world_hint=False)
    return make_tool(run, name=action.name, title=title, description=_action_description(action),
                     annotations=annotations, model=action.arguments, extra=[confirmation])


def _read_tool(desk: CardDesk, read: Read) -> Tool:
    async def run(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        principal = caller(ctx)
        try:
            args = read.parse(without_nulls(arguments))
            # off the event loop until it has proven light, in this workspace (a read light for a
            # small budget may not be for a big one): it never holds up the calls beside it
            # (countersign.gate.offload)
            return await read_work(f"{principal.workspace.id}:{read.name}",
                                   lambda: read.run(args, gate_ask.context_for(desk, principal)))
        except (ActionError, StoreError) as exc:
            raise tool_error(exc) from None

    title = read.title or f"Reading {read.name}"
    annotations = ToolAnnotations(title=title, read_only_hint=True, destructive_hint=False,
                                  idempotent_hint=True, open_world_hint=False)
    return make_tool(run, name=read.name, title=title, description=read.description, annotations=annotations,
                     model=read.arguments, returns=dict[str, Any])
