"""Standing grants: a person lets one of their connections run one tool without asking each time,
within bounds the tool declares (docs/policy.md, "Standing grants").

* **Granting** is itself a held request, ``create_standing_grant`` (:class:`CreateStandingGrant`):
  filed by the person from the confirm page (Settings, or "Allow this again…" on a card), never by
  an agent (it is no MCP tool), and confirmed like any card — with the person's passkey when the
  workspace's passkey policy covers it (class ``always``, destructive: it grants authority). Its
  commit makes the grant (:class:`~countersign.store.standing_grants.StandingGrantWrite`).
* **A call inside a grant** (:func:`run_if_granted`, from :func:`countersign.gate.ask.ask` once the
  call is planned and held) runs at once, still through the gate: the runner files its card already
  decided and commits the effect with it (:func:`countersign.gate.runner.run_new`), and that one
  transaction also consumes the grant's use by a conditional write
  (:class:`~countersign.store.standing_grants.GrantUse`). Two calls racing for the last use or the
  last of the cap: exactly one runs; the other is held as any call is (a card for the person).
  The card's audit entry and result name the grant; the agent is told what is left of it.
* **What no grant covers** is the workspace owner's setting ``standing_grants_never``: tools,
  classes, risky actions, amounts over a limit (:func:`ruled_out`). Checked when granting and at
  every call, so a rule added later stops grants made before it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from pydantic import Field

from ..core.card_states import CardState
from ..core.ids import new_id
from ..core.preview import Preview
from ..core.times import iso
from ..store.cards import Card
from ..store.connections import Connection
from ..store.errors import GrantUnavailable, NotFound, Taken
from ..store.standing_grants import (
    MAX_GRANT_DAYS,
    MAX_GRANT_NAME,
    MAX_GRANT_USES,
    GrantUse,
    StandingGrant,
    StandingGrantWrite,
)
from ..store.workspaces import LIST_SETTINGS, MAX_LIST_SETTING, Workspace
from ..toolkit import (
    ALWAYS,
    Action,
    ActionContext,
    ActionError,
    AmountBound,
    Arguments,
    BoundError,
    ChoiceBound,
    Effect,
    Plan,
    Toolset,
)
from .desk import CardDesk
from .owner_settings import OwnerSettingChange
from .passkey_policy import is_risky, needs_passkey
from .question import Answer, Question
from .quorum_rules import check_when, when_words
from .replies import status_reply
from .runner import run_new

SETTING = "standing_grants_never"
CHANNEL = "grant"
NOTED_FOR = 86400  # a grant that ended (expired, revoked, used up) is named in a held reply until a day past its expiry


# -- what no grant may cover (the owner's rules) -----------------------------------------------------


def rules_of(workspace: Workspace) -> list[str]:
    value = workspace.setting(SETTING)
    return [str(rule) for rule in value] if isinstance(value, list | tuple) else []


def ruled_out(workspace: Workspace, action: Action, gate_kind: str | None = None, amount: int | None = None,
              amount_shown: Callable[[int], str] | None = None) -> str | None:
    """Why the workspace's rules let no standing grant cover ``action`` (a sentence), or None.
    ``amount``: the call's (or the grant's per-call limit), in thousandths."""
    kind = gate_kind or action.gate.kind
    for rule in rules_of(workspace):
        if rule == f"tool:{action.name}":
            return f"the workspace's owner has ruled that no standing grant may cover {action.name}"
        if rule == f"class:{kind}":
            return f"the workspace's owner has ruled that no standing grant may cover a tool of class {kind}"
        if rule == "risky" and is_risky(action, replace(action.gate, kind=kind)):
            return (f"the workspace's owner has ruled that no standing grant may cover what spends, sends, grants or "
                    f"cannot be undone, as {action.name} does")
        if rule.startswith("over:") and amount is not None and amount > int(Decimal(rule[5:]) * 1000):
            limit = int(Decimal(rule[5:]) * 1000)
            shown = amount_shown or (lambda milli: f"{Decimal(milli) / 1000:f}")
            return (f"the workspace's owner has ruled that no standing grant may cover an amount over "
                    f"{shown(limit)}, and this is {shown(amount)}")
    return None


def amount_bound(action: Action) -> AmountBound | None:
    return next((b for b in action.grantable if isinstance(b, AmountBound)), None)


# -- granting: create_standing_grant -------------------------------------------------------------------


class GrantArgs(Arguments):
    connection_id: str = Field(min_length=1, max_length=64, description="The connection (an agent) it lets act")
    tool: str = Field(min_length=1, max_length=128, description="The one tool it covers")
    name: str = Field(min_length=1, max_length=MAX_GRANT_NAME, description="What the person calls it")
    limits: dict[str, Any] = Field(description="Per bounded argument the tool declares: a maximum amount, or a "
                                               "list of allowed values")
    uses: int = Field(ge=1, le=MAX_GRANT_USES, description="How many calls it covers")
    days: int = Field(ge=1, le=MAX_GRANT_DAYS, description="How long it lasts, from when it is confirmed")
    cap: int | float | str | None = Field(default=None, description="At most this much of the tool's amount in all")


class CreateStandingGrant(Action):
    """The held request that grants a standing permission. ``tool_of`` finds the action of a tool an
    agent may call; ``connection_of`` reads a connection of a workspace (both given by the runtime)."""

    name = "create_standing_grant"
    title = "Preparing a standing grant"
    description = ("Let one of your agent connections run one tool without asking each time, within bounds the tool "
                   "declares, a number of uses and a time. Filed from the confirm page only.")
    arguments = GrantArgs
    gate = ALWAYS
    destructive = True  # it grants authority: risky, so a passkey policy of risky or every covers it
    agent_tool = False  # a person grants it; no agent can even ask for one
    drift_message = ("The connection, the tool or what it may be bounded by changed between the preview and the "
                     "answer; nothing was granted.")

    def __init__(self, tool_of: Callable[[str], Action], connection_of: Callable[[str, str], Connection]):
        self.tool_of = tool_of
        self.connection_of = connection_of

    def plan(self, args: GrantArgs, ctx: ActionContext) -> Plan:
        connection = self._connection(args.connection_id, ctx)
        action = self._tool(args.tool)
        if not action.grantable:
            raise ActionError(f"tool: {action.name} declares nothing a standing grant could bound, so no grant can "
                              "cover it.", field="tool")
        if action.gate.kind == "never" and not action.hold_rule:
            raise ActionError(f"tool: {action.name} runs at once already; it needs no grant.", field="tool")
        name = " ".join(args.name.split())
        if not name:
            raise ActionError("name: give the grant a name.", field="name")
        why = ruled_out(ctx.workspace, action)
        if why:
            raise ActionError(f"tool: {why[0].upper()}{why[1:]}. Nothing was granted.", field="tool")
        limits, terms, per_call = self._limits(action, args.limits, ctx)
        cap = None
        bound = amount_bound(action)
        if args.cap is not None:
            if bound is None:
                raise ActionError(f"cap: {action.name} has no amount to cap.", field="cap")
            try:
                cap = bound.parse(args.cap, "cap")
            except BoundError as exc:
                raise ActionError(str(exc), field="cap") from None
        if per_call is not None and bound is not None:
            why = ruled_out(ctx.workspace, action, amount=per_call, amount_shown=bound.show)
            if why:
                raise ActionError(f"limits.{bound.argument}: {why[0].upper()}{why[1:]}. Nothing was granted.",
                                  field=f"limits.{bound.argument}")
        subject = {"connection": connection.id, "tool": action.name, "name": name, "limits": limits,
                   "uses": args.uses, "cap": cap, "days": args.days}
        lines = [*terms, f"At most {args.uses} use{'s' if args.uses != 1 else ''}"
                 + (f", {bound.show(cap)} in all" if cap is not None and bound is not None else ""),
                 f"For {args.days} day{'s' if args.days != 1 else ''} from when you confirm",
                 "Each use still runs through the gate: re-planned, audited, with a receipt naming this grant",
                 "Revoke it in Settings at any time; the next call then waits for you again"]
        title = f"Let {connection.name} run {action.name} without asking: {name}"
        planned = Plan({**subject, "terms": terms, "connection_name": connection.name}, Preview(title, lines))
        # staged here, with the connection as read: its write carries it (StandingGrantWrite)
        return replace(planned, effect=self._granting(planned, connection, ctx))

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        return self._granting(plan, self._connection(plan.subject["connection"], ctx), ctx)

    def _granting(self, plan: Plan, connection: Connection, ctx: ActionContext) -> Effect:
        s = plan.subject
        grant = StandingGrant(
            id=new_id("sg_"), workspace_id=ctx.workspace_id, connection_id=s["connection"], person_id=ctx.person.id,
            tool=s["tool"], name=s["name"], limits=s["limits"], max_uses=s["uses"], created_at=ctx.now,
            expires_at=ctx.now + s["days"] * 86400, cap=s["cap"], terms=tuple(s["terms"]),
            passkey=needs_passkey(ctx.workspace, self, self.gate),
        )
        result = {"grant_id": grant.id, "name": grant.name, "tool": grant.tool, "uses": grant.max_uses,
                  "expires_at": iso(grant.expires_at), "connection": s["connection_name"]}
        return Effect.writes(result, [StandingGrantWrite(grant, connection)])

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Granted {result['name']}: {result['connection']} may run {result['tool']} "
                f"{result['uses']} time{'s' if result['uses'] != 1 else ''} without asking, until "
                f"{result['expires_at'].replace('T', ' ').rstrip('Z')} UTC"]

    # -- checks ---------------------------------------------------------------------------------------

    def _connection(self, connection_id: str, ctx: ActionContext) -> Connection:
        try:
            connection = self.connection_of(ctx.workspace_id, connection_id)
        except NotFound:
            raise ActionError(f"connection_id: no connection {connection_id[:64]!r} in this workspace. Nothing was "
                              "granted.", field="connection_id") from None
        if connection.person_id != ctx.person.id:
            raise ActionError("connection_id: that connection is another person's; only the person it acts for can "
                              "give it a standing grant. Nothing was granted.", field="connection_id")
        if connection.revoked:
            raise ActionError(f"connection_id: {connection.name} was revoked; it can be granted nothing. Nothing was "
                              "granted.", field="connection_id")
        return connection

    def _tool(self, tool: str) -> Action:
        try:
            return self.tool_of(tool)
        except ActionError as exc:
            raise ActionError(f"tool: {exc.message}", field="tool") from None

    def _limits(self, action: Action, given: dict[str, Any], ctx: ActionContext
                ) -> tuple[dict[str, Any], list[str], int | None]:
        """The limits as stored (thousandths, sorted ids), their words, and the per-call amount."""
        declared = {b.argument: b for b in action.grantable}
        named = ", ".join(f"{b.argument} ({b.label or b.kind})" for b in action.grantable)
        for key in given:
            if key not in declared:
                raise ActionError(f"limits.{str(key)[:64]}: {action.name} does not declare {str(key)[:64]!r} as "
                                  f"something a grant may bound; it declares {named}. Nothing was granted.",
                                  field=f"limits.{str(key)[:64]}")
        limits: dict[str, Any] = {}
        terms: list[str] = []
        per_call = None
        for argument, bound in declared.items():
            if argument not in given:
                raise ActionError(f"limits.{argument}: required: every bound {action.name} declares is set "
                                  f"({named}).", field=f"limits.{argument}")
            what = f"limits.{argument}"
            try:
                if isinstance(bound, AmountBound):
                    per_call = bound.parse(given[argument], what)
                    limits[argument] = {"max": per_call}
                    terms.append(f"{(bound.label or argument).capitalize()}: at most {bound.show(per_call)} a call")
                else:
                    picked, names = bound.parse(given[argument], ctx, what)
                    limits[argument] = {"in": picked}
                    terms.append(f"{(bound.label or argument).capitalize()}: {', '.join(names)}")
            except BoundError as exc:
                raise ActionError(str(exc), field=what) from None
        return limits, terms, per_call


# -- set_standing_grants_never: the owner's rules as a held request -----------------------------------


class NeverArgs(Arguments):
    rules: list[str] = Field(max_length=MAX_LIST_SETTING,
                             description="What no standing grant may cover: tool:<name>, class:<always|client|setting|"
                                         "when>, risky, or over:<amount> (an empty list: no rule)")


class SetStandingGrantsNever(OwnerSettingChange):
    """The held request that sets what no standing grant may cover (the owner only), as Settings →
    Policy (``POST /api/standing-grants/rules``) and ``countersign policy import`` file it: the
    setting changes only when the owner confirms its card."""

    name = "set_standing_grants_never"
    setting = SETTING
    owner_can = "rule what no standing grant may cover"
    title = "Preparing a change of what no standing grant may cover"
    description = ("Set what no standing grant may cover in this workspace (the workspace owner only). Filed from "
                   "the command line.")
    arguments = NeverArgs
    gate = ALWAYS
    destructive = True  # a policy change: risky by the passkey policy's own rule, as set_passkey_policy is
    agent_tool = False
    drift_message = "What no standing grant may cover changed between the preview and the answer; nothing was changed."

    def __init__(self, tool_of: Callable[[str], Action]):
        self.tool_of = tool_of

    def normal(self, rules: list[str]) -> tuple[str, ...]:
        """``rules`` as the setting keeps them (each once, in order); :class:`ActionError` naming the
        first that is no rule, or names no tool here."""
        for i, rule in enumerate(rules):
            where = f"rules[{i}]"
            if rule == "any" or not LIST_SETTINGS[SETTING].fullmatch(rule):
                raise ActionError(f"{where}: {rule[:60]!r} is not a rule of what no grant may cover: tool:<name>, "
                                  "class:<always, client, setting or when>, risky, or over:<amount>. Nothing was "
                                  "changed.", field=where)
            check_when(where, rule, self.tool_of)
        return tuple(dict.fromkeys(rules))

    def plan(self, args: NeverArgs, ctx: ActionContext) -> Plan:
        self.refuse_unless_owner(ctx)
        current = tuple(rules_of(ctx.workspace))
        after = self.normal(args.rules)
        if after == current:
            raise ActionError("rules: these are the rules of what no standing grant may cover already; nothing was "
                              "changed.", field="rules")

        def said(rules: tuple[str, ...]) -> str:
            return "; ".join(when_words(r) for r in rules) if rules else "(no rule: any tool that declares bounds)"

        lines = [f"Now: {said(current)}", f"After: {said(after)}",
                 "Checked when granting and at every call: a grant made before a rule stops covering what it rules out"]
        return self.change(list(current), list(after), Preview("Change what no standing grant may cover", lines))

    def result(self, after: list[str]) -> dict[str, Any]:
        return {"rules": list(after)}

    def outcome_lines(self, result: dict) -> list[str]:
        rules = result["rules"]
        return [f"No standing grant may cover: {'; '.join(when_words(r) for r in rules)}" if rules
                else "No rule: a standing grant may cover any tool that declares bounds"]


def toolset(tool_of: Callable[[str], Action], connection_of: Callable[[str, str], Connection]) -> Toolset:
    """The standing-grants toolset every deployment serves (its actions are no MCP tools)."""
    return Toolset("standing_grants", actions=[CreateStandingGrant(tool_of, connection_of),
                                               SetStandingGrantsNever(tool_of)])


# -- a call inside a grant ---------------------------------------------------------------------------


@dataclass
class Coverage:
    """What the standing grants of a call's connection say about it: the reply of the call a grant
    ran; or the card of the same request that answers it instead (``held``); or, when none covered
    it, why each grant for its tool did not (``notes``, for the held reply)."""

    reply: dict[str, Any] | None = None
    held: Card | None = None
    notes: list[str] = field(default_factory=list)


def why_not(grant: StandingGrant, q: Question, now: int) -> str | None:
    """Why ``grant`` does not cover ``q`` (a sentence), or None when it does."""
    state = grant.state_at(now)
    if state == "revoked":
        return "it was revoked"
    if state == "expired":
        return f"it expired at {iso(grant.expires_at)}"
    if grant.uses >= grant.max_uses:
        return f"its {grant.max_uses} uses are used up"
    action, ctx = q.action, q.ctx
    bound = amount_bound(action)
    amount = bound.amount(q.plan.subject) if bound is not None else None
    why = ruled_out(ctx.workspace, action, q.gate.kind, amount, bound.show if bound else None)
    if why:
        return why
    if q.needs_passkey and not grant.passkey:
        return ("it was granted without a passkey and the workspace's passkey policy now asks for one for this "
                "request")
    declared = {b.argument: b for b in action.grantable}
    if set(grant.limits) != set(declared):
        return f"{action.name} now declares other bounds than the grant has"
    for argument, bound_ in declared.items():
        limit = grant.limits[argument]
        if isinstance(bound_, AmountBound):
            value = bound_.amount(q.plan.subject)
            if value < 0:
                return f"a negative {argument} is never covered by a grant"
            if value > int(limit.get("max", -1)):
                return f"{bound_.show(value)} is over its limit of {bound_.show(int(limit.get('max', 0)))} a call"
            if grant.cap is not None and grant.spent + value > grant.cap:
                return (f"{bound_.show(value)} would pass its cap: {bound_.show(grant.spent)} of "
                        f"{bound_.show(grant.cap)} used")
        elif isinstance(bound_, ChoiceBound) and not bound_.covers(q.plan.subject, ctx, limit.get("in", [])):
            return f"its {argument} is not one the grant allows ({bound_.label or argument})"
    return None


def _use(grant: StandingGrant, q: Question) -> GrantUse:
    bound = amount_bound(q.action)
    amount = bound.amount(q.plan.subject) if bound is not None else 0
    return GrantUse(grant.id, grant.workspace_id, grant.connection_id, q.ctx.now, amount, grant.cap,
                    details={"name": grant.name})


def run_if_granted(desk: CardDesk, q: Question) -> Coverage:
    """Run ``q`` under the first standing grant of its connection that covers it (soonest to
    expire first), through the runner, consuming one use in the card's own commit. A grant whose
    use was taken meanwhile (raced, revoked) is passed over; with none left the call is held as any
    call is. A live card of the same request (or one answered lately) answers instead: a retry
    never runs twice."""
    if not _may_be_granted(q):
        return Coverage()
    if q.quorum is not None:  # several people must approve it: no one person's grant answers for them
        return Coverage(notes=[quorum_note(q)])
    notes: list[str] = []
    for grant in _candidates(desk, q):
        why = why_not(grant, q, q.ctx.now)
        if why is not None:
            notes.extend(_noted(grant, why, q.ctx.now))
            continue
        use = _use(grant, q)
        answer = Answer(f"person:{grant.person_id}", CHANNEL, grant=use, counts=q.counts)
        try:
            card = run_new(desk, q, answer)
        except GrantUnavailable:
            notes.append(f"Not run under grant ‘{grant.name}’: another call took what was left of it.")
            continue
        except Taken as taken:  # the same request has a card: it answers (as a second identical call would get)
            return Coverage(held=taken.card)
        if card.state not in (CardState.COMPLETED, CardState.RUNNING):  # it failed: nothing ran, no use taken
            return Coverage(reply=status_reply(card))
        return Coverage(reply=granted_reply(desk, card, grant.id))
    return Coverage(notes=notes)


def covering(desk: CardDesk, q: Question) -> tuple[StandingGrant | None, list[str]]:
    """Reading only (``countersign policy test``): the grant :func:`run_if_granted` would run ``q``
    under now, or None, and the notes of the grants passed over before it (all of them when none)."""
    if not _may_be_granted(q):
        return None, []
    if q.quorum is not None:
        return None, [quorum_note(q)]
    notes: list[str] = []
    for grant in _candidates(desk, q):
        why = why_not(grant, q, q.ctx.now)
        if why is None:
            return grant, notes
        notes.extend(_noted(grant, why, q.ctx.now))
    return None, notes


def quorum_note(q: Question) -> str:
    assert q.quorum is not None
    return (f"Not run under a standing grant: the quorum rule ‘{q.quorum.get('name')}’ covers this request and "
            f"needs {q.quorum.get('needs')} approvals.")


def _may_be_granted(q: Question) -> bool:
    return q.ctx.connection is not None and bool(q.action.grantable)


def _candidates(desk: CardDesk, q: Question) -> list[StandingGrant]:
    """The grants of ``q``'s connection for its tool and person, soonest to expire first. None
    are read when the connection, as its call read it, says that none for the tool could cover
    the call or be named in its held reply (expired more than :data:`NOTED_FOR` ago, or never
    granted): on DynamoDB, a query less on every held call of a connection without grants."""
    connection = q.ctx.connection
    assert connection is not None
    until = connection.grants_until
    if until is not None and until.get(q.tool, 0) <= q.ctx.now - NOTED_FOR:
        return []
    grants = [g for g in desk.store.standing_grants.list_standing_grants(q.ctx.workspace.id,
                                                                         connection_id=connection.id)
              if g.tool == q.tool and g.person_id == q.ctx.person.id]
    return sorted(grants, key=lambda g: (g.expires_at, g.created_at, g.id))


def _noted(grant: StandingGrant, why: str, now: int) -> list[str]:
    """The held reply's note of a grant passed over: a live one, or one that expires (or expired)
    less than :data:`NOTED_FOR` ago, whatever became of it."""
    if grant.state_at(now) == "active" or grant.expires_at > now - NOTED_FOR:
        return [f"Not run under grant ‘{grant.name}’: {why}."]
    return []


def granted_reply(desk: CardDesk, card: Card, grant_id: str) -> dict[str, Any]:
    """The completed card's reply, with what is left of the grant that ran it."""
    reply = status_reply(card)
    grant = desk.store.standing_grants.get_standing_grant(card.workspace_id, grant_id)
    reply["grant"] = grant_summary(desk, grant)
    reply["message"] = grant_message(desk, grant)
    return reply


def grant_summary(desk: CardDesk, grant: StandingGrant) -> dict[str, Any]:
    summary: dict[str, Any] = {"id": grant.id, "name": grant.name, "usesLeft": grant.uses_left,
                               "uses": grant.max_uses, "expiresAt": iso(grant.expires_at)}
    bound = _bound_of(desk, grant.tool)
    if grant.cap is not None and bound is not None:
        summary["capLeft"] = bound.show(grant.cap_left or 0)
        summary["cap"] = bound.show(grant.cap)
    return summary


def grant_message(desk: CardDesk, grant: StandingGrant) -> str:
    text = (f"Ran under grant ‘{grant.name}’: {grant.uses_left} of {grant.max_uses} use"
            f"{'s' if grant.max_uses != 1 else ''} left, expires {iso(grant.expires_at)}")
    bound = _bound_of(desk, grant.tool)
    if grant.cap is not None and bound is not None:
        text += f"; {bound.show(grant.cap_left or 0)} of {bound.show(grant.cap)} left under its cap"
    return text + "."


def _bound_of(desk: CardDesk, tool: str) -> AmountBound | None:
    try:
        return amount_bound(desk.registry.action(tool))
    except ActionError:
        return None
