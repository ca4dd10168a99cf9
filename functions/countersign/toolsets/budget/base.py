"""What every budget write shares: class ``client``, the budget's drift sentence, the ``undo`` step."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import WithJsonSchema

from ...gate.actions import CLIENT, Action, ActionContext, Step
from .model import DRIFT

Amount = Annotated[Any, WithJsonSchema({
    "anyOf": [{"type": "number"}, {"type": "string"}],
    "description": "An amount in currency units, e.g. 150.00 or \"-86.40\" (outflows negative).",
})]


class BudgetAction(Action):
    """A held budget write: asked in the client when it can, else a card or a code."""

    gate = CLIENT
    drift_message = DRIFT

    def next_steps(self, result: dict, ctx: ActionContext) -> list[Step]:
        op = result.get("operation_id")
        if not op:
            return []
        return [Step("undo_operation", f"To take this back, call undo_operation with operation_id {op}.")]


def title_to_summary(title: str) -> str:
    """``Recategorise 2 transaction(s)?`` → ``recategorise 2 transaction(s)`` (the operation's summary)."""
    text = title[:-1] if title.endswith("?") else title
    return text[:1].lower() + text[1:]
