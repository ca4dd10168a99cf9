"""The budget's figures worked out the slow, obvious way: from every transaction and budget month
(what the roll-ups must always agree with)."""

from __future__ import annotations

from countersign.toolsets.budget.model import MONTH, RTA_ID, TXNS, add_months


def lines(txn: dict) -> list[tuple[str | None, int]]:
    if txn.get("subtransactions"):
        return [(s.get("category_id"), s["amount"]) for s in txn["subtransactions"]]
    if txn.get("transfer"):
        return []
    return [(txn.get("category_id"), txn["amount"])]


def everything(store, workspace_id: str) -> tuple[list[tuple[str, dict]], dict[str, dict[str, int]]]:
    """Every (account, transaction) and every budget month's budgeted."""
    txns = [(d.data["account_id"], t) for d in store.docs.list_docs(workspace_id, TXNS) for t in d.data["transactions"]]
    budgets = {d.id: dict(d.data.get("budgeted") or {}) for d in store.docs.list_docs(workspace_id, MONTH)}
    return txns, budgets


def month_figures(txns: list[tuple[str, dict]], budgets: dict[str, dict[str, int]], month: str) -> dict:
    """Income, activity, budgeted, available and Ready to Assign of ``month`` (``YYYY-MM-01``),
    month by month from the first month holding anything."""
    income: dict[str, int] = {}
    activity: dict[str, dict[str, int]] = {}
    for _account, txn in txns:
        m = txn["date"][:7] + "-01"
        for cat, amount in lines(txn):
            if cat == RTA_ID:
                income[m] = income.get(m, 0) + amount
            elif cat is not None:
                activity.setdefault(m, {})[cat] = activity.setdefault(m, {}).get(cat, 0) + amount
    first = min([*income, *activity, *budgets, month])
    available: dict[str, int] = {}
    rta = 0
    m = first
    while m <= month:
        for cat, a in available.items():  # an overspent balance does not carry over...
            if a < 0:
                rta += a  # ...it is taken from Ready to Assign
                available[cat] = 0
        budgeted = budgets.get(m, {})
        rta += income.get(m, 0) - sum(budgeted.values())
        for source in (budgeted, activity.get(m, {})):
            for cat, v in source.items():
                available[cat] = available.get(cat, 0) + v
        m = add_months(m, 1)
    return {"income": income.get(month, 0), "ready_to_assign": rta, "budgeted": budgets.get(month, {}),
            "activity": activity.get(month, {}), "available": available}


def balances(txns: list[tuple[str, dict]]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for account, txn in txns:
        cleared, uncleared = out.get(account, (0, 0))
        if txn["cleared"] == "uncleared":
            uncleared += txn["amount"]
        else:
            cleared += txn["amount"]
        out[account] = (cleared, uncleared)
    return out


def newest_first(txns: list[tuple[str, dict]], keep=lambda account, txn: True) -> list[str]:
    chosen = [t for a, t in txns if keep(a, t)]
    return [t["id"] for t in sorted(chosen, key=lambda t: (t["date"], t["id"]), reverse=True)]
