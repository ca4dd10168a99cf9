"""One held call being decided, and the answer it gets: two values the gate's paths pass down.

A :class:`Question` is made once per call (and once per answer: every answer re-plans on the
state as it is then, :meth:`Question.replan`), and carries everything the gate's paths need, so
they pass one value instead of seven. An :class:`Answer` is made where an answer arrives (a
click on the confirm page, an answer in the client, a code) and passed down to the commit that
records it. Both carry the request's counts against the request limits (``counts``), so the write
that files or answers the request's card takes them in its transaction (docs/operations.md,
"Request limits").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.canonical import canonical_json, subject_fingerprint
from ..store.cards import MAX_ARGUMENTS_BYTES
from ..store.limits import RequestCounts
from ..store.standing_grants import GrantUse
from ..toolkit import Action, ActionContext, ActionError, Effect, GateClass, Plan, Unavailable
from ..toolkit.arguments import ArgumentError, check_depth
from .errors import DriftError
from .passkey_policy import needs_passkey
from .quorum_rules import SETTING as QUORUM_RULES, rule_for


def parse(action: Action, arguments: dict[str, Any]) -> Any:
    """Arguments are untrusted: bounded in depth and size, then validated strictly against the
    action's model (which also refuses what canonical JSON cannot hold, such as NaN)."""
    try:
        check_depth(arguments)  # before anything walks them (canonical JSON does, recursively)
    except ArgumentError as exc:
        raise ActionError(f"{exc.message} Nothing was written.", field=exc.field) from None
    try:
        size = len(canonical_json(arguments).encode("utf-8"))
    except ValueError:  # a number that is not finite: refused by name below
        size = 0
    if size > MAX_ARGUMENTS_BYTES:
        raise ActionError("arguments: over 64 KiB; nothing was written.", field="arguments")
    return action.parse(arguments)


def plan_at_answer(action: Action, args: Any, ctx: ActionContext) -> Plan:
    """The plan at answer time: a subject that can no longer be planned means the state moved;
    an outside dependency that cannot be reached (:class:`Unavailable`) means nothing, and passes."""
    try:
        return action.plan(args, ctx)
    except Unavailable:
        raise
    except ActionError as exc:
        raise DriftError(f"{action.drift_message} ({exc.message})", field=exc.field) from None


