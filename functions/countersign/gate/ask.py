"""``ask``: the one function every held write goes through (SPEC §6; seed 000's ``confirm.ask``).

It plans the call, decides from the action's class whether the call is held, and if so how the
person is asked:

1. 2026-07-28 client with form elicitation, class allows in-client → a form (:class:`AskForm`);
   the retry brings the answer and the sealed state back here.
2. 2025 client on a stateful session with form elicitation → asked during the call.
3. Otherwise a hosted card (offered as URL elicitation when the client declared it).
4. ``COUNTERSIGN_FALLBACK=code`` → a confirmation code instead of a card (class ``client`` only).

Answers: accepted and ticked → apply; accepted unticked or declined → declined; cancelled →
falls back as in 3/4 (or declined under ``COUNTERSIGN_REQUIRE_ELICITATION``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import anyio

from ..core.canonical import canonical_json, digest
from ..core.codes import CODE_REFUSAL, CodeRecord, code_hash, code_matches, new_code, well_formed
from ..store.records import MAX_ARGUMENTS_BYTES
from .actions import Action, ActionError, GateClass, Plan
from .cards import CardDesk, subject_fingerprint
from .context import ActionContext, Principal
from .errors import AnswerReplayed, ConfirmationUnavailable, DriftError
from . import replies

ACCEPT, UNTICKED, DECLINE, CANCEL = "accept", "unticked", "decline", "cancel"


@dataclass(frozen=True)
class Call:
    """One ``tools/call`` of an action, as the MCP surface saw it."""

    principal: Principal
    tool: str
    arguments: dict[str, Any]
    modern: bool = False  # protocol 2026-07-28
    form_elicitation: bool = False
    url_elicitation: bool = False
    # 2025 stateful sessions only: ask during the call. Returns ACCEPT/UNTICKED/DECLINE/CANCEL.
    elicit_form: Callable[[str], Awaitable[str]] | None = None
    elicit_url: Callable[[str, str, str], Awaitable[str]] | None = None
    # 2026 retry: the answer and the unsealed request state.
    answer: str | None = None
    state: dict[str, Any] | None = None
    confirmation: str | None = None  # a code passed back (fallback=code)


@dataclass(frozen=True)
class Done:
    payload: dict[str, Any]


@dataclass(frozen=True)
class AskForm:
    message: str
    state: dict[str, Any]


@dataclass(frozen=True)
class AskUrl:
    message: str
    url: str
    state: dict[str, Any]


Reply = Done | AskForm | AskUrl


def _parse(action: Action, arguments: dict[str, Any]):
    """Arguments are untrusted: bounded in size, then validated against the action's model."""
    if len(canonical_json(arguments).encode("utf-8")) > MAX_ARGUMENTS_BYTES:
        raise ActionError("arguments: over 64 KiB; nothing was written.", field="arguments")
    return action.parse(arguments)


def context_for(desk: CardDesk, principal: Principal) -> ActionContext:
    """The caller's context; the principal's workspace (and settings) were read for this very request."""
    return ActionContext(desk.store, principal.workspace, principal.person, principal.connection, desk.now())


async def ask(desk: CardDesk, call: Call) -> Reply:
    """Run, ask, or hold ``call``; see the module docstring."""
    action = desk.registry.action(call.tool)
    args = _parse(action, call.arguments)
    ctx = context_for(desk, call.principal)
    gate = action.gate_class(args, ctx)
    answering = call.state is not None or call.confirmation is not None
    plan = _plan(action, args, ctx) if answering else action.plan(args, ctx)
    fp = subject_fingerprint(ctx.workspace.id, action.name, plan.subject)

    if not gate.holds(args, ctx):
        if call.confirmation is not None:
            raise ActionError(f"{action.name} runs at once here; it takes no confirmation.", field="confirmation")
        result = action.apply(plan, ctx)
        return Done(replies.applied_reply(result, [s.to_dict() for s in action.next_steps(result, ctx)]))

    if call.confirmation is not None:
        return Done(_spend_code(desk, call, action, gate, plan, fp, ctx))
    if call.state is not None:
        return await _second_round(desk, call, action, gate, plan, fp, ctx)

    earlier = desk.recent(ctx, action.name, fp)
    if earlier is not None:  # the same request is already waiting, or was just refused
        return Done(_card_reply(desk, earlier) if earlier.state.value == "pending" else replies.declined_reply(earlier))

    in_client = gate.allows_in_client(ctx)
    if in_client and call.modern and call.form_elicitation:
        nonce = secrets.token_urlsafe(16)
        return AskForm(plan.preview.question(), {"k": "form", "fp": fp, "n": nonce})
    if in_client and not call.modern and call.form_elicitation and call.elicit_form is not None:
        answer = await call.elicit_form(plan.preview.question())
        # The person may have taken minutes: re-plan on the state as it is now, like every answer.
        ctx = ctx.refreshed(desk.now())
        plan, fp = _replan(action, args, ctx, fp)
        if not gate.allows_in_client(ctx):
            raise ConfirmationUnavailable("This action can now only be confirmed on the confirm page.")
        return await _settle(desk, call, action, gate, plan, fp, ctx, answer, "client")
    return await _fallback(desk, call, action, gate, plan, fp, ctx, asked=False)


