"""Asking the person in the client (MCP elicitation): what the client can do, the one question
every era is asked, and how its answer reads to the gate (:mod:`countersign.gate.ask`).

On the 2026-07-28 protocol the question goes back as an ``InputRequiredResult`` and its answer
comes with the retried call; on a 2025-era stateful session it is put during the call (the legacy
back channel).
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
from mcp_types.version import is_version_at_least

from ...gate import ask as gate_ask
from ...identity.principal import Principal
from .common import Result

MODERN = "2026-07-28"
QUESTION_TITLE = "Confirm these changes"
# The one question every era is asked: one boolean, unticked until the person ticks it.
CONFIRM_SCHEMA = {
    "type": "object",
    "title": QUESTION_TITLE,
    "properties": {"confirm": {"type": "boolean", "title": "Apply these changes", "default": False}},
    "required": ["confirm"],
}


# What the person did with the question (its action, and whether the box was ticked) as the gate
# takes it; anything else (a cancel, a client that failed to show it) is a dismissal. A table, not
# a function: the held call's path is bounded in steps (bench/held_path.py).
ANSWERS: dict[tuple[str | None, bool], str] = {("accept", True): gate_ask.ACCEPT, ("accept", False): gate_ask.UNTICKED,
           ("decline", True): gate_ask.DECLINE, ("decline", False): gate_ask.DECLINE}


def call_of(ctx: Context, principal: Principal, tool: str, arguments: dict[str, Any], state: dict[str, Any] | None,
            confirmation: str | None) -> gate_ask.Call:
    """This ``tools/call`` as the gate takes it (:class:`countersign.gate.ask.Call`): what the client
    can do — the protocol, the elicitation it declared (form, URL), the 2025 back channel — and, on
    a 2026-07-28 retry (``state``: the request state it sent back), the answer it brings."""
    modern = is_version_at_least(ctx.protocol_version or "", MODERN)
    caps = ctx.client_capabilities
    elicitation = getattr(caps, "elicitation", None) if caps else None
    form = elicitation is not None and (elicitation.form is not None or elicitation.url is None)
    url = elicitation is not None and elicitation.url is not None
    elicit_form, elicit_url = (None, None) if modern else legacy_back_channel(ctx)
    answer = None
    if state is not None:
        response = (ctx.input_responses or {}).get("confirm")
        content = getattr(response, "content", None)
        answer = ANSWERS.get((getattr(response, "action", None), (content or {}).get("confirm") is True),
                             gate_ask.CANCEL)
    return gate_ask.Call(principal=principal, tool=tool, arguments=arguments, modern=modern, form_elicitation=form,
                         url_elicitation=url, elicit_form=elicit_form, elicit_url=elicit_url, answer=answer,
                         state=state, confirmation=confirmation)


def legacy_back_channel(ctx: Context):
    """Questions put during the call, on a 2025-era stateful session (not asked of a 2026-07-28
    client). A client that fails to show one counts as having dismissed it: the call falls back,
    and the agent still gets its reply."""
    if not ctx.request_context.session.can_send_request:
        return None, None
    session = ctx.request_context.session

    async def elicit_form(message: str) -> str:
        try:
            answer = await session.elicit_form(message, CONFIRM_SCHEMA, related_request_id=ctx.request_id)
        except MCPError:
            return gate_ask.CANCEL
        return ANSWERS.get((answer.action, (answer.content or {}).get("confirm") is True), gate_ask.CANCEL)

    async def elicit_url(message: str, url: str, elicitation_id: str) -> str:
        try:
            answer = await session.elicit_url(message, url, elicitation_id, related_request_id=ctx.request_id)
        except MCPError:
            return gate_ask.CANCEL
        return answer.action

    return elicit_form, elicit_url


def as_result(reply: gate_ask.Reply) -> Result:
    if isinstance(reply, gate_ask.Done):
        return reply.payload
    params = ElicitRequestFormParams(message=reply.message, requested_schema=CONFIRM_SCHEMA)
    return InputRequiredResult(input_requests={"confirm": ElicitRequest(params=params)},
                               request_state=json.dumps(reply.state, separators=(",", ":")))
