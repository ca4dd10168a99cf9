"""The four tools every deployment has beside its toolsets: ``request_confirmation``,
``list_confirmations``, ``cancel_confirmation`` and ``get_confirmation_status``
(docs/how-a-held-write-travels.md, section 11). Their arguments are checked like every tool's.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp_types import ToolAnnotations
from pydantic import Field

from ...core.card_states import Refusal, RefusalReason
from ...gate import ask as gate_ask, clicks, edits, replies
from ...gate.desk import CardDesk
from ...store.errors import NotFound, StoreError
from ...toolkit import ActionError, Arguments
from ...toolkit.arguments import ArgumentError, parse_arguments, without_nulls
from .common import caller, make_tool, tool_error
from .guide import SEE_GUIDE

PAGE = 100
# These four work on the requests that wait for a person; none is an action a person could confirm.
CONFIRMATION_TOOLS = ("request_confirmation", "list_confirmations", "cancel_confirmation", "get_confirmation_status")


class RequestArgs(Arguments):
    tool: str = Field(max_length=64, description="The name of the action to confirm, e.g. launch_campaign")
    arguments: dict[str, Any] = Field(description="The arguments that action takes, as an object")


class CardArgs(Arguments):
    confirmation_id: str = Field(max_length=64, description="The confirmationId of a held reply")


class ListArgs(Arguments):
    cursor: str | None = Field(default=None, max_length=512,
                               description="The nextCursor of the previous page; leave it out for the first page")


def _parse(model: type[Arguments], arguments: dict[str, Any], tool: str) -> Any:
    try:
        return parse_arguments(model, without_nulls(arguments), tool)
    except ArgumentError as exc:
        raise ToolError(f"{exc.message} Nothing was written.") from None


def _annotations(title: str, *, read_only: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=read_only, destructive_hint=False,
                           idempotent_hint=idempotent, open_world_hint=False)


def confirmation_tools(desk: CardDesk) -> list[Tool]:
    def mine(ctx: Context, confirmation_id: str):
        """The caller's person's card, as it stands now; another person's reads as unknown, in
        the same words as an unknown id or another workspace's card."""
        principal = caller(ctx)
        try:
            return principal, clicks.open_card(desk, principal.workspace.id, principal.person, confirmation_id,
                                               counts=principal.counts)
        except NotFound:
            raise NotFound("confirmation", confirmation_id) from None
        except Refusal as refusal:
            if refusal.reason is RefusalReason.NOT_YOURS:
                raise NotFound("confirmation", confirmation_id) from None
            raise

    async def request_confirmation(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        args = _parse(RequestArgs, arguments, "request_confirmation")
        if args.tool in CONFIRMATION_TOOLS:
            raise ToolError(f"tool: {args.tool} cannot be held for a person: it is one of the confirmation tools, "
                            "which work on the requests that wait for one and run at once. Call it directly. "
                            "Nothing was written.")
        try:
            return await gate_ask.request_card(desk, caller(ctx), args.tool, without_nulls(args.arguments))
        except (ActionError, Refusal, StoreError) as exc:
            raise tool_error(exc) from None

    async def list_confirmations(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        args = _parse(ListArgs, arguments, "list_confirmations")
        principal = caller(ctx)
        now = desk.now()

        def listed():
            cards, after = desk.store.cards.list_pending_cards(principal.workspace.id, principal.person.id, now,
                                                         limit=PAGE, cursor=args.cursor)
            return cards, after, desk.store.cards.count_pending_cards(principal.workspace.id, principal.person.id, now)
        try:
            cards, after, total = await desk.offload.read_work(f"{principal.workspace.id}:list_confirmations", listed)
        except StoreError as exc:
            raise tool_error(exc) from None
        return {
            "total": total,
            "pendingUrl": desk.settings.pending_url,
            "confirmations": [replies.pending_entry(c, desk.card_url(c.id)) for c in cards],
            "nextCursor": after,
        }

    async def cancel_confirmation(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        args = _parse(CardArgs, arguments, "cancel_confirmation")
        def withdrawn():
            principal, card = mine(ctx, args.confirmation_id)
            return desk.withdraw(card, desk.now(), f"connection:{principal.connection.id}", counts=principal.counts)
        try:
            card = await desk.offload.off_the_loop(withdrawn)
        except (Refusal, StoreError) as exc:
            raise tool_error(exc) from None
        return {"status": "withdrawn", "confirmationId": card.id, "title": card.title,
                "instructions": replies.WITHDRAWN_INSTRUCTIONS}

    async def get_confirmation_status(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        args = _parse(CardArgs, arguments, "get_confirmation_status")
        try:
            def status():
                _, asked = mine(ctx, args.confirmation_id)
                return edits.confirmation_status(desk, asked)  # an edited card leads on to its outcome
            return await desk.offload.read_work("get_confirmation_status", status)
        except (Refusal, StoreError) as exc:
            raise tool_error(exc) from None

    return [
        make_tool(request_confirmation, name="request_confirmation", title="Asking a person to confirm an action",
                  description=("File a card for `tool` with `arguments` and return its held reply, even for an action "
                               "that would run on the call. The action runs only when the person confirms it on the "
                               f"confirm page. Prefer it when the person should approve something. {SEE_GUIDE}"),
                  annotations=_annotations("Asking a person to confirm an action", read_only=False, idempotent=True),
                  model=RequestArgs, returns=dict[str, Any]),
        make_tool(list_confirmations, name="list_confirmations", title="Listing waiting confirmations",
                  description=(f"The cards waiting on the person behind this connection, oldest first, {PAGE} at a "
                               "time: `total` says how many wait in all, and `nextCursor` (when more follow) is the "
                               "`cursor` for the next page."),
                  annotations=_annotations("Listing waiting confirmations", read_only=True, idempotent=True),
                  model=ListArgs, returns=dict[str, Any]),
        make_tool(cancel_confirmation, name="cancel_confirmation", title="Withdrawing a waiting confirmation",
                  description=("Withdraw a pending card: it spends and runs nothing and reads as declined from then "
                               "on."),
                  annotations=_annotations("Withdrawing a waiting confirmation", read_only=False, idempotent=False),
                  model=CardArgs, returns=dict[str, Any]),
        make_tool(get_confirmation_status, name="get_confirmation_status", title="Checking a confirmation",
                  description=("pending | completed (with the result and `next`) | declined (with the reason) | "
                               f"expired | failed, with what calling again does. {SEE_GUIDE}"),
                  annotations=_annotations("Checking a confirmation", read_only=True, idempotent=True),
                  model=CardArgs, returns=dict[str, Any]),
    ]
