"""What every budget write shares: class ``client``, the budget's drift sentence, the ``undo`` step."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from pydantic import WithJsonSchema

from ...toolkit import CLIENT, Action, ActionContext, Effect, Plan, Step
from . import operations
from .model import DRIFT
from .operations import Planning

Amount = Annotated[Any, WithJsonSchema({
    "anyOf": [{"type": "number"}, {"type": "string"}],
    "description": "An amount in currency units, e.g. 150.00 or \"-86.40\" (outflows negative).",
})]


class BudgetAction(Action):
    """A held budget write: asked in the client when it can, else a card or a code."""

    gate = CLIENT
    drift_message = DRIFT
    # how many records every change of this action commits, whatever it changes (None: it depends)
    fixed_writes: int | None = None

    def propose(self, args: Any, ctx: ActionContext) -> Plan:  # pragma: no cover - abstract
        """The plan of the change: what it will do and the preview the person is asked about."""
        raise NotImplementedError

    def effect_of(  # pragma: no cover - abstract
        self, plan: Plan, ctx: ActionContext, planning: Planning | None
    ) -> Effect:
        """The change's effect: its writes (:func:`.operations.commit`, handed ``planning``) and
        the result the agent sees. ``planning`` is a :class:`.operations.Planning` while the
        change is planned, None when it is applied."""
        raise NotImplementedError

    def most_writes(self, plan: Plan) -> int | None:
        """At most how many records the change of ``plan`` commits (its roll-ups counted as
        :func:`.operations.commit` counts them), known from what its plan read without staging
        it; by default :attr:`fixed_writes`, None when only staging the change can tell."""
        return self.fixed_writes

    def plan(self, args: Any, ctx: ActionContext) -> Plan:
        """:meth:`propose`, with the change staged too: its effect is made with a
        :class:`.operations.Planning` (nothing is written, nothing built), so a change too big for
        one commit is refused before the person is asked; the staged effect rides on the plan
        (:attr:`Plan.effect`) and the gate commits it without staging the change again.

        A change that :meth:`most_writes` shows fits one commit is not staged: a held call's
        plan is not applied (it is planned again when the person answers), and one that runs at
        once stages it then, once as before."""
        out = self.propose(args, ctx)
        most = self.most_writes(out)
        if most is not None and most <= operations.MAX_DOC_WRITES:
            return out
        planning = Planning()
        effect = self.effect_of(out, ctx, planning)
        return dataclasses.replace(out, effect=effect) if planning.complete else out

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        """:meth:`effect_of` the plan, applied (a budget without roll-ups gets them first)."""
        return self.effect_of(plan, ctx, None)

    def next_steps(self, result: dict, ctx: ActionContext) -> list[Step]:
        op = result.get("operation_id")
        if not op:
            return []
        return [Step("undo_operation", f"To take this back, call undo_operation with operation_id {op}.")]


def title_to_summary(title: str) -> str:
    """``Recategorise 2 transaction(s)?`` → ``recategorise 2 transaction(s)`` (the operation's summary)."""
    text = title[:-1] if title.endswith("?") else title
    return text[:1].lower() + text[1:]
