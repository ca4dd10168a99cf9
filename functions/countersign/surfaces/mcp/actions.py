"""The enabled toolsets' actions and reads as MCP tools, and what calling an action does
(:func:`action_run`): hand it to the gate with what the client can do. Upstream tools are run
through :func:`action_run` too (:mod:`.gateway`).
"""

from __future__ import annotations

import inspect
import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp_types import ToolAnnotations
from pydantic import Field

from ...core.card_states import Refusal
from ...gate import ask as gate_ask
from ...gate.desk import CardDesk
from ...gate.policy_words import editable_words, grantable_words
from ...store.errors import StoreError
from ...toolkit import Action, ActionError, Read
from ...toolkit.arguments import ArgumentError, without_nulls
from .common import Result, Run, caller, make_tool, tool_error
from .elicitation import as_result, call_of
from .guide import SEE_GUIDE

PASSKEY_NOTE = (" If the workspace's passkey policy covers the request, only the person's passkey on the confirm page "
                "confirms it: not a click alone, not an answer in your client, not a code.")

QUORUM_NOTE = (" If the workspace's quorum rules cover it, it waits for several people's approvals on the confirm "
               "page, never an answer in your client; the held reply's quorum says how many and of whom.")

GRANT_NOTE = (" The person may give this connection a standing grant for it, bounding {}: a call within one runs "
              "at once, and the reply's message names the grant and what is left of it; a call outside it waits as "
              "usual, and standingGrants says why.")
EDIT_NOTE = (" On its card the person may change {} before confirming; the status then says what ran, what "
             "changed and by whom.")


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
    passkey = "" if gate.kind == "never" and not action.hold_rule else PASSKEY_NOTE + QUORUM_NOTE
    edited = EDIT_NOTE.format(editable_words(action)) if action.editable else ""
    granted = GRANT_NOTE.format(grantable_words(action)) if action.grantable else ""
    return f"{action.description} {held}{passkey}{edited}{granted}{guide_pointer}".strip()


def action_run(desk: CardDesk, name: str, *, codes: bool = True, keep_nulls: bool = False) -> Run:
    """What calling the action ``name`` does: hand it to the gate with what the client can do.
    ``codes``: a ``confirmation`` argument is a confirmation code passed back (an upstream tool's
    own argument of that name is its own, unless this server confirms with codes). ``keep_nulls``:
    a null argument is a value to pass on (an upstream tool's), not one left out."""

    async def run(arguments: dict[str, Any], ctx: Context) -> Result:
        try:
            raw = dict(arguments) if keep_nulls else without_nulls(arguments)
        except ArgumentError as exc:  # nested too deep to walk
            raise ToolError(f"{exc.message} Nothing was written.") from None
        code = raw.pop("confirmation", None) if codes else None
        if code is not None and not isinstance(code, str):
            raise ToolError("confirmation: must be text: the code from the preview, passed back after the person "
                            "agreed. Nothing was written.")
        state = None
        if ctx.request_state is not None:
            try:
                state = json.loads(ctx.request_state)
            except ValueError:
                raise ToolError("The request state is not one this server issued.") from None
        try:
            return as_result(await gate_ask.ask(desk, call_of(ctx, caller(ctx), name, raw, state, code)))
        except (ActionError, Refusal, StoreError) as exc:
            raise tool_error(exc) from None

    return run


def action_tool(desk: CardDesk, action: Action) -> Tool:
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


def read_tool(desk: CardDesk, read: Read) -> Tool:
    async def run(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        principal = caller(ctx)
        try:
            args = read.parse(without_nulls(arguments))
            # off the event loop until it has proven light, in this workspace (a read light for a
            # small budget may not be for a big one): it never holds up the calls beside it
            # (countersign.gate.offload)
            return await desk.offload.read_work(f"{principal.workspace.id}:{read.name}",
                                                lambda: read.run(args, gate_ask.context_for(desk, principal)))
        except ArgumentError as exc:  # nested too deep to walk
            raise ToolError(exc.message) from None
        except (ActionError, StoreError) as exc:
            raise tool_error(exc) from None

    title = read.title or f"Reading {read.name}"
    annotations = ToolAnnotations(title=title, read_only_hint=True, destructive_hint=False,
                                  idempotent_hint=True, open_world_hint=False)
    return make_tool(run, name=read.name, title=title, description=read.description, annotations=annotations,
                     model=read.arguments, returns=dict[str, Any])
