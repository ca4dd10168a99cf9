"""The MCP surface: one ``MCPServer`` whose tools are the enabled toolsets plus the confirmation tools.

Thin by design: each tool function reads who is calling and what the client can do, hands the
call to the gate, and shapes the answer. No business rule lives here.
"""

from __future__ import annotations

import inspect
import json
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    InputRequiredResult,
    ToolAnnotations,
)
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field

from ..core.cards import Refusal, RefusalReason
from ..gate import ask as gate_ask, replies
from ..gate.actions import Action, ActionError, Read
from ..gate.cards import CardDesk
from ..gate.context import Principal
from ..store.errors import NotFound, StoreError
from .mcp_auth import principal_of

SERVER_NAME = "countersign"
MODERN = "2026-07-28"
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Apply these changes", "default": False}},
    "required": ["confirm"],
}
INSTRUCTIONS = (
    "Reads run at once. Writes that spend, send, grant authority or cannot be undone wait for a person: "
    "the call returns a preview and either asks in your client or returns a held reply with a link. "
    "Never pass a confirmation code back unless the person agreed to the preview."
)


class _Confirm(BaseModel):
    confirm: bool = Field(default=False, title="Apply these changes")


Result = dict[str, Any] | InputRequiredResult


def build_server(desk: CardDesk, state_keys: list[bytes]) -> MCPServer:
    """An ``MCPServer`` with every tool registered once (cheap enough to build per Lambda instance)."""
    security = RequestStateSecurity(keys=state_keys, ttl=900, bind_principal=_principal_binding)
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, request_state_security=security, subscriptions=False)
    for action in desk.registry.actions.values():
        _register(server, _action_tool(desk, action), action.name, action.title, _action_description(action),
                  ToolAnnotations(title=action.title or None, read_only_hint=False, destructive_hint=action.destructive,
                                  idempotent_hint=False, open_world_hint=False))
    for read in desk.registry.reads.values():
        _register(server, _read_tool(desk, read), read.name, read.title, read.description,
                  ToolAnnotations(title=read.title or None, read_only_hint=True, destructive_hint=False,
                                  idempotent_hint=True, open_world_hint=False))
    _register_confirmation_tools(server, desk)
    return server


def _principal_binding(ctx) -> str | None:
    principal = principal_of(getattr(ctx, "request", None))
    return None if principal is None else f"{principal.workspace.id}/{principal.connection.id}"


def _register(server: MCPServer, fn, name: str, title: str, description: str, annotations: ToolAnnotations) -> None:
    server.add_tool(fn, name=name, title=title or None, description=description, annotations=annotations)


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
    return f"{action.description} {held}".strip()


def _signature_of(model: type[BaseModel], extra: list[inspect.Parameter]) -> inspect.Signature:
    params = []
    for name, info in model.model_fields.items():
        # A default factory stays inside the FieldInfo (pydantic refuses both); a plain default is
        # mirrored on the parameter so the SDK's argument model marks the field optional.
        default = inspect.Parameter.empty if info.is_required() or info.default_factory else info.default
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                        annotation=Annotated[info.annotation, info], default=default))
    params.extend(extra)
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))
    return inspect.Signature(params, return_annotation=Result)


def _raw_arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
    def plain(v: Any) -> Any:
        if isinstance(v, BaseModel):
            return v.model_dump(mode="json", exclude_none=True)
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    return {k: plain(v) for k, v in kwargs.items() if v is not None}


def _caller(ctx: Context) -> Principal:
    principal = principal_of(ctx.request_context.request)
    if principal is None:  # the auth middleware runs first; this is defence in depth
        raise ToolError("This call carries no valid connection token.")
    return principal


def _client_can(ctx: Context) -> tuple[bool, bool, bool]:
    """(modern protocol, form elicitation declared, URL elicitation declared)."""
    modern = is_version_at_least(ctx.protocol_version or "", MODERN)
    caps = ctx.client_capabilities
    elicitation = getattr(caps, "elicitation", None) if caps else None
    if elicitation is None:
        return modern, False, False
    form = elicitation.form is not None or (elicitation.form is None and elicitation.url is None)
    return modern, form, elicitation.url is not None


def _answer_of(ctx: Context) -> str:
    response = (ctx.input_responses or {}).get("confirm")
    action = getattr(response, "action", None)
    if action == "accept":
        content = getattr(response, "content", None) or {}
        return gate_ask.ACCEPT if content.get("confirm") is True else gate_ask.UNTICKED
    if action == "decline":
        return gate_ask.DECLINE
    return gate_ask.CANCEL


def _legacy_back_channel(ctx: Context, modern: bool):
    if modern or not ctx.request_context.session.can_send_request:
        return None, None

    async def elicit_form(message: str) -> str:
        answer = await ctx.elicit(message, _Confirm)
        if answer.action == "accept":
            return gate_ask.ACCEPT if answer.data.confirm else gate_ask.UNTICKED
        return gate_ask.DECLINE if answer.action == "decline" else gate_ask.CANCEL

    async def elicit_url(message: str, url: str, elicitation_id: str) -> str:
        answer = await ctx.elicit_url(message, url, elicitation_id)
        return answer.action

    return elicit_form, elicit_url


def _as_result(reply: gate_ask.Reply) -> Result:
    if isinstance(reply, gate_ask.Done):
        return reply.payload
    params: ElicitRequestFormParams | ElicitRequestURLParams
    if isinstance(reply, gate_ask.AskForm):
        params = ElicitRequestFormParams(message=reply.message, requested_schema=CONFIRM_SCHEMA)
    else:
        params = ElicitRequestURLParams(message=reply.message, url=reply.url)
    return InputRequiredResult(input_requests={"confirm": ElicitRequest(params=params)},
                               request_state=json.dumps(reply.state, separators=(",", ":")))


