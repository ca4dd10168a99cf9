"""One held call being decided: the action, its arguments, who asks, and the plan shown.

A :class:`Question` is made once per call (and once per answer: every answer re-plans on the
state as it is then, :meth:`Question.replan`), and carries everything the gate's paths need, so
they pass one value instead of seven.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.canonical import canonical_json, subject_fingerprint
from ..store.records import MAX_ARGUMENTS_BYTES
from ..toolkit import Action, ActionContext, ActionError, Effect, GateClass, Plan, Unavailable
from ..toolkit.arguments import ArgumentError, check_depth
from .errors import DriftError
from .passkey_policy import needs_passkey


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
    action: Action
    arguments: dict[str, Any]  # as the agent sent them: what a card stores and its ticket binds
    args: Any  # parsed
    ctx: ActionContext
    plan: Plan
    fingerprint: str

    @classmethod
    def of(cls, action: Action, arguments: dict[str, Any], ctx: ActionContext, *, answering: bool = False) -> Question:
        """Parse and plan. ``answering``: a plan that fails is drift (the state moved since the preview)."""
        args = parse(action, arguments)
        plan = plan_at_answer(action, args, ctx) if answering else action.plan(args, ctx)
        return cls(action, arguments, args, ctx, plan, subject_fingerprint(ctx.workspace.id, action.name, plan.subject))

    @property
    def tool(self) -> str:
        return self.action.name

    @property
    def gate(self) -> GateClass:
        return self.action.gate_class(self.args, self.ctx)

    def allows_in_client(self) -> bool:
        return self.gate.allows_in_client(self.ctx) and not self.needs_passkey()

    def needs_passkey(self) -> bool:
        """Under the workspace's passkey policy only a passkey on the confirm page confirms this."""
        return needs_passkey(self.ctx.workspace, self.action, self.gate)

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
        return Question(self.action, self.arguments, self.args, ctx, plan, moved_to)
