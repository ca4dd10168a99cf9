"""Categorising and approving transactions: ``apply_categories`` (held) and ``approve_transactions`` (runs at once)."""

from __future__ import annotations

from pydantic import Field

from ...core.preview import Preview
from ...toolkit import NEVER, ActionContext, ActionError, Arguments, Effect, Plan, Step
from .base import BudgetAction, title_to_summary
from .model import CATEGORY, BudgetPlan, Ledger, is_split, is_transfer, ledger_of, txn_line
from .operations import Planning, commit, txn_change
from .values import counted


class CategoryChange(Arguments):
    transaction_id: str = Field(description="The transaction to recategorise (an id from list_transactions)")
    category_id: str = Field(description="The category it should have (an id from list_categories)")


class ApplyCategoriesArgs(Arguments):
    changes: list[CategoryChange] = Field(min_length=1, max_length=200, description="One entry per transaction")


class ApplyCategories(BudgetAction):
    name = "apply_categories"
    title = "Preparing a recategorisation confirmation"
    description = (
        "Set the category of one or more transactions (at most 200 per call). The person sees "
        "'Recategorise N transaction(s)?' and one line per change: date, payee, amount, before → after."
    )
    arguments = ApplyCategoriesArgs

    def propose(self, args: ApplyCategoriesArgs, ctx: ActionContext) -> Plan:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        ledger.locate_with([c.transaction_id for c in args.changes],
                           [(CATEGORY, c.category_id) for c in args.changes if isinstance(c.category_id, str)])
        seen: set[str] = set()
        items, lines = [], []
        for i, change in enumerate(args.changes):
            at = f"changes[{i}]"
            ref = ledger.txn(change.transaction_id, f"{at}.transaction_id")
            if ref.id in seen:
                raise ActionError(f"{at}.transaction_id: {ref.id} is listed twice.", field=f"{at}.transaction_id")
            seen.add(ref.id)
            category = ledger.category(change.category_id, f"{at}.category_id")
            txn = ref.data
            if is_split(txn):
                raise ActionError(
                    f"{at}.transaction_id: {txn_line(txn)} is split across categories; its category cannot be set.",
                    field=f"{at}.transaction_id",
                )
            if is_transfer(txn):
                raise ActionError(
                    f"{at}.transaction_id: {txn_line(txn)} is a transfer between accounts; it takes no category.",
                    field=f"{at}.transaction_id",
                )
            if txn.get("category_id") == category.id:
                raise ActionError(
                    f"{at}.category_id: {txn_line(txn)} is already in {category.data['name']}; leave it out.",
                    field=f"{at}.category_id",
                )
            before_name = ledger.txn_category_name(txn)
            items.append({
                "transaction": ref.id, "date": txn["date"], "payee": txn["payee"],
                "amount": txn["amount"], "before": txn.get("category_id"), "before_name": before_name,
                "after": category.id, "after_name": category.data["name"],
            })
            lines.append(f"{txn_line(txn)}, {before_name} → {category.data['name']}")
        title = f"Recategorise {len(items)} transaction(s)?"
        return BudgetPlan({"changes": items}, Preview(title, lines), ledger)

    def effect_of(self, plan: Plan, ctx: ActionContext, planning: Planning | None) -> Effect:
        ledger = ledger_of(plan, ctx.store, ctx.workspace_id)
        items = plan.subject["changes"]
        changes = [txn_change(it["transaction"], {"category_id": it["before"]}, {"category_id": it["after"]})
                   for it in items]
        op_id, writes = commit(ctx, ledger, changes, "recategorise", title_to_summary(plan.preview.title),
                               planning=planning)
        return Effect.writes({
            "operation_id": op_id,
            "recategorised": len(items),
            "transactions": [{"id": it["transaction"], "category_id": it["after"], "category_name": it["after_name"]}
                             for it in items],
        }, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        into: dict[str, int] = {}
        for t in result["transactions"]:
            into[t["category_name"]] = into.get(t["category_name"], 0) + 1
        return [f"Recategorised {counted(result['recategorised'], 'transaction')}",
                *(f"{counted(n, 'transaction')} now in {name}" for name, n in into.items())]


class ApproveArgs(Arguments):
    transaction_ids: list[str] = Field(min_length=1, max_length=500, description="Transactions to approve")


class ApproveTransactions(BudgetAction):
    name = "approve_transactions"
    title = "Approving transactions"
    description = "Mark transactions as approved (runs at once; undo_operation takes it back)."
    arguments = ApproveArgs
    gate = NEVER
    destructive = False

    def propose(self, args: ApproveArgs, ctx: ActionContext) -> Plan:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        ledger.locate_with(args.transaction_ids)
        seen: set[str] = set()
        items, lines, already = [], [], []
        for i, txn_id in enumerate(args.transaction_ids):
            ref = ledger.txn(txn_id, f"transaction_ids[{i}]")
            if ref.id in seen:
                raise ActionError(f"transaction_ids[{i}]: {ref.id} is listed twice.", field=f"transaction_ids[{i}]")
            seen.add(ref.id)
            if ref.data.get("approved"):
                already.append(ref.id)
                continue
            items.append({"transaction": ref.id, "date": ref.data["date"],
                          "payee": ref.data["payee"], "amount": ref.data["amount"]})
            lines.append(txn_line(ref.data))
        if not items:
            raise ActionError(
                "transaction_ids: every one of these transactions is already approved.", field="transaction_ids"
            )
        return BudgetPlan({"approve": items, "already_approved": already},
                          Preview(f"Approve {len(items)} transaction(s)?", lines), ledger)

    def effect_of(self, plan: Plan, ctx: ActionContext, planning: Planning | None) -> Effect:
        ledger = ledger_of(plan, ctx.store, ctx.workspace_id)
        items = plan.subject["approve"]
        changes = [txn_change(it["transaction"], {"approved": False}, {"approved": True}) for it in items]
        op_id, writes = commit(ctx, ledger, changes, "approve", title_to_summary(plan.preview.title),
                               planning=planning)
        return Effect.writes({
            "operation_id": op_id,
            "approved": [it["transaction"] for it in items],
            "already_approved": plan.subject["already_approved"],
        }, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        lines = [f"Approved {counted(len(result['approved']), 'transaction')}"]
        if result["already_approved"]:
            lines.append(f"{counted(len(result['already_approved']), 'other was', 'others were')} approved already")
        return lines

    def next_steps(self, result: dict, ctx: ActionContext) -> list[Step]:
        return [Step("list_transactions", "List what still needs a category (uncategorised=true).")]