def _tool_error(exc: Exception) -> ToolError:
    if isinstance(exc, (ActionError, Refusal, StoreError)):
        return ToolError(exc.message)
    return ToolError(str(exc))


def _action_tool(desk: CardDesk, action: Action):
    confirmation = inspect.Parameter(
        "confirmation", inspect.Parameter.KEYWORD_ONLY, default=None,
        annotation=Annotated[str | None, Field(description=(
            "Only with confirmation codes: the code from the preview, passed back after the person agreed."))],
    )

    async def tool(ctx: Context, confirmation: str | None = None, **kwargs: Any) -> Result:
        modern, form, url = _client_can(ctx)
        elicit_form, elicit_url = _legacy_back_channel(ctx, modern)
        state = None
        if ctx.request_state is not None:
            try:
                state = json.loads(ctx.request_state)
            except ValueError:
                raise ToolError("The request state is not one this server issued.") from None
        call = gate_ask.Call(
            principal=_caller(ctx), tool=action.name, arguments=_raw_arguments(kwargs), modern=modern,
            form_elicitation=form, url_elicitation=url, elicit_form=elicit_form, elicit_url=elicit_url,
            answer=_answer_of(ctx) if state is not None else None, state=state, confirmation=confirmation,
        )
        try:
            return _as_result(await gate_ask.ask(desk, call))
        except (ActionError, Refusal, StoreError) as exc:
            raise _tool_error(exc) from None

    _present_as(tool, action.name, _signature_of(action.arguments, [confirmation]), {"ctx": Context, "return": Result})
    return tool


def _read_tool(desk: CardDesk, read: Read):
    async def tool(ctx: Context, **kwargs: Any) -> dict[str, Any]:
        principal = _caller(ctx)
        try:
            args = read.parse(_raw_arguments(kwargs))
            context = gate_ask.context_for(desk, principal)
            return read.run(args, context)
        except (ActionError, StoreError) as exc:
            raise _tool_error(exc) from None

    sig = _signature_of(read.arguments, []).replace(return_annotation=dict[str, Any])
    _present_as(tool, read.name, sig, {"ctx": Context, "return": dict[str, Any]})
    return tool


def _present_as(fn: Any, name: str, signature: inspect.Signature, annotations: dict[str, Any]) -> None:
    """Give ``fn`` the name and signature the SDK builds the tool from (it reads them through
    :func:`inspect.signature`, which honours ``__signature__``)."""
    fn.__signature__ = signature
    fn.__annotations__ = annotations
    fn.__name__ = name


def _register_confirmation_tools(server: MCPServer, desk: CardDesk) -> None:
    def mine(ctx: Context, confirmation_id: str):
        """The caller's person's card, as it stands now; another person's reads as unknown."""
        principal = _caller(ctx)
        try:
            return principal, desk.open_card(principal.workspace.id, principal.person, confirmation_id)
        except Refusal as refusal:
            if refusal.reason is RefusalReason.NOT_YOURS:
                raise NotFound("confirmation", confirmation_id) from None
            raise

    @server.tool(annotations=ToolAnnotations(title="Ask a person to confirm an action", read_only_hint=False,
                                             destructive_hint=False, idempotent_hint=True, open_world_hint=False))
    async def request_confirmation(tool: str, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """File a card for `tool` with `arguments` and return its held reply, even for an action that
        would run on the call. The action runs only when the person confirms it on the confirm page."""
        try:
            return await gate_ask.request_card(desk, _caller(ctx), tool, arguments)
        except (ActionError, Refusal, StoreError) as exc:
            raise _tool_error(exc) from None

    @server.tool(annotations=ToolAnnotations(title="List waiting confirmations", read_only_hint=True,
                                             destructive_hint=False, idempotent_hint=True, open_world_hint=False))
    async def list_confirmations(ctx: Context) -> dict[str, Any]:
        """The cards waiting on the person behind this connection, oldest first."""
        principal = _caller(ctx)
        cards, _ = desk.store.list_pending_cards(principal.workspace.id, principal.person.id, desk.now(), limit=100)
        return {
            "pendingUrl": desk.settings.pending_url,
            "confirmations": [replies.pending_entry(c, desk.card_url(c.id)) for c in cards],
        }

    @server.tool(annotations=ToolAnnotations(title="Withdraw a waiting confirmation", read_only_hint=False,
                                             destructive_hint=False, idempotent_hint=False, open_world_hint=False))
    async def cancel_confirmation(confirmation_id: str, ctx: Context) -> dict[str, Any]:
        """Withdraw a pending card: it spends and runs nothing and reads as declined from then on."""
        try:
            principal, card = mine(ctx, confirmation_id)
            card = desk.withdraw(card, desk.now(), f"connection:{principal.connection.id}")
        except (Refusal, StoreError) as exc:
            raise _tool_error(exc) from None
        return {"status": "withdrawn", "confirmationId": card.id, "title": card.title}

    @server.tool(annotations=ToolAnnotations(title="Poll a confirmation", read_only_hint=True,
                                             destructive_hint=False, idempotent_hint=True, open_world_hint=False))
    async def get_confirmation_status(confirmation_id: str, ctx: Context) -> dict[str, Any]:
        """pending | completed (with the result and `next`) | declined (with the reason) | expired."""
        try:
            _, card = await anyio.to_thread.run_sync(mine, ctx, confirmation_id)
        except (Refusal, StoreError) as exc:
            raise _tool_error(exc) from None
        return replies.status_reply(card, desk.card_url(card.id))
