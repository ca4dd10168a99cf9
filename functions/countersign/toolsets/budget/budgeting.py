"""Assigning money to a category for a month: ``set_category_budget``."""

from __future__ import annotations

from pydantic import Field

from ...core.preview import Preview
from ...toolkit import ActionContext, ActionError, AmountBound, Arguments, ChoiceBound, Editable, Effect, Plan
from .base import Amount, BudgetAction, title_to_summary
from .model import CATEGORY, MONTH, BudgetPlan, Ledger, display, ledger_of, resolve_month, to_milliunits
from .operations import Planning, budget_change, commit
from .rollup import built_ledger, change_keys, most_rollups
from .values import month_name


class SetBudgetArgs(Arguments):
    category_id: str = Field(description="The category (an id from list_categories)")
    month: str = Field(description="2026-09, 2026-09-01, current or next")
    amount: Amount = Field(description="The amount to budget, in currency units (e.g. 150.00)")


def _budgeted_categories(ctx: ActionContext) -> list[tuple[str, str]]:
    """The categories a budget can be set for (not the internal ones that hold income), by name."""
    found = Ledger(ctx.store, ctx.workspace_id).categories.values()
    return sorted(((c.id, c.data["name"]) for c in found if not c.data.get("internal")), key=lambda c: c[1])


class SetCategoryBudget(BudgetAction):
    name = "set_category_budget"
    title = "Preparing a budget confirmation"
    description = (
        "Set the amount budgeted in a category for a month. The person sees "
        "'Budget Restaurants for 2026-09-01: 120.00 → 150.00?'."
    )
    arguments = SetBudgetArgs
    grantable = (
        AmountBound("amount", amount=lambda subject: subject["amount"], label="amount budgeted"),
        ChoiceBound("category_id", values=lambda subject, ctx: [subject["category"]], choices=_budgeted_categories,
                    label="categories"),
    )
    editable = (Editable("amount", label="amount budgeted", kind="amount",
                         shown=lambda subject: display(subject["amount"])),)

    def propose(self, args: SetBudgetArgs, ctx: ActionContext) -> Plan:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        month = None
        try:  # the two docs it needs, in one read (a bad category is still reported before a bad month)
            month = resolve_month(args.month, ctx.now)
            ledger.prefetch([(CATEGORY, args.category_id), (MONTH, month), *change_keys(month, ctx.now)])
        except ActionError:
            pass
        category = ledger.category(args.category_id)
        if category.data.get("internal"):
            raise ActionError(
                f"category_id: {category.data['name']} holds income; it is not budgeted.", field="category_id"
            )
        if month is None:  # (a bad month, refused now)
            month = resolve_month(args.month, ctx.now)
        amount = to_milliunits(args.amount, "amount")
        before = ledger.budgeted(month, category.id)
        name = category.data["name"]
        if before == amount:
            raise ActionError(f"amount: {name} already has {display(amount)} budgeted for {month}.", field="amount")
        title = f"Budget {name} for {month}: {display(before)} → {display(amount)}?"
        subject = {"category": category.id, "category_name": name, "month": month, "before": before, "amount": amount}
        return BudgetPlan(subject, Preview(title), ledger)

    def most_writes(self, plan: Plan) -> int | None:
        """The month doc, the operation and the roll-ups of its year (:func:`.rollup.most_rollups`)
        in a budget whose roll-ups are built; without them (built first, in batches of their own)
        staging counts them."""
        built = built_ledger(plan.ledger) if isinstance(plan, BudgetPlan) and plan.ledger is not None else None
        if built is None:
            return None
        return 2 + most_rollups(set(built.data.get("years") or []), {plan.subject["month"][:4]})

    def effect_of(self, plan: Plan, ctx: ActionContext, planning: Planning | None) -> Effect:
        s = plan.subject
        ledger = ledger_of(plan, ctx.store, ctx.workspace_id)
        op_id, writes = commit(
            ctx,
            ledger,
            [budget_change(s["month"], s["category"], s["before"], s["amount"])],
            "budget",
            title_to_summary(plan.preview.title),
            planning=planning,
        )
        return Effect.writes({"operation_id": op_id, "category_id": s["category"], "month": s["month"],
                "budgeted": display(s["amount"]), "budgeted_milliunits": s["amount"]}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Budgeted {result['budgeted']} for {month_name(result['month'])}"]
