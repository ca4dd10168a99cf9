"""Reconciling an account with the bank: ``reconcile_account``."""

from __future__ import annotations

from pydantic import Field

from ...core.preview import Preview
from ...toolkit import ActionContext, ActionError, Arguments, Effect, Plan
from .base import Amount, BudgetAction, title_to_summary
from .layout import new_txn_id
from .model import RTA_ID, BudgetPlan, Ledger, display, ledger_of, new_txn, to_milliunits, today
from .operations import Planning, commit, txn_change
from .values import counted

ADJUSTMENT_PAYEE = "Reconciliation Balance Adjustment"


class ReconcileArgs(Arguments):
    account_id: str = Field(description="The account to reconcile (an id from list_accounts)")
    balance: Amount = Field(description="The balance the bank shows, in currency units (e.g. 1234.56)")


def _state(ledger: Ledger, account_id: str) -> tuple[list, int]:
    """The cleared (not yet reconciled) transactions, oldest first, and the cleared balance."""
    refs = sorted(ledger.account_transactions(account_id, cleared="cleared"), key=lambda r: (r.data["date"], r.id))
    cleared_balance, _ = ledger.balances(account_id)
    return refs, cleared_balance


class ReconcileAccount(BudgetAction):
    name = "reconcile_account"
    title = "Preparing a reconciliation confirmation"
    description = (
        "Reconcile an account with the bank balance: mark its cleared transactions reconciled and, when the "
        "cleared balance differs, enter an adjustment. The person sees "
        "'Reconcile Checking: mark 49 cleared transaction(s) reconciled?', the bank balance and the difference."
    )
    arguments = ReconcileArgs

    def propose(self, args: ReconcileArgs, ctx: ActionContext) -> Plan:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        account = ledger.account(args.account_id)
        balance = to_milliunits(args.balance, "balance")
        refs, cleared_balance = _state(ledger, account.id)
        difference = balance - cleared_balance
        name = account.data["name"]
        if not refs and difference == 0:
            raise ActionError(
                f"account_id: {name} has no cleared transaction to reconcile and its cleared balance already "
                f"matches {display(balance)}.",
                field="account_id",
            )
        lines = [
            f"Bank balance: {display(balance)}",
            f"Cleared balance: {display(cleared_balance)}",
            f"Difference to adjust: {display(difference)}",
        ]
        if difference:
            lines.append(
                f"An adjustment of {display(difference)} is entered as ‘{ADJUSTMENT_PAYEE}’ (Ready to Assign)."
            )
        subject = {
            "account": account.id, "account_name": name, "balance": balance, "cleared_balance": cleared_balance,
            "difference": difference, "transactions": [{"id": r.id} for r in refs],
        }
        title = f"Reconcile {name}: mark {len(refs)} cleared transaction(s) reconciled?"
        return BudgetPlan(subject, Preview(title, lines), ledger)

    def effect_of(self, plan: Plan, ctx: ActionContext, planning: Planning | None) -> Effect:
        s = plan.subject
        ledger = ledger_of(plan, ctx.store, ctx.workspace_id)
        if s["account"] not in ledger.accounts:
            raise ActionError(
                f"{self.drift_message} (the account {s['account_name']} no longer exists); nothing was written."
            )
        refs, cleared_balance = _state(ledger, s["account"])
        if cleared_balance != s["cleared_balance"] or sorted(r.id for r in refs) != sorted(
            t["id"] for t in s["transactions"]
        ):
            raise ActionError(
                f"{self.drift_message} (the cleared transactions of {s['account_name']} moved); nothing was written."
            )
        changes = [
            txn_change(t["id"], {"cleared": "cleared"}, {"cleared": "reconciled"})
            for t in s["transactions"]
        ]
        adjustment = None
        if s["difference"]:
            day = today(ctx.now).isoformat()
            adjustment = new_txn_id(day)
            txn = new_txn(adjustment, day, ADJUSTMENT_PAYEE, s["difference"], RTA_ID, cleared="reconciled",
                          approved=True, memo="Entered by reconcile_account")
            changes.append(txn_change(adjustment, None, txn, account=s["account"]))
        op_id, writes = commit(ctx, ledger, changes, "reconcile", title_to_summary(plan.preview.title),
                               planning=planning)
        return Effect.writes({
            "operation_id": op_id, "account_id": s["account"], "reconciled": len(s["transactions"]),
            "balance": display(s["balance"]), "adjustment": display(s["difference"]) if adjustment else None,
            "adjustment_transaction_id": adjustment,
        }, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        lines = [f"Reconciled {counted(result['reconciled'], 'transaction')} · balance {result['balance']}"]
        if result["adjustment"]:
            lines.append(f"An adjustment of {result['adjustment']} was entered to match")
        return lines