def _plan(action: Action, args, ctx: ActionContext) -> Plan:
    """The plan at answer time: a subject that can no longer be planned means the state moved."""
    try:
        return action.plan(args, ctx)
    except ActionError as exc:
        raise DriftError(f"{action.drift_message} ({exc.message})", field=exc.field) from None


def _replan(action: Action, args, ctx: ActionContext, asked_fp: str) -> tuple[Plan, str]:
    """The plan at answer time; :class:`DriftError` unless it is the change the person was shown."""
    plan = _plan(action, args, ctx)
    fp = subject_fingerprint(ctx.workspace.id, action.name, plan.subject)
    if fp != asked_fp:
        raise DriftError(action.drift_message)
    return plan, fp


def _page_only(action: Action, gate: GateClass) -> ConfirmationUnavailable:
    if gate.kind == "client":
        why = f"This workspace confirms {action.name} on the confirm page only (confirm_in_client is off)"
    else:
        why = f"{action.name} must be confirmed by a signed-in person on the confirm page"
    return ConfirmationUnavailable(
        f"{why}, and this deployment has no confirm page (COUNTERSIGN_FALLBACK=code). Nothing changed."
    )


async def _second_round(desk, call: Call, action: Action, gate: GateClass, plan: Plan, fp: str, ctx) -> Reply:
    state = call.state or {}
    if state.get("k") == "url":
        card = desk.store.get_card(ctx.workspace.id, str(state.get("card")), ctx.now)
        return Done(_card_reply(desk, card))
    if state.get("k") != "form" or not isinstance(state.get("n"), str):
        raise ActionError("The request state does not belong to a confirmation question.", field="requestState")
    if not desk.store.use_nonce("ask:" + state["n"], ctx.now + 3600, ctx.now):
        raise AnswerReplayed()
    if state.get("fp") != fp:
        raise DriftError(action.drift_message)
    if not gate.allows_in_client(ctx):
        raise ConfirmationUnavailable("This action can only be confirmed on the confirm page.")
    return await _settle(desk, call, action, gate, plan, fp, ctx, call.answer or CANCEL, "client")


async def _settle(desk, call: Call, action: Action, gate: GateClass, plan: Plan, fp: str, ctx, answer: str, channel: str) -> Reply:
    """Apply seed 000's answer table to an in-client answer."""
    if answer == CANCEL and not desk.settings.require_elicitation:
        return await _fallback(desk, call, action, gate, plan, fp, ctx, asked=True)
    card = desk.file(ctx, action, call.arguments, plan, fp, channel)
    actor = f"connection:{card.connection_id}"
    if answer == ACCEPT:
        card = desk.run(card, action, plan, ctx, channel, actor)
        return Done(_card_reply(desk, card))
    reason = {UNTICKED: "The box was not ticked.", DECLINE: "Declined in the client."}.get(
        answer, "The question was dismissed, and confirmation requires an answer in the client."
    )
    card = desk.decline(card, ctx.now, actor, channel, reason)
    return Done(replies.declined_reply(card))


async def _fallback(desk, call: Call, action: Action, gate: GateClass, plan: Plan, fp: str, ctx, asked: bool) -> Reply:
    """Nobody could be asked in the client (or the question was dismissed): a card or a code."""
    settings = desk.settings
    if settings.fallback == "code":
        if not gate.allows_in_client(ctx):
            raise _page_only(action, gate)
        if settings.require_elicitation and not asked:
            raise ConfirmationUnavailable(
                "This client cannot ask the person, and confirmation codes are disabled "
                "(COUNTERSIGN_REQUIRE_ELICITATION=1). Nothing changed."
            )
        return Done(_mint_code(desk, call, action, plan, fp, ctx))
    return await hold(desk, call, action, plan, fp, ctx)


