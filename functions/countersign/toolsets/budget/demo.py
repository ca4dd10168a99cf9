"""A realistic demo budget: three accounts, five groups, 23 categories, 200+ transactions over the
two months before the current one and the current month so far, budgets for each of those months,
some transactions uncategorised and some unapproved. Deterministic for a given day."""

from __future__ import annotations

import random
from datetime import date, timedelta

from ...toolkit import ActionContext, DocStore, DocWrite
from . import layout
from .model import ACCOUNT, CATEGORY, GROUP, RTA_ID, add_months, new_txn, today

ACCOUNTS = [
    ("acc_checking", "Checking", "checking"),
    ("acc_savings", "Savings", "savings"),
    ("acc_cash", "Cash", "cash"),
]

GROUPS = [
    ("grp_bills", "Bills", [("rent", "Rent", 1250), ("electricity", "Electricity", 90), ("water", "Water", 35),
                            ("internet", "Internet", 45), ("phone", "Phone", 30), ("insurance", "Insurance", 110)]),
    ("grp_everyday", "Everyday", [("groceries", "Groceries", 550), ("restaurants", "Restaurants", 120),
                                  ("transport", "Transport", 80), ("fuel", "Fuel", 100), ("household", "Household", 60),
                                  ("personal_care", "Personal Care", 40), ("clothing", "Clothing", 70)]),
    ("grp_fun", "Fun", [("tennis", "Tennis", 45), ("entertainment", "Entertainment", 60), ("hobbies", "Hobbies", 50),
                        ("books", "Books", 25)]),
    ("grp_health", "Health", [("doctor", "Doctor", 40), ("pharmacy", "Pharmacy", 25), ("gym", "Gym", 39)]),
    ("grp_goals", "Savings Goals", [("emergency", "Emergency Fund", 300), ("vacation", "Vacation", 200),
                                    ("gifts", "Gifts", 50)]),
]

# payee, category key, low, high (currency units, outflow), weight, account
SPENDING = [
    ("Market", "groceries", 25, 120, 14, "acc_checking"),
    ("FreshMart", "groceries", 15, 90, 10, "acc_checking"),
    ("Farmers Market", "groceries", 8, 35, 4, "acc_cash"),
    ("Bistro 21", "restaurants", 18, 75, 4, "acc_checking"),
    ("Pizza Place", "restaurants", 12, 40, 4, "acc_checking"),
    ("Coffee Cart", "restaurants", 3, 7, 6, "acc_cash"),
    ("Metro", "transport", 2, 3, 8, "acc_checking"),
    ("Fuel Station", "fuel", 35, 70, 4, "acc_checking"),
    ("Hardware Store", "household", 6, 60, 3, "acc_checking"),
    ("Pharmacy Plus", "pharmacy", 5, 30, 2, "acc_checking"),
    ("Hair Studio", "personal_care", 25, 45, 1, "acc_checking"),
    ("Outfitters", "clothing", 20, 90, 1, "acc_checking"),
    ("Court Booking", "tennis", 12, 24, 2, "acc_checking"),
    ("Cinema", "entertainment", 10, 30, 2, "acc_checking"),
    ("Streaming Co", "entertainment", 10, 16, 1, "acc_checking"),
    ("Book Nook", "books", 8, 30, 2, "acc_checking"),
    ("Craft Corner", "hobbies", 10, 50, 1, "acc_checking"),
]

MONTHLY = [  # day of month, payee, category key, amount (units; negative = outflow)
    (1, "Landlord", "rent", -1250),
    (1, "Acme Corp Payroll", RTA_ID, 2400),
    (15, "Acme Corp Payroll", RTA_ID, 2400),
    (5, "City Power", "electricity", -84.37),
    (8, "Water Works", "water", -31.20),
    (10, "Fibre Net", "internet", -45),
    (12, "Mobile One", "phone", -29.99),
    (20, "Safe Insurance", "insurance", -108.50),
    (3, "Gym Club", "gym", -39),
]

UNCATEGORISED_PAYEES = ["Amazon", "Market", "PayPal *Shop", "Corner Store", "Online Order", "Unknown Merchant",
                        "Market", "Kiosk"]


def _cat(key: str) -> str:
    return key if key == RTA_ID else f"cat_{key}"


def _milli(units: float) -> int:
    return int(round(units * 1000 / 10)) * 10  # whole cents


