"""Taking a write back: ``undo_operation`` commits a recorded operation's changes backwards."""

from __future__ import annotations

from pydantic import Field

from ...core.ids import new_id
from ...core.preview import Preview
from ...toolkit import ActionContext, ActionError, Arguments, DocWrite, Effect, Plan
from .base import BudgetAction
from .model import OP, BudgetPlan, Ledger, display, ledger_of, txn_line
from .operations import Moved, Planning, commit, get_operation, reverse, stage

MOVED_SINCE = "The budget changed since this operation was applied"


class UndoArgs(Arguments):
    operation_id: str = Field(description="The operation to undo (from a write's result or list_operations)")


def _field_text(ledger: Ledger, key: str, value) -> str:
    if key == "category_id":
        return ledger.category_name(value)
    if key == "approved":
        return "approved" if value else "unapproved"
    if key == "cleared":
        return str(value)
    if key == "subtransactions":
        return f"split into {len(value)}" if value else "not split"
    if key == "amount":
        return display(value)
    return f"{key} {value}"


def _fields(ledger: Ledger, values: dict, keys: list[str]) -> str:
    return "; ".join(_field_text(ledger, k, values.get(k)) for k in keys)


def describe(ledger: Ledger, change: dict) -> str:
    """One preview line for one change (as it will be applied)."""
    before, after = change["before"], change["after"]
    if change["t"] == "txn":
        if before is None:
            return f"Restore {txn_line(after)}"
        if after is None:
            return f"Delete {txn_line(before)}"
        ref = ledger.find_txn(change["id"])
        head = txn_line(ref.data) if ref else change["id"]
        keys = [k for k in after if k != "amount"] or list(after)
        return f"{head}, {_fields(ledger, before, keys)} → {_fields(ledger, after, keys)}"
    if change["t"] == "budget":
        name = ledger.category_name(change["category"])
        return f"Budget {name} for {change['month']}: {display(before)} → {display(after)}"
    if change["t"] == "category":
        def label(data: dict) -> str:
            return f"‘{data['name']}’ ({ledger.group_name(data['group_id'])})"

        if before is None:
            return f"Restore category {label(after)}"
        current = ledger.categories.get(change["id"])
        if after is None:
            return f"Delete category {label(before)}"
        base = dict(current.data) if current else {}
        return f"Category {label(dict(base, **before))} → {label(dict(base, **after))}"
    return str(change)  # pragma: no cover


class UndoOperation(BudgetAction):
    name = "undo_operation"
    title = "Preparing an undo confirmation"
    description = (
        "Restore the state before a recorded operation (its id is in the write's result and in list_operations). "
        "The person sees 'Undo: recategorise 2 transaction(s)?'. Refused when the budget changed since."
    )
    arguments = UndoArgs

    def _check(self, ledger: Ledger, operation_id: str):
        doc = get_operation(ledger, operation_id)
        op = doc.data
        if op.get("undo_of"):
            raise ActionError(
                f"operation_id: {doc.id} is itself an undo; make the change again instead.", field="operation_id"
            )
        if op.get("undone_by"):
            raise ActionError(
                f"operation_id: {doc.id} ({op['summary']}) was already undone by {op['undone_by']}.",
                field="operation_id",
            )
        if not op.get("undoable"):
            note = f" {op['note']}" if op.get("note") else ""
            raise ActionError(f"operation_id: {op['summary']} cannot be undone.{note}", field="operation_id")
        return doc

    def propose(self, args: UndoArgs, ctx: ActionContext) -> Plan:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        doc = self._check(ledger, args.operation_id)
        inverse = reverse(doc.data["changes"])
        try:
            stage(ledger, inverse)
        except Moved as exc:
            raise ActionError(
                f"{MOVED_SINCE} ({exc.detail}); undoing it now would overwrite that change. Nothing was written.",
                field="operation_id",
            ) from None
        lines = [describe(ledger, c) for c in reversed(inverse)]  # in the order the operation listed them
        subject = {"operation": doc.id, "summary": doc.data["summary"], "lines": lines}
        return BudgetPlan(subject, Preview(f"Undo: {doc.data['summary']}?", lines), ledger)

    def effect_of(self, plan: Plan, ctx: ActionContext, planning: Planning | None) -> Effect:
        s = plan.subject
        ledger = ledger_of(plan, ctx.store, ctx.workspace_id)
        doc = get_operation(ledger, s["operation"])
        if doc.data.get("undone_by"):
            raise ActionError(f"{self.drift_message} ({s['operation']} was undone meanwhile); nothing was written.")
        op_id = new_id("op_")
        mark = DocWrite(OP, doc.id, dict(doc.data, undone_by=op_id, undone_at=ctx.now), doc.version)
        _, writes = commit(ctx, ledger, reverse(doc.data["changes"]), "undo", f"undo: {doc.data['summary']}",
                           undoable=False, undo_of=doc.id, extra=[mark], op_id=op_id, planning=planning)
        return Effect.writes({"operation_id": op_id, "undid": doc.id, "summary": doc.data["summary"]}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        summary = str(result["summary"])
        return [f"Undone: {summary[:1].upper()}{summary[1:]}"]

    def next_steps(self, result: dict, ctx: ActionContext):
        return []
