"""Entering and splitting transactions: ``create_transactions`` and ``split_transaction``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...core.preview import Preview, one_line
from ...toolkit import ActionContext, ActionError, Arguments, Effect, Plan
from .base import Amount, BudgetAction, title_to_summary
from .layout import new_txn_id
from .model import (
    CATEGORY,
    BudgetPlan,
    Ledger,
    display,
    is_split,
    is_transfer,
    ledger_of,
    new_txn,
    parse_date,
    to_milliunits,
)
from .operations import Planning, commit, txn_change
from .values import counted

MAX_TEXT = 500


def _text(value: str | None, field: str, *, required: bool = False, limit: int = MAX_TEXT) -> str:
    text = one_line(value)
    if required and not text:
        raise ActionError(f"{field}: must not be empty.", field=field)
    if len(text) > limit:
        raise ActionError(f"{field}: at most {limit} characters.", field=field)
    return text


class NewTransaction(Arguments):
    date: str = Field(description="YYYY-MM-DD")
    payee: str = Field(max_length=1000, description="Who was paid or who paid")
    amount: Amount = Field(description="An amount in currency units: outflows negative (e.g. -86.40), inflows positive")
    category_id: str | None = Field(default=None, description="A category id (leave out for uncategorised)")
    memo: str = Field(default="", max_length=2000)
    cleared: Literal["cleared", "uncleared"] = "uncleared"


class CreateTransactionsArgs(Arguments):
    account_id: str = Field(description="The account (an id from list_accounts)")
    transactions: list[NewTransaction] = Field(min_length=1, max_length=100)
    approved: bool = Field(default=True, description="Whether the new transactions are approved")


class CreateTransactions(BudgetAction):
    name = "create_transactions"
    title = "Preparing a new-transactions confirmation"
    description = (
        "Enter transactions on one account (at most 100 per call). The person sees "
        "'Create N transaction(s) on Checking?' and one line per transaction."
    )
    arguments = CreateTransactionsArgs

    def propose(self, args: CreateTransactionsArgs, ctx: ActionContext) -> Plan:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        account = ledger.account(args.account_id)
        if account.data.get("closed"):
            raise ActionError(f"account_id: {account.data['name']} is closed.", field="account_id")
        ledger.prefetch((CATEGORY, t.category_id) for t in args.transactions if t.category_id)
        items, lines = [], []
        for i, t in enumerate(args.transactions):
            at = f"transactions[{i}]"
            day = parse_date(t.date, f"{at}.date", ctx.now)
            payee = _text(t.payee, f"{at}.payee", required=True, limit=200)
            amount = to_milliunits(t.amount, f"{at}.amount")
            category_id = ledger.category(t.category_id, f"{at}.category_id").id if t.category_id is not None else None
            memo = _text(t.memo, f"{at}.memo")
            items.append({
                "date": day, "payee": payee, "amount": amount, "category": category_id,
                "category_name": ledger.category_name(category_id), "memo": memo, "cleared": t.cleared,
            })
            line = f"{day}, {payee}, {display(amount)}, {ledger.category_name(category_id)}"
            lines.append(line + (f" ({memo})" if memo else ""))
        subject = {"account": account.id, "account_name": account.data["name"], "approved": args.approved,
                   "transactions": items}
        return BudgetPlan(subject, Preview(f"Create {len(items)} transaction(s) on {account.data['name']}?", lines),
                          ledger)

    def effect_of(self, plan: Plan, ctx: ActionContext, planning: Planning | None) -> Effect:
        s = plan.subject
        ledger = ledger_of(plan, ctx.store, ctx.workspace_id)
        if s["account"] not in ledger.accounts:
            raise ActionError(
                f"{self.drift_message} (the account {s['account_name']} no longer exists); nothing was written."
            )
        changes, ids = [], []
        for item in s["transactions"]:
            txn_id = new_txn_id(item["date"])
            ids.append(txn_id)
            txn = new_txn(txn_id, item["date"], item["payee"], item["amount"], item["category"], memo=item["memo"],
                          cleared=item["cleared"], approved=s["approved"])
            changes.append(txn_change(txn_id, None, txn, account=s["account"]))
        op_id, writes = commit(ctx, ledger, changes, "create_transactions", title_to_summary(plan.preview.title),
                               planning=planning)
        return Effect.writes({"operation_id": op_id, "account_id": s["account"], "transaction_ids": ids}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Created {counted(len(result['transaction_ids']), 'transaction')}"]


class SplitLine(Arguments):
    amount: Amount = Field(description="An amount in currency units, same sign as the transaction (or all positive)")
    category_id: str = Field(description="A category id")
    memo: str = Field(default="", max_length=2000)


class SplitArgs(Arguments):
    transaction_id: str = Field(description="The transaction to split")
    # at most 19 so that the question's 20 visible lines always include the warning
    lines: list[SplitLine] = Field(min_length=2, max_length=19, description="2 to 19 lines that sum to the transaction")


SPLIT_WARNING = "Warning: a split cannot be undone."


class SplitTransaction(BudgetAction):
    name = "split_transaction"
    title = "Preparing a split confirmation"
    description = (
        "Split one transaction across several categories; the lines must sum to its amount. The person sees "
        "'Split 2026-09-12 Market 86.40 into 2 lines?', one line per category and a warning: a split cannot be undone."
    )
    arguments = SplitArgs
    irreversible = True  # undo_operation refuses a split (its operation is recorded not undoable)

    def propose(self, args: SplitArgs, ctx: ActionContext) -> Plan:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        ref = ledger.txn(args.transaction_id)
        txn = ref.data
        if is_split(txn):
            raise ActionError("transaction_id: this transaction is already split.", field="transaction_id")
        if is_transfer(txn):
            raise ActionError("transaction_id: a transfer between accounts cannot be split.", field="transaction_id")
        parsed = []
        for i, line in enumerate(args.lines):
            amount = to_milliunits(line.amount, f"lines[{i}].amount")
            category = ledger.category(line.category_id, f"lines[{i}].category_id")
            parsed.append((amount, category, _text(line.memo, f"lines[{i}].memo")))
        total = sum(a for a, _, _ in parsed)
        if total != txn["amount"]:
            if txn["amount"] != 0 and total == -txn["amount"]:
                parsed = [(-a, c, m) for a, c, m in parsed]  # all given as positive parts of an outflow
            else:
                raise ActionError(
                    f"lines: the lines sum to {display(total)}; they must sum to the transaction's "
                    f"{display(txn['amount'])}.",
                    field="lines",
                )
        sign = -1 if txn["amount"] < 0 else 1
        items = [{"amount": a, "category": c.id, "category_name": c.data["name"], "memo": m} for a, c, m in parsed]
        lines = [f"{c.data['name']} {display(a * sign)}" + (f" ({m})" if m else "") for a, c, m in parsed]
        lines.append(SPLIT_WARNING)
        title = f"Split {txn['date']} {txn['payee']} {display(abs(txn['amount']))} into {len(items)} lines?"
        subject = {
            "transaction": ref.id, "date": txn["date"], "payee": txn["payee"],
            "amount": txn["amount"], "before": txn.get("category_id"), "before_name": ledger.txn_category_name(txn),
            "lines": items,
        }
        return BudgetPlan(subject, Preview(title, lines), ledger)

    def effect_of(self, plan: Plan, ctx: ActionContext, planning: Planning | None) -> Effect:
        s = plan.subject
        ledger = ledger_of(plan, ctx.store, ctx.workspace_id)
        subs = [{"amount": it["amount"], "category_id": it["category"], "memo": it["memo"]} for it in s["lines"]]
        change = txn_change(s["transaction"],
                            {"category_id": s["before"], "subtransactions": [], "amount": s["amount"]},
                            {"category_id": None, "subtransactions": subs, "amount": s["amount"]})
        op_id, writes = commit(ctx, ledger, [change], "split", title_to_summary(plan.preview.title), undoable=False,
                       note="A split cannot be undone.", planning=planning)
        return Effect.writes({"operation_id": op_id, "transaction_id": s["transaction"], "lines": len(subs)}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Split into {counted(result['lines'], 'line')}"]

    def next_steps(self, result: dict, ctx: ActionContext):
        return []