def build(now: int) -> list[DocWrite]:
    """Every doc of the demo budget, as one batch of creations."""
    rng = random.Random(20260728)
    end = today(now)
    first = date.fromisoformat(add_months(end.isoformat()[:7] + "-01", -2))
    writes: list[DocWrite] = []
    for pos, (acc_id, name, kind) in enumerate(ACCOUNTS):
        writes.append(DocWrite(ACCOUNT, acc_id, {"name": name, "type": kind, "closed": False, "position": pos}, 0))
    for gpos, (group_id, gname, cats) in enumerate(GROUPS):
        writes.append(DocWrite(GROUP, group_id, {"name": gname, "position": gpos, "hidden": False}, 0))
        for cpos, (key, cname, _) in enumerate(cats):
            writes.append(DocWrite(CATEGORY, _cat(key), {"name": cname, "group_id": group_id, "position": cpos,
                                                       "hidden": False, "note": ""}, 0))

    txns: list[tuple[str, dict]] = []
    counter = 0

    def add(account: str, day: date, payee: str, amount: int, category: str | None) -> None:
        nonlocal counter
        counter += 1
        txn_id = f"{day:t_%Y%m%d}_demo{counter:04d}"  # carries its month, as every new id does
        txns.append((account, new_txn(txn_id, day.isoformat(), payee, amount, category, cleared="cleared")))

    day = first
    weights = [s[4] for s in SPENDING]
    while day <= end:
        for dom, payee, key, units in MONTHLY:
            if day.day == dom:
                add("acc_checking", day, payee, _milli(units), _cat(key))
        for _ in range(rng.choice((2, 3, 3, 4))):
            payee, key, low, high, _, account = rng.choices(SPENDING, weights)[0]
            add(account, day, payee, -_milli(rng.uniform(low, high)), _cat(key))
        if day.day == 28:
            add("acc_savings", day, "Transfer : Checking", 300_000, None)
            txns[-1][1]["transfer"] = "Checking"
            add("acc_checking", day, "Transfer : Savings", -300_000, None)
            txns[-1][1]["transfer"] = "Savings"
            add("acc_savings", day, "Savings Interest", _milli(rng.uniform(1, 4)), RTA_ID)
        day += timedelta(days=1)
    while len(txns) < 210:  # a current month that has barely started still gives 200+
        offset = rng.randrange((end - first).days + 1)
        add("acc_cash", first + timedelta(days=offset), "Coffee Cart", -_milli(rng.uniform(3, 7)), _cat("restaurants"))
    add("acc_cash", first, "Starting Balance", 200_000, RTA_ID)
    add("acc_savings", first, "Starting Balance", 4_500_000, RTA_ID)
    add("acc_checking", first, "Starting Balance", 1_850_000, RTA_ID)

    # State: older than last month reconciled, older than 4 days cleared, recent ones uncleared;
    # the newest dozen unapproved; eight recent purchases without a category.
    txns.sort(key=lambda at: (at[1]["date"], at[1]["id"]))
    reconciled_before = add_months(end.isoformat()[:7] + "-01", -1)
    cleared_before = (end - timedelta(days=4)).isoformat()
    for _account, txn in txns:
        if txn["date"] < reconciled_before:
            txn["cleared"] = "reconciled"
        elif txn["date"] >= cleared_before:
            txn["cleared"] = "uncleared"
    spending = [t for a, t in txns if t["amount"] < 0 and t["category_id"] not in (None, _cat("rent"))]
    for i, txn in enumerate(spending[-8:]):
        txn["category_id"] = None
        txn["payee"] = UNCATEGORISED_PAYEES[i]
    for _, txn in txns[-12:]:
        txn["approved"] = False
    for _, txn in txns[-30::7]:
        txn["flag"] = "blue"

    budgets = {}
    for i in range(3):
        month = add_months(first.isoformat(), i)
        budgeted = {}
        for _, _, cats in GROUPS:
            for key, _, units in cats:
                bump = 10 * (i % 2) if key in ("restaurants", "groceries", "entertainment") else 0
                budgeted[_cat(key)] = _milli(units + bump)
        budgets[month] = budgeted
    writes.extend(layout.build(txns, budgets))  # the chunks and budget months, with their totals and roll-ups
    return writes


def seed(store: DocStore, ctx: ActionContext) -> None:
    """``TOOLSET.demo``: fill an empty workspace with the demo budget (one atomic batch)."""
    store.write_docs(ctx.workspace_id, build(ctx.now))
