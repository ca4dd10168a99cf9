"""Categories: ``update_category`` (rename or move) and ``create_category``."""

from __future__ import annotations

from pydantic import Field

from ...core.ids import new_id
from ...core.preview import Preview, one_line
from ...toolkit import ActionContext, ActionError, Arguments, Effect, Plan
from .base import BudgetAction, title_to_summary
from .model import MAX_CATEGORIES, BudgetPlan, Ledger, ledger_of, too_many_categories
from .operations import Planning, category_change, commit

MAX_NAME = 100


def _name(value: str | None, field: str) -> str:
    name = one_line(value)
    if not name:
        raise ActionError(f"{field}: a category needs a name.", field=field)
    if len(name) > MAX_NAME:
        raise ActionError(f"{field}: at most {MAX_NAME} characters.", field=field)
    return name


def _check_free(ledger: Ledger, group_id: str, name: str, field: str, except_id: str | None = None) -> None:
    for doc in ledger.ordered_categories(group_id):
        if doc.id != except_id and doc.data["name"].casefold() == name.casefold():
            raise ActionError(
                f"{field}: {ledger.group_name(group_id)} already has a category ‘{doc.data['name']}’ ({doc.id}).",
                field=field,
            )


def _writable_group(ledger: Ledger, group_id: str, field: str = "group_id"):
    group = ledger.group(group_id, field)
    if group.data.get("internal"):
        raise ActionError(f"{field}: {group.data['name']} is built in; it takes no new categories.", field=field)
    return group


class UpdateCategoryArgs(Arguments):
    category_id: str = Field(description="The category to change")
    name: str | None = Field(default=None, max_length=200, description="Its new name (leave out to keep it)")
    group_id: str | None = Field(default=None, description="The group to move it to (leave out to keep it)")


class UpdateCategory(BudgetAction):
    name = "update_category"
    title = "Preparing a category change confirmation"
    description = (
        "Rename a category or move it to another group. "
        'The person sees "Change category ‘Tennis’ (Fun) to ‘Sport’ (Fun)?".'
    )
    arguments = UpdateCategoryArgs
    fixed_writes = 2  # the category doc and the operation: no transaction, budget or roll-up

    def propose(self, args: UpdateCategoryArgs, ctx: ActionContext) -> Plan:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        category = ledger.category(args.category_id)
        if category.data.get("internal"):
            raise ActionError(
                f"category_id: {category.data['name']} is built in; it cannot be changed.", field="category_id"
            )
        if args.name is None and args.group_id is None:
            raise ActionError("name: give a new name, a new group_id, or both.", field="name")
        name = _name(args.name, "name") if args.name is not None else category.data["name"]
        group = (
            _writable_group(ledger, args.group_id)
            if args.group_id is not None
            else ledger.group(category.data["group_id"])
        )
        if name == category.data["name"] and group.id == category.data["group_id"]:
            raise ActionError(f"name: the category is already {ledger.category_label(category.id)}.", field="name")
        _check_free(ledger, group.id, name, "name", except_id=category.id)
        before_group = category.data["group_id"]
        subject = {
            "category": category.id,
            "before": {
                "name": category.data["name"],
                "group": before_group,
                "group_name": ledger.group_name(before_group),
            },
            "after": {"name": name, "group": group.id, "group_name": group.data["name"]},
        }
        title = f"Change category {ledger.category_label(category.id)} to ‘{name}’ ({group.data['name']})?"
        return BudgetPlan(subject, Preview(title), ledger)

    def effect_of(self, plan: Plan, ctx: ActionContext, planning: Planning | None) -> Effect:
        s = plan.subject
        ledger = ledger_of(plan, ctx.store, ctx.workspace_id)
        current = ledger.categories.get(s["category"])
        before = {"name": s["before"]["name"], "group_id": s["before"]["group"]}
        after = {"name": s["after"]["name"], "group_id": s["after"]["group"]}
        if s["after"]["group"] != s["before"]["group"] and current is not None:
            siblings = [d.data.get("position", 0) for d in ledger.ordered_categories(s["after"]["group"])]
            before["position"] = current.data.get("position", 0)
            after["position"] = max(siblings, default=0) + 1
        op_id, writes = commit(ctx, ledger, [category_change(s["category"], before, after)], "update_category",
                       title_to_summary(plan.preview.title), planning=planning)
        return Effect.writes({"operation_id": op_id, "category_id": s["category"], "name": s["after"]["name"],
                "group_id": s["after"]["group"], "group_name": s["after"]["group_name"]}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"The category is now ‘{result['name']}’, in {result['group_name']}"]


class CreateCategoryArgs(Arguments):
    group_id: str = Field(description="The group the category goes in (an id from list_categories)")
    name: str = Field(max_length=200, description="The new category's name")


class CreateCategory(BudgetAction):
    name = "create_category"
    title = "Preparing a new-category confirmation"
    description = "Create a category in a group. The person sees 'Create category ‘Pets’ in Everyday?'."
    arguments = CreateCategoryArgs
    fixed_writes = 2  # the category doc and the operation: no transaction, budget or roll-up

    def propose(self, args: CreateCategoryArgs, ctx: ActionContext) -> Plan:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        group = _writable_group(ledger, args.group_id)
        have = len(ledger.categories) - 1  # not Ready to Assign
        if have >= MAX_CATEGORIES:
            raise ActionError(too_many_categories(1, have))
        name = _name(args.name, "name")
        _check_free(ledger, group.id, name, "name")
        subject = {"group": group.id, "group_name": group.data["name"], "name": name}
        return BudgetPlan(subject, Preview(f"Create category ‘{name}’ in {group.data['name']}?"), ledger)

    def effect_of(self, plan: Plan, ctx: ActionContext, planning: Planning | None) -> Effect:
        s = plan.subject
        ledger = ledger_of(plan, ctx.store, ctx.workspace_id)
        if s["group"] not in ledger.groups:
            raise ActionError(
                f"{self.drift_message} (the group {s['group_name']} no longer exists); nothing was written."
            )
        try:
            _check_free(ledger, s["group"], s["name"], "name")
        except ActionError:
            raise ActionError(
                f"{self.drift_message} (‘{s['name']}’ now exists in {s['group_name']}); nothing was written."
            ) from None
        positions = [d.data.get("position", 0) for d in ledger.ordered_categories(s["group"])]
        category_id = new_id("cat_")
        data = {
            "name": s["name"],
            "group_id": s["group"],
            "position": max(positions, default=0) + 1,
            "hidden": False,
            "note": "",
        }
        op_id, writes = commit(ctx, ledger, [category_change(category_id, None, data)], "create_category",
                       title_to_summary(plan.preview.title), planning=planning)
        return Effect.writes(
            {"operation_id": op_id, "category_id": category_id, "name": s["name"], "group_id": s["group"]}, writes
        )

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Created the category ‘{result['name']}’"]