async def file_or_find(desk: CardDesk, ctx: ActionContext, action: Action, arguments: dict, plan: Plan, fp: str):
    """The card for this request: an identical pending (or lately declined) one, else a new one.

    A retry never mints a second card or a second email, and an agent cannot wear a person down
    by asking again right after a no. The email goes out off the event loop (SMTP can be slow).
    """
    card = desk.recent(ctx, action.name, fp)
    if card is None:
        card = desk.file(ctx, action, arguments, plan, fp, "page")
        await anyio.to_thread.run_sync(desk.notify, card)
    return card


async def hold(desk, call: Call, action: Action, plan: Plan, fp: str, ctx) -> Reply:
    """File (or find) the hosted card; offer its URL to a client that declared URL elicitation."""
    card = await file_or_find(desk, ctx, action, call.arguments, plan, fp)
    if card.state.value == "declined":
        return Done(replies.declined_reply(card))
    url = desk.card_url(card.id)
    message = f"Confirm on the confirm page: {card.title}"
    if call.url_elicitation and call.modern:
        return AskUrl(message, url, {"k": "url", "card": card.id})
    if call.url_elicitation and call.elicit_url is not None:
        await call.elicit_url(message, url, card.id)
        card = desk.store.get_card(card.workspace_id, card.id, desk.now())
    return Done(_card_reply(desk, card))


def _card_reply(desk: CardDesk, card) -> dict[str, Any]:
    if card.state.value == "pending":
        return replies.held_reply(card, desk.card_url(card.id), desk.settings.pending_url)
    return replies.status_reply(card)


def _code_binding(action: Action, call: Call) -> str:
    """What a code is bound to beside its fingerprint: this tool, these arguments, this connection."""
    return digest({"tool": action.name, "arguments": call.arguments, "connection": call.principal.connection.id})


def _mint_code(desk: CardDesk, call: Call, action: Action, plan: Plan, fp: str, ctx) -> dict[str, Any]:
    code = new_code()
    expires_at = ctx.now + desk.settings.code_ttl
    desk.store.put_code(CodeRecord(code_hash(code), ctx.workspace.id, fp, expires_at, _code_binding(action, call)))
    return replies.code_reply(plan.preview, code, expires_at, desk.settings.code_ttl)


def _spend_code(desk: CardDesk, call: Call, action: Action, gate: GateClass, plan: Plan, fp: str, ctx) -> dict[str, Any]:
    if desk.settings.require_elicitation:
        raise ConfirmationUnavailable(
            "Confirmation codes are disabled (COUNTERSIGN_REQUIRE_ELICITATION=1); nothing changed.", field="confirmation"
        )
    if desk.settings.fallback != "code":
        raise ActionError(
            f"{action.name} is not confirmed with codes here; call it without confirmation.", field="confirmation"
        )
    if not gate.allows_in_client(ctx):
        raise _page_only(action, gate)
    code = call.confirmation
    record = desk.store.take_code(code_hash(code), ctx.now) if well_formed(code) else None
    same_request = (
        record is not None
        and record.workspace_id == ctx.workspace.id
        and ctx.now < record.expires_at
        and record.arguments_digest == _code_binding(action, call)
    )
    if not (same_request and code_matches(record, ctx.workspace.id, fp, ctx.now)):
        if same_request:  # the same call as the preview, but the state behind it moved
            raise DriftError(action.drift_message)
        raise ActionError(CODE_REFUSAL, field="confirmation")
    card = desk.file(ctx, action, call.arguments, plan, fp, "code")
    card = desk.run(card, action, plan, ctx, "code", f"connection:{card.connection_id}")
    return _card_reply(desk, card)


async def request_card(desk: CardDesk, principal: Principal, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``request_confirmation``: the held reply ``tool`` gives when it waits, whatever its class."""
    action = desk.registry.action(tool)
    ctx = context_for(desk, principal)
    plan = action.plan(_parse(action, arguments), ctx)
    fp = subject_fingerprint(ctx.workspace.id, action.name, plan.subject)
    card = await file_or_find(desk, ctx, action, arguments, plan, fp)
    if card.state.value == "declined":
        return replies.declined_reply(card)
    return _card_reply(desk, card)
