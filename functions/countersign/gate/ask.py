"""``ask``: the one function every held write goes through (docs/how-a-held-write-travels.md).

It plans the call, decides from the action's class whether the call is held, and if so how the
person is asked:

1. 2026-07-28 client with form elicitation, class allows in-client → a form (:class:`AskForm`);
   the retry brings the answer and the sealed state back here.
2. 2025 client on a stateful session with form elicitation → asked during the call.
0. A standing grant of the caller's connection covers the call → it runs at once, through the
   runner, the grant's use consumed in the card's commit (:mod:`.standing_grants`).
3. Otherwise a hosted card, and the held reply (a 2025 client on a stateful session that declared
   URL elicitation is first shown the card's URL during the call).
4. ``COUNTERSIGN_FALLBACK=code`` → a confirmation code instead of a card (class ``client`` only).

Answers: accepted and ticked → run; accepted unticked or declined → declined; cancelled →
falls back as in 3/4 (or declined under ``COUNTERSIGN_REQUIRE_ELICITATION``). Every answer is an
:class:`~.question.Answer` made here, where it arrives, with the counts of the request it came in
(the caller's, ``Principal.counts``), and resolves the request's one card (:mod:`.answers`); every
yes commits through :mod:`.runner`.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..core.canonical import digest
from ..core.card_states import CardState
from ..core.codes import CODE_REFUSAL, CodeRecord, code_hash, code_matches, new_code, well_formed
from ..identity.principal import Principal
from ..store.cards import Card
from ..store.workspaces import Workspace
from ..toolkit import ActionError
from . import replies
from .answers import resolve
from .desk import CardDesk
from .errors import AnswerReplayed, ConfirmationUnavailable, DriftError
from .policy_words import person_may
from .question import Answer, Question, parse
from .runner import run_unheld
from .standing_grants import run_if_granted

ACCEPT, UNTICKED, DECLINE, CANCEL = "accept", "unticked", "decline", "cancel"
NONCE_TTL = 3600


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

    @property
    def actor(self) -> str:
        return f"connection:{self.principal.connection.id}"


@dataclass(frozen=True)
class Done:
    payload: dict[str, Any]


@dataclass(frozen=True)
class AskForm:
    message: str
    state: dict[str, Any]


Reply = Done | AskForm


@dataclass(frozen=True)
class _Elicit:
    """A question the call must put during the call (2025 stateful sessions) before it can go on."""

    kind: str  # "form": the confirm question; "url": the card's page, the card filed already
    q: Question
    card: Card | None = None


async def ask(desk: CardDesk, call: Call) -> Reply:
    """Run, ask, or hold ``call``; see the module docstring.

    Everything that reads or writes the store (planning, filing, running, the email) happens in
    a worker thread, off the event loop, so one slow call never holds up the others; the loop
    only awaits the questions a 2025 session puts during the call. (On Lambda, which serves one
    request at a time, on the loop; and locally the decision on a call the process is serving
    alone, once decisions of its kind have proven light: ``desk.offload``, :mod:`.offload`.)
    """
    # the decision's kind: on the loop while this call is the process's only one and it has proven light
    step = await desk.offload.write_work(f"{call.principal.workspace.id}:{call.tool}:decide", _decide, desk, call)
    while isinstance(step, _Elicit):
        q = step.q
        if step.kind == "url":
            assert call.elicit_url is not None and step.card is not None
            await call.elicit_url(f"Confirm on the confirm page: {step.card.title}", desk.card_url(step.card.id),
                                  step.card.id)
            card = await desk.offload.off_the_loop(desk.cards.get_card, step.card.workspace_id, step.card.id,
                                                   desk.now())
            return Done(card_reply(desk, card, q.ctx.workspace))
        assert call.elicit_form is not None
        asked_at = q.ctx.now
        said = await call.elicit_form(q.plan.preview.question())
        step = await desk.offload.off_the_loop(_answered_during_call, desk, call, q, said, asked_at)
    return step


def _decide(desk: CardDesk, call: Call) -> Reply | _Elicit:
    if call.confirmation is not None:
        return Done(_spend_code(desk, call))
    q = desk.question(call.principal, call.tool, call.arguments, answering=call.state is not None)

    if not q.gate.holds(q.args, q.ctx):
        ran = run_unheld(desk, q)
        return Done(replies.applied_reply(ran["result"], ran["next"]))

    if call.state is not None:
        return _second_round(desk, call, q)

    granted = run_if_granted(desk, q)  # a standing grant of this connection covers it: it runs, through the runner
    if granted.reply is not None:
        return Done(granted.reply)
    if granted.held is not None:
        return Done(card_reply(desk, granted.held, q.ctx.workspace))
    asked = _ask_or_hold(desk, call, q)
    if isinstance(asked, Done) and asked.payload.get("status") == "pending":
        if granted.notes:
            asked.payload["standingGrants"] = granted.notes
        if q.action.editable or q.action.grantable:  # what the person may do instead of a plain yes
            asked.payload["personMay"] = person_may(q.action)
    return asked


def _ask_or_hold(desk: CardDesk, call: Call, q: Question) -> Reply | _Elicit:
    """A held call no standing grant covered, on its first round: asked in the client, or a card (or a code)."""

    in_client = q.allows_in_client and call.form_elicitation and (call.modern or call.elicit_form is not None)
    if in_client or desk.settings.fallback == "code":  # (a card is filed, or found, by one transaction)
        earlier = desk.recent(q)
        if earlier is not None:  # the same request is already waiting, or was just refused
            return Done(card_reply(desk, earlier, q.ctx.workspace))

    if in_client:
        if call.modern:
            nonce = secrets.token_urlsafe(16)
            return AskForm(q.plan.preview.question(), {"k": "form", "fp": q.fingerprint, "n": nonce, "t": q.ctx.now})
        return _Elicit("form", q)
    return _fallback(desk, call, q, asked=False)


def _answered_during_call(desk: CardDesk, call: Call, q: Question, said: str, asked_at: int) -> Reply | _Elicit:
    # The person may have taken minutes: plan again on the state as it is now, like every answer.
    q = q.replan(desk.now())
    if not q.allows_in_client:
        raise ConfirmationUnavailable("This action can now only be confirmed on the confirm page.")
    return _settle(desk, call, q, said, Answer(call.actor, "client", asked_at, counts=call.principal.counts))


def _page_only(q: Question) -> ConfirmationUnavailable:
    if q.needs_passkey:
        why = f"This workspace requires the person's passkey on the confirm page to confirm {q.tool}"
    elif q.gate.kind == "client":
        why = f"This workspace confirms {q.tool} on the confirm page only (confirm_in_client is off)"
    else:
        why = f"{q.tool} must be confirmed by a signed-in person on the confirm page"
    return ConfirmationUnavailable(
        f"{why}, and this deployment has no confirm page (COUNTERSIGN_FALLBACK=code). Nothing changed."
    )


def _second_round(desk: CardDesk, call: Call, q: Question) -> Reply | _Elicit:
    state = call.state or {}
    if state.get("k") == "url":  # a URL question put by an earlier version of this server: its card's reply
        card = desk.cards.get_card(q.ctx.workspace.id, str(state.get("card")), q.ctx.now)
        return Done(card_reply(desk, card, q.ctx.workspace))
    if state.get("k") != "form" or not isinstance(state.get("n"), str):
        raise ActionError("The request state does not belong to a confirmation question.", field="requestState")
    nonce = ("ask:" + state["n"], q.ctx.now + NONCE_TTL)
    said = call.answer or CANCEL
    answer = Answer(call.actor, "client", state["t"] if isinstance(state.get("t"), int) else q.ctx.now, nonce,
                    counts=call.principal.counts)
    if state.get("fp") == q.fingerprint and q.allows_in_client and (
            said != CANCEL or desk.settings.require_elicitation):
        # The answer resolves the request's card: its commit spends the nonce (no write before it).
        return _settle(desk, call, q, said, answer)
    if not desk.limits.use_nonce(*nonce, q.ctx.now):
        raise AnswerReplayed()
    answer.nonce = None  # spent
    if state.get("fp") != q.fingerprint:
        raise DriftError(q.action.drift_message)
    if not q.allows_in_client:
        raise ConfirmationUnavailable("This action can only be confirmed on the confirm page.")
    return _settle(desk, call, q, said, answer)


def _settle(desk: CardDesk, call: Call, q: Question, said: str, answer: Answer) -> Reply | _Elicit:
    """Apply the answer table to what the person ``said`` in the client
    (docs/how-a-held-write-travels.md, "The answer table")."""
    if said == CANCEL and not desk.settings.require_elicitation:
        return _fallback(desk, call, q, asked=True)
    if said == ACCEPT:
        return Done(card_reply(desk, resolve(desk, q, answer, yes=True)))
    reason = {UNTICKED: "The box was not ticked.", DECLINE: "Declined in the client."}.get(
        said, "The question was dismissed, and confirmation requires an answer in the client."
    )
    return Done(card_reply(desk, resolve(desk, q, answer, yes=False, reason=reason)))


def _fallback(desk: CardDesk, call: Call, q: Question, asked: bool) -> Reply | _Elicit:
    """Nobody could be asked in the client (or the question was dismissed): a card or a code."""
    settings = desk.settings
    if settings.fallback == "code":
        if not q.allows_in_client:
            raise _page_only(q)
        if settings.require_elicitation and not asked:
            raise ConfirmationUnavailable(
                "This client cannot ask the person, and confirmation codes are disabled "
                "(COUNTERSIGN_REQUIRE_ELICITATION=1). Nothing changed."
            )
        return Done(_mint_code(desk, call, q))
    return _hold(desk, call, q)


def _file_or_find(desk: CardDesk, q: Question) -> Card:
    """The card for this request: an identical live (or lately answered) one, else a new one.

    A retry never mints a second card or a second email, and an agent cannot wear a person down
    by asking again right after a no. No read first: filing claims the request in its own
    transaction and, when a card holds it (exactly when :meth:`CardDesk.recent` finds one),
    writes nothing and returns that card.
    """
    card, filed = desk.file(q, "page")
    if filed:
        desk.notify(card)  # already off the event loop (SMTP can be slow)
    return card


async def file_or_find(desk: CardDesk, q: Question) -> Card:
    """:func:`_file_or_find` in a worker thread."""
    return await desk.offload.off_the_loop(_file_or_find, desk, q)


def _hold(desk: CardDesk, call: Call, q: Question) -> Reply | _Elicit:
    """File (or find) the hosted card and return its held reply.

    The agent always gets the held reply (the card's id, links and instructions) as the tool
    result. A 2026-07-28 client is not sent a URL question instead: a client that cannot show one
    (``mcp-remote --protocol auto`` in front of a 2025-era host) would fail the whole call, and the
    agent would never learn the card's id. A 2025 client on a stateful session that declared URL
    elicitation is shown the URL during the call first; if it cannot show it, the reply is the same.
    """
    card = _file_or_find(desk, q)
    if card.state is CardState.PENDING and call.url_elicitation and call.elicit_url is not None:
        return _Elicit("url", q, card)
    return Done(card_reply(desk, card, q.ctx.workspace))


def card_reply(desk: CardDesk, card: Card, workspace: Workspace | None = None) -> dict[str, Any]:
    """What the agent is told about a request's card: held, declined, or how it ended.
    ``workspace``: the card's, as this request just read it."""
    if card.state is CardState.PENDING:
        return replies.held_reply(card, desk.card_url(card.id), desk.settings.pending_url,
                                  passkey=desk.card_needs_passkey(card, workspace))
    if card.state is CardState.DECLINED and card.refusal is None:
        return replies.declined_reply(card)
    return replies.status_reply(card)


def _code_binding(tool: str, call: Call) -> str:
    """What a code is bound to beside its workspace and fingerprint: this tool and this connection.

    Not the raw arguments: the fingerprint already names the change, so the same change spelled
    differently (``"2026-10"`` and ``"2026-10-01"``, ``33`` and ``"33.00"``) is the same subject.
    """
    return digest({"tool": tool, "connection": call.principal.connection.id})


def _mint_code(desk: CardDesk, call: Call, q: Question) -> dict[str, Any]:
    code = new_code()
    now = q.ctx.now
    expires_at = now + desk.settings.code_ttl
    desk.limits.put_code(CodeRecord(code_hash(code), q.ctx.workspace.id, q.fingerprint, expires_at,
                                   _code_binding(q.tool, call), issued_at=now))
    return replies.code_reply(q.plan.preview, code, expires_at, desk.settings.code_ttl)


def _spend_code(desk: CardDesk, call: Call) -> dict[str, Any]:
    """A call that passes a code back. The code is spent first, whatever follows. Every way it can
    fail to confirm this call is refused with the one code sentence (:data:`CODE_REFUSAL`): unknown,
    expired, already used (after a success too), for other changes, or for changes whose state
    moved since the preview (the plan now fails, or gives another fingerprint)."""
    parse(desk.registry.agent_action(call.tool), call.arguments)  # bad input is named first, as on every call
    if desk.settings.require_elicitation:
        raise ConfirmationUnavailable(
            "Confirmation codes are disabled (COUNTERSIGN_REQUIRE_ELICITATION=1); nothing changed.",
            field="confirmation",
        )
    if desk.settings.fallback != "code":
        raise ActionError(
            f"{call.tool} is not confirmed with codes here; call it without confirmation.", field="confirmation"
        )
    code = call.confirmation
    now = desk.now()
    record = desk.limits.take_code(code_hash(code), now) if well_formed(code) else None
    try:
        q = desk.question(call.principal, call.tool, call.arguments, answering=True)
    except DriftError:
        raise ActionError(CODE_REFUSAL, field="confirmation") from None
    if not q.gate.holds(q.args, q.ctx):
        raise ActionError(f"{q.tool} runs at once here; it takes no confirmation.", field="confirmation")
    if not q.allows_in_client:
        raise _page_only(q)
    matches = (
        record is not None
        and record.arguments_digest == _code_binding(q.tool, call)
        and code_matches(record, q.ctx.workspace.id, q.fingerprint, q.ctx.now)
    )
    if record is None or not matches:
        raise ActionError(CODE_REFUSAL, field="confirmation")
    answer = Answer(call.actor, "code", record.issued_at or now, counts=call.principal.counts)
    return card_reply(desk, resolve(desk, q, answer, yes=True))


async def request_card(desk: CardDesk, principal: Principal, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``request_confirmation``: the held reply ``tool`` gives when it waits, whatever its class."""
    def held() -> dict[str, Any]:
        return card_reply(desk, _file_or_find(desk, desk.question(principal, tool, arguments)), principal.workspace)

    return await desk.offload.off_the_loop(held)


def context_for(desk: CardDesk, principal: Principal):
    """The caller's context (for reads): the principal's workspace was read for this very request."""
    return desk.context(principal.workspace.id, principal.person, None, desk.now(), principal)
