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


def client_can(ctx: Context) -> tuple[bool, bool, bool]:
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


def answer_of(ctx: Context) -> str:
    response = (ctx.input_responses or {}).get("confirm")
    return _answer(getattr(response, "action", None), getattr(response, "content", None))


def legacy_back_channel(ctx: Context, modern: bool):
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


def as_result(reply: gate_ask.Reply) -> Result:
    if isinstance(reply, gate_ask.Done):
        return reply.payload
    params = ElicitRequestFormParams(message=reply.message, requested_schema=CONFIRM_SCHEMA)
    return InputRequiredResult(input_requests={"confirm": ElicitRequest(params=params)},
                               request_state=json.dumps(reply.state, separators=(",", ":")))
