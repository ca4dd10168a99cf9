"""Reads: run at once, write nothing. Amounts come as ``"150.00"`` plus ``…_milliunits``."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ...toolkit import ActionContext, ActionError, Arguments, Read
from . import attention
from .figures import month_figures
from .model import OP, TOTAL, Ledger, TxnRef, account_total_id, amounts, is_uncategorised, parse_date, resolve_month
from .operations import operation_view
from .rollup import built_ledger


class NoArgs(Arguments):
    pass


class ListAccounts(Read):
    name = "list_accounts"
    title = "Listing accounts"
    description = "Every account of the budget with its cleared and uncleared balance."
    arguments = NoArgs

    def run(self, args: NoArgs, ctx: ActionContext) -> dict:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        accounts = ledger.ordered_accounts()
        ledger.prefetch((TOTAL, account_total_id(d.id)) for d in accounts)
        out = []
        for doc in accounts:
            cleared, uncleared = ledger.balances(doc.id)
            out.append({
                "id": doc.id, "name": doc.data["name"], "type": doc.data.get("type", "checking"),
                "closed": bool(doc.data.get("closed")), **amounts("balance", cleared + uncleared),
                **amounts("cleared_balance", cleared), **amounts("uncleared_balance", uncleared),
            })
        return {"accounts": out}


class MonthArgs(Arguments):
    month: str = Field(default="current", description="2026-09, 2026-09-01, current or next")


def _category_rows(ledger: Ledger, month: str) -> list[dict[str, Any]]:
    figures = month_figures(ledger, month)
    rows = []
    for doc in ledger.ordered_categories():
        if doc.data.get("internal"):
            continue
        rows.append({
            "id": doc.id, "name": doc.data["name"], "group_id": doc.data["group_id"],
            "group_name": ledger.group_name(doc.data["group_id"]), "hidden": bool(doc.data.get("hidden")),
            **amounts("budgeted", figures["budgeted"].get(doc.id, 0)),
            **amounts("activity", figures["activity"].get(doc.id, 0)),
            **amounts("available", figures["available"].get(doc.id, 0)),
        })
    return rows


class ListCategories(Read):
    name = "list_categories"
    title = "Listing categories"
    description = (
        "Category groups and their categories, with budgeted, activity and available for a month "
        "(default: the current month). Income goes to Ready to Assign (group Inflow)."
    )
    arguments = MonthArgs

    def run(self, args: MonthArgs, ctx: ActionContext) -> dict:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        month = resolve_month(args.month, ctx.now)
        rows = _category_rows(ledger, month)
        groups = []
        for group in ledger.ordered_groups():
            cats = [r for r in rows if r["group_id"] == group.id]
            if group.data.get("internal"):
                cats = [{"id": c.id, "name": c.data["name"], "group_id": group.id, "group_name": group.data["name"],
                         "internal": True} for c in ledger.ordered_categories(group.id)]
            groups.append({"id": group.id, "name": group.data["name"], "internal": bool(group.data.get("internal")),
                           "categories": cats})
        return {"month": month, "groups": groups}


class GetMonth(Read):
    name = "get_month"
    title = "Reading a budget month"
    description = "A month's Ready to Assign, income, and every category's budgeted, activity and available."
    arguments = MonthArgs

    def run(self, args: MonthArgs, ctx: ActionContext) -> dict:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        month = resolve_month(args.month, ctx.now)
        figures = month_figures(ledger, month)
        rows = _category_rows(ledger, month)
        return {
            "month": month,
            **amounts("ready_to_assign", figures["ready_to_assign"]),
            **amounts("income", figures["income"]),
            **amounts("budgeted", sum(r["budgeted_milliunits"] for r in rows)),
            **amounts("activity", sum(r["activity_milliunits"] for r in rows)),
            "categories": rows,
        }


class ListTransactionsArgs(Arguments):
    since: str | None = Field(default=None, description="Only transactions on or after this date (YYYY-MM-DD)")
    account_id: str | None = Field(default=None, description="Only this account")
    category_id: str | None = Field(default=None, description="Only this category (split lines included)")
    uncategorised: bool = Field(default=False, description="Only transactions without a category")
    unapproved: bool = Field(default=False, description="Only transactions not yet approved")
    limit: int = Field(default=50, ge=1, le=500, description="At most this many (newest first)")
    cursor: str | None = Field(default=None, description="next_cursor of the previous page")


def transaction_view(ledger: Ledger, account_id: str, txn: dict) -> dict[str, Any]:
    account = ledger.accounts.get(account_id)
    return {
        "id": txn["id"], "date": txn["date"], "payee": txn["payee"], **amounts("amount", txn["amount"]),
        "account_id": account_id, "account_name": account.data["name"] if account else None,
        "category_id": txn.get("category_id"), "category_name": ledger.txn_category_name(txn),
        "memo": txn.get("memo") or "", "cleared": txn["cleared"], "approved": bool(txn.get("approved")),
        "flag": txn.get("flag"), "transfer": txn.get("transfer"),
        "subtransactions": [
            {**amounts("amount", s["amount"]), "category_id": s.get("category_id"),
             "category_name": ledger.category_name(s.get("category_id")), "memo": s.get("memo") or ""}
            for s in txn.get("subtransactions") or []
        ],
    }


class ListTransactions(Read):
    name = "list_transactions"
    title = "Listing transactions"
    description = (
        "Transactions, newest first, filtered by since, account_id, category_id, uncategorised and unapproved; "
        "paged with limit and cursor."
    )
    arguments = ListTransactionsArgs

    def run(self, args: ListTransactionsArgs, ctx: ActionContext) -> dict:
        ledger = Ledger(ctx.store, ctx.workspace_id)
        since = parse_date(args.since, "since") if args.since is not None else None
        if args.account_id is not None:
            ledger.account(args.account_id)
        if args.category_id is not None:
            ledger.category(args.category_id)
        offset = 0
        if args.cursor is not None:
            if not args.cursor.isdigit():
                raise ActionError("cursor: not a cursor this tool returned.", field="cursor")
            offset = int(args.cursor)
        _ = ledger.categories  # every name a page shows, in one read
        page: list[TxnRef] = []
        total = 0
        for month, counted in _months_newest_first(ledger, args, since):
            if counted is not None and (total + counted <= offset or total >= offset + args.limit):
                total += counted  # counted from the month's totals; its transactions are not read
            elif counted != 0:
                refs = _month_matches(ledger, month, args, since)
                page.extend(refs[max(offset - total, 0):max(offset + args.limit - total, 0)])
                total += len(refs)
            if total >= offset + args.limit:
                known = _known_total(ledger, args, since)
                if known is not None:  # the page is full and the ledger's counts tell the rest
                    total = known
                    break
        nxt = offset + args.limit
        return {
            "transactions": [transaction_view(ledger, r.account_id, r.data) for r in page[:args.limit]],
            "total": total,
            "next_cursor": str(nxt) if nxt < total else None,
        }


def _filters(args: ListTransactionsArgs) -> list:
    return [f for f in (args.account_id, args.category_id, args.uncategorised or None, args.unapproved or None)
            if f is not None]


def _count(t: dict[str, Any], args: ListTransactionsArgs) -> int:
    """How many transactions of totals ``t`` (a month's or the ledger's) match one filter or none."""
    if args.account_id is not None:
        return int((t.get("accounts") or {}).get(args.account_id, 0))
    if args.category_id is not None:
        return int((t.get("cats") or {}).get(args.category_id, 0))
    if args.uncategorised:
        return int(t.get("uncategorised", 0))
    if args.unapproved:
        return int(t.get("unapproved", 0))
    return int(t.get("n", 0))


def _known_total(ledger: Ledger, args: ListTransactionsArgs, since: str | None) -> int | None:
    """How many transactions match in the whole ledger, from its roll-up (one filter or none, no
    ``since``); None when only reading the months can tell."""
    if since is not None or len(_filters(args)) > 1:
        return None
    rolled = built_ledger(ledger)
    return _count(rolled.data, args) if rolled is not None else None


def _months_newest_first(ledger: Ledger, args: ListTransactionsArgs, since: str | None):
    """Each month of the ledger (back to ``since``), newest first, with how many of its
    transactions match when its totals tell (None: its transactions must be read to know)."""
    filters = _filters(args)
    for doc in ledger.month_totals_newest_first(since[:7] if since is not None else None):
        month = doc.id[2:]
        t = doc.data
        if len(filters) > 1 or (since is not None and month == since[:7]):
            yield month, (None if t.get("n") else 0)
        else:
            yield month, _count(t, args)


def _month_matches(ledger: Ledger, month: str, args: ListTransactionsArgs, since: str | None) -> list[TxnRef]:
    """The month's transactions that match, newest first: from its needs-attention doc when the
    page asks only for transactions it holds all of, else from its chunks."""
    held = attention.complete(ledger, month, uncategorised=args.uncategorised, unapproved=args.unapproved)
    if held is None:
        return ledger.month_transactions(month, lambda account, t: _matches(account, t, args, since))[::-1]
    return sorted((r for r in held if _matches(r.account_id, r.data, args, since)),
                  key=lambda r: (r.data["date"], r.data["id"]), reverse=True)


def _matches(account_id: str, t: dict[str, Any], args: ListTransactionsArgs, since: str | None) -> bool:
    if since and t["date"] < since:
        return False
    if args.account_id and account_id != args.account_id:
        return False
    if args.category_id and args.category_id not in (
            {t.get("category_id")} | {s.get("category_id") for s in t.get("subtransactions") or []}):
        return False
    if args.uncategorised and not is_uncategorised(t):
        return False
    return not (args.unapproved and t.get("approved"))


class ListOperationsArgs(Arguments):
    limit: int = Field(default=20, ge=1, le=100, description="At most this many, newest first")


class ListOperations(Read):
    name = "list_operations"
    title = "Listing recent operations"
    description = "The budget's operation log, newest first: what each write changed and whether it can be undone."
    arguments = ListOperationsArgs

    def run(self, args: ListOperationsArgs, ctx: ActionContext) -> dict:
        docs = ctx.store.list_docs(ctx.workspace_id, OP, descending=True, limit=args.limit)  # ids sort by time
        return {"operations": [operation_view(d) for d in docs]}