@dataclass(frozen=True)
class Question:
    """A call's question, planned at ``ctx.now``; what the gate decides from it is worked out
    once, when it is made: the action's class for these arguments (``gate``), whether the
    workspace's passkey policy covers it (``needs_passkey``: only a passkey on the confirm page
    confirms it), and whether an answer in the client may confirm it (``allows_in_client``)."""

    action: Action
    arguments: dict[str, Any]  # as the agent sent them: what a card stores and its ticket binds
    args: Any  # parsed
    ctx: ActionContext
    plan: Plan
    fingerprint: str
    tool: str = field(init=False)
    gate: GateClass = field(init=False)
    needs_passkey: bool = field(init=False)
    allows_in_client: bool = field(init=False)
    # The workspace's quorum rule this call falls under (countersign.gate.quorum_rules), or None: then
    # one person's yes runs it; else only approvals on the confirm page do, never an answer in the client.
    quorum: dict[str, Any] | None = field(init=False)
    # The counts of the request that asks (None: no limit applies, or none is being served): taken by
    # the write that files its card (CardDesk.file) or looks at its request (CardDesk.recent).
    counts: RequestCounts | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        gate = self.action.gate_class(self.args, self.ctx)
        passkey = needs_passkey(self.ctx.workspace, self.action, gate)
        rules = self.ctx.workspace.settings.get(QUORUM_RULES)  # (read here only when a workspace has some)
        quorum = rule_for(rules, self.action, gate, self.plan.subject) if rules and rules != "[]" else None
        object.__setattr__(self, "tool", self.action.name)
        object.__setattr__(self, "gate", gate)
        object.__setattr__(self, "needs_passkey", passkey)
        object.__setattr__(self, "quorum", quorum)
        object.__setattr__(self, "allows_in_client", gate.allows_in_client(self.ctx) and not passkey and not quorum)

    @classmethod
    def of(cls, action: Action, arguments: dict[str, Any], ctx: ActionContext, *, answering: bool = False,
           counts: RequestCounts | None = None) -> Question:
        """Parse and plan. ``answering``: a plan that fails is drift (the state moved since the preview).
        ``counts``: the asking request's (:attr:`counts`)."""
        args = parse(action, arguments)
        plan = plan_at_answer(action, args, ctx) if answering else action.plan(args, ctx)
        return cls(action, arguments, args, ctx, plan, subject_fingerprint(ctx.workspace.id, action.name, plan.subject),
                   counts)

    def effect(self) -> Effect:
        """What a yes commits: the effect the plan staged (:attr:`Plan.effect`), else ``apply``'s."""
        return self.plan.effect if self.plan.effect is not None else self.action.apply(self.plan, self.ctx)

    def replan(self, now: int, shown: str | None = None) -> Question:
        """This question on the state as it is at ``now`` (the workspace read again).

        :class:`DriftError` unless it is still the change the person was shown (``shown``, by
        default this question's own fingerprint): nothing may run on a moved subject.
        """
        ctx = self.ctx.refreshed(now)
        plan = plan_at_answer(self.action, self.args, ctx)
        moved_to = subject_fingerprint(ctx.workspace.id, self.action.name, plan.subject)
        if moved_to != (shown or self.fingerprint):
            raise DriftError(self.action.drift_message)
        return Question(self.action, self.arguments, self.args, ctx, plan, moved_to, self.counts)


@dataclass
class Answer:
    """One answer, from where it arrives down to the commit that records it: who gave it
    (``actor``), through which ``channel``, and what that commit claims and spends with the card.

    * ``asked_at`` — when the question was put. A card this answer files already decided claims
      its request only if no card holds it and none was decided at or after then (an older yes
      never overrides a newer no); the store checks it in the commit's own transaction, so the
      common case (a request with no card) reads nothing first. None: the card claims its request
      as any filing does (the answer found out which card holds it, and that it was decided before).
    * ``nonce`` — a 2026-07-28 answer's single-use value (value, until), spent by the first commit
      that records the answer, in its transaction (a replayed answer writes nothing); None once
      spent, or if there is none. An answer that ends without a commit spends it on its own
      (:func:`countersign.gate.answers.resolve`).
    * ``passkey`` — the verified passkey assertion a Confirm on the confirm page was signed with.
    * ``votes`` — a quorum card's votes, this last yes among them (:mod:`countersign.gate.quorum`).
    * ``grant`` — the use of a standing grant this yes is (channel ``grant``: the person said yes
      in advance, :mod:`countersign.gate.standing_grants`), consumed by the commit that runs the
      card, in its transaction.
    * ``counts`` — the counts against the request limits of the request the answer came in (None:
      no limit applies, or it came in no request: the sweep, the command line), taken by the first
      commit that records it unless taken already (:attr:`~countersign.store.cards.CardCommit.counts`).

    Mutable on purpose: the commit that spends the nonce clears it
    (:meth:`CardDesk.commit <countersign.gate.desk.CardDesk.commit>`), and an answer that finds its
    request held by a card decided before the question clears ``asked_at``.
    """

    actor: str
    channel: str
    asked_at: int | None = None
    nonce: tuple[str, int] | None = None
    passkey: dict | None = None
    grant: GrantUse | None = None
    # A quorum card's votes with this yes, the last one needed (countersign.gate.quorum): written with
    # the move that runs it; its audit entry and result name every approver.
    votes: tuple[dict[str, Any], ...] | None = None
    counts: RequestCounts | None = field(default=None, compare=False, repr=False)
