"""Importing a YNAB register export (CSV) into a workspace's budget.

Columns (YNAB's): Account, Flag, Date, Payee, Category Group/Category, Category Group, Category,
Memo, Outflow, Inflow, Cleared. Every row is checked before anything is written: a malformed row
is reported with its line number and nothing is imported. Accounts, groups and categories that do
not exist yet are created by name; ``Inflow: Ready to Assign`` (or the older ``To be Budgeted``)
is income. Rows whose memo reads ``Split (1/3) …`` are joined back into one split transaction.
A transaction already imported (same account, date, amount and occurrence — YNAB's ``import_id``)
is skipped, so importing the same file twice adds nothing.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from ...core.ids import new_id
from ...core.preview import one_line
from ...toolkit import MAX_DOC_WRITES, ActionContext, DocStore, DocWrite
from .layout import Staged, new_txn_id
from .model import (
    ACCOUNT,
    CATEGORY,
    GROUP,
    MAX_CATEGORIES,
    OP,
    RTA_ID,
    TRANSFER_PREFIX,
    Ledger,
    month_key,
    new_txn,
    too_many_categories,
)
from .operations import new_operation
from .rebuild import ensure_built

REQUIRED = ("Account", "Date", "Payee", "Memo", "Outflow", "Inflow", "Cleared")
CLEARED = {"cleared": "cleared", "uncleared": "uncleared", "reconciled": "reconciled"}
INCOME_NAMES = {"ready to assign", "to be budgeted", "readytoassign"}
SPLIT_MEMO = re.compile(r"^Split \((\d+)/(\d+)\)\s*(.*)$", re.S)
CURRENCY = "$€£¥₹₽₩₺₪¤ \u00a0"


class RegisterError(ValueError):
    """A file that cannot be imported; ``line`` is the 1-based line of the culprit (0: the file)."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.message = message


@dataclass
class Row:
    line: int
    account: str
    flag: str | None
    date: str
    payee: str
    group: str | None
    category: str | None
    memo: str
    amount: int
    cleared: str


@dataclass
class Parsed:
    rows: list[Row] = field(default_factory=list)


def parse_amount(text: str, line: int, column: str) -> int:
    raw = (text or "").strip().strip(CURRENCY)
    for code in ("USD", "EUR", "GBP", "CHF", "CAD", "AUD"):
        raw = raw.replace(code, "").strip()
    if raw == "":
        return 0
    negative = raw.startswith("-") or (raw.startswith("(") and raw.endswith(")"))
    raw = raw.strip("()-+").strip(CURRENCY)
    if not re.fullmatch(r"[\d.,']+", raw) or not re.search(r"\d", raw):
        raise RegisterError(line, f"{column} {text!r} is not an amount")
    raw = raw.replace("'", "")
    last_dot, last_comma = raw.rfind("."), raw.rfind(",")
    decimal_at = max(last_dot, last_comma)
    if decimal_at >= 0 and (last_dot >= 0 and last_comma >= 0 or len(raw) - decimal_at - 1 in (1, 2)):
        whole, frac = raw[:decimal_at], raw[decimal_at + 1:]
    else:
        whole, frac = raw, ""
    whole = whole.replace(".", "").replace(",", "")
    try:
        value = Decimal(f"{whole or '0'}.{frac or '0'}")
    except InvalidOperation:
        raise RegisterError(line, f"{column} {text!r} is not an amount") from None
    milli = int(value * 1000)
    return -milli if negative else milli


def _date_style(values: list[tuple[int, str]]) -> str:
    """``dmy`` when any slashed date's first part exceeds 12, else ``mdy`` (YNAB's US default)."""
    for _, v in values:
        m = re.fullmatch(r"\s*(\d{1,2})/(\d{1,2})/(\d{4})\s*", v)
        if m and int(m[1]) > 12:
            return "dmy"
    return "mdy"


def parse_date(text: str, line: int, style: str) -> str:
    t = (text or "").strip()
    try:
        if m := re.fullmatch(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})", t):
            return date(int(m[1]), int(m[2]), int(m[3])).isoformat()
        if m := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", t):
            a, b = int(m[1]), int(m[2])
            month, day = (b, a) if style == "dmy" else (a, b)
            return date(int(m[3]), month, day).isoformat()
        if m := re.fullmatch(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", t):
            return date(int(m[3]), int(m[2]), int(m[1])).isoformat()
    except ValueError:
        raise RegisterError(line, f"Date {text!r} is not a date that exists") from None
    raise RegisterError(line, f"Date {text!r} is not a date (use YYYY-MM-DD or MM/DD/YYYY)")


def _clean(value: Any) -> str:
    return one_line(str(value or ""))


def parse_register(text: str) -> Parsed:
    """Every row of a register export, checked; :class:`RegisterError` naming the line of the first bad one."""
    if text.startswith("\ufeff"):
        text = text[1:]
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise RegisterError(0, "the file is empty") from None
    except csv.Error as exc:
        raise RegisterError(1, f"not CSV ({exc})") from None
    header = [h.strip() for h in header]
    missing = [c for c in REQUIRED if c not in header]
    if missing or not ({"Category Group/Category"} <= set(header) or {"Category Group", "Category"} <= set(header)):
        missing = missing or ["Category Group/Category"]
        raise RegisterError(1, f"not a YNAB register export: missing column(s) {', '.join(missing)}")
    col = {name: i for i, name in enumerate(header)}
    raw_rows: list[tuple[int, list[str]]] = []
    line = 1
    try:
        for record in reader:
            line = reader.line_num
            if not any(c.strip() for c in record):
                continue
            if len(record) != len(header):
                raise RegisterError(line, f"{len(record)} fields, the header has {len(header)}")
            raw_rows.append((line, record))
    except csv.Error as exc:
        raise RegisterError(reader.line_num or line, f"not valid CSV ({exc})") from None
    style = _date_style([(ln, r[col["Date"]]) for ln, r in raw_rows])
    parsed = Parsed()
    for ln, r in raw_rows:
        def get(name: str, r: list[str] = r) -> str:  # this row's field (bound now, not at call time)
            return _clean(r[col[name]]) if name in col else ""

        account = get("Account")
        if not account:
            raise RegisterError(ln, "Account is empty")
        if len(account) > 100:
            raise RegisterError(ln, "Account is longer than 100 characters")
        payee = get("Payee")
        if len(payee) > 200:
            raise RegisterError(ln, "Payee is longer than 200 characters")
        group, category = get("Category Group"), get("Category")
        combined = get("Category Group/Category")
        if not category and combined:
            group, _, category = combined.partition(": ") if ": " in combined else ("", "", combined)
        if category and not group:
            raise RegisterError(ln, f"Category {category!r} has no Category Group")
        if len(category) > 100 or len(group) > 100:
            raise RegisterError(ln, "Category or Category Group is longer than 100 characters")
        outflow = parse_amount(r[col["Outflow"]], ln, "Outflow")
        inflow = parse_amount(r[col["Inflow"]], ln, "Inflow")
        cleared = CLEARED.get(get("Cleared").lower())
        if cleared is None:
            raise RegisterError(ln, f"Cleared {get('Cleared')!r} is not Cleared, Uncleared or Reconciled")
        memo = get("Memo")
        if len(memo) > 500:
            raise RegisterError(ln, "Memo is longer than 500 characters")
        parsed.rows.append(Row(
            line=ln, account=account, flag=(get("Flag").lower() or None), date=parse_date(r[col["Date"]], ln, style),
            payee=payee, group=group or None, category=category or None, memo=memo, amount=inflow - outflow,
            cleared=cleared,
        ))
    return parsed


@dataclass
class Result:
    imported: int = 0
    skipped: int = 0
    accounts_created: list[str] = field(default_factory=list)
    categories_created: list[str] = field(default_factory=list)
    operation_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported, "skipped": self.skipped, "accounts_created": self.accounts_created,
            "categories_created": self.categories_created, "operation_id": self.operation_id,
        }


def _account_type(name: str) -> str:
    lowered = name.lower()
    if "saving" in lowered:
        return "savings"
    if "cash" in lowered or "wallet" in lowered:
        return "cash"
    if any(w in lowered for w in ("credit", "visa", "mastercard", "amex")):
        return "creditCard"
    return "checking"


def _split_part_memo(memo: str) -> str:
    """A split part's own memo: what follows its ``Split (k/n)`` prefix."""
    m = SPLIT_MEMO.match(memo)
    assert m is not None  # every part was checked when the split was joined
    return m[3].strip()


def _check_category_room(joined: list[tuple[Row, list[Row]]], groups: dict[str, str],
                         categories: dict[tuple[str, str], str]) -> None:
    """:class:`RegisterError` before anything is written if the file's new categories would pass
    :data:`~.model.MAX_CATEGORIES` (what exists, by group and name, as the import matches them)."""
    named = {(group.casefold(), name.casefold())
             for row, parts in joined for group, name in ([(p.group, p.category) for p in parts]
                                                          or [(row.group, row.category)])
             if name and group and name.casefold() not in INCOME_NAMES}
    new = [key for key in named if (groups.get(key[0]), key[1]) not in categories]
    if new and len(categories) - 1 + len(new) > MAX_CATEGORIES:  # (categories holds Ready to Assign)
        raise RegisterError(0, too_many_categories(len(new), len(categories) - 1))


def import_register(store: DocStore, ctx: ActionContext, text: str, source: str = "register.csv") -> Result:
    """Check every row, then write the new accounts, categories and transactions.

    Up to 90 docs go in one atomic batch; a larger import is written in batches (each holding
    the totals and roll-ups of its own transactions, counted before the batch grows: a batch is
    never split), every row having been checked first. A budget without roll-ups gets them first,
    in batches of their own (:func:`.rebuild.ensure_built`).
    """
    parsed = parse_register(text)
    ledger = Ledger(store, ctx.workspace_id)
    writes: list[DocWrite] = []
    result = Result()

    accounts = {d.data["name"].casefold(): d.id for d in ledger.accounts.values()}
    groups = {d.data["name"].casefold(): d.id for d in ledger.groups.values()}
    categories = {(d.data["group_id"], d.data["name"].casefold()): d.id for d in ledger.categories.values()}
    next_pos = {"acc": len(accounts), "grp": len(groups)}
    cat_pos: dict[str, int] = {}
    for d in ledger.categories.values():
        cat_pos[d.data["group_id"]] = max(cat_pos.get(d.data["group_id"], 0), d.data.get("position", 0) + 1)

    def account_id(name: str) -> str:
        key = name.casefold()
        if key not in accounts:
            accounts[key] = new_id("acc_")
            writes.append(DocWrite(ACCOUNT, accounts[key], {"name": name, "type": _account_type(name), "closed": False,
                                                            "position": next_pos["acc"]}, 0))
            next_pos["acc"] += 1
            result.accounts_created.append(name)
        return accounts[key]

    def category_id(group: str | None, name: str | None) -> str | None:
        if not name:
            return None
        if name.casefold() in INCOME_NAMES:
            return RTA_ID
        assert group is not None  # the parser refuses a category without its group
        gkey = group.casefold()
        if gkey not in groups:
            groups[gkey] = new_id("grp_")
            writes.append(
                DocWrite(GROUP, groups[gkey], {"name": group, "position": next_pos["grp"], "hidden": False}, 0)
            )
            next_pos["grp"] += 1
        gid = groups[gkey]
        if (gid, name.casefold()) not in categories:
            categories[(gid, name.casefold())] = new_id("cat_")
            writes.append(DocWrite(CATEGORY, categories[(gid, name.casefold())], {
                "name": name, "group_id": gid, "position": cat_pos.get(gid, 0), "hidden": False, "note": ""}, 0))
            cat_pos[gid] = cat_pos.get(gid, 0) + 1
            result.categories_created.append(f"{group}: {name}")
        return categories[(gid, name.casefold())]

    # join split rows back together
    joined: list[tuple[Row, list[Row]]] = []
    i = 0
    rows = parsed.rows
    while i < len(rows):
        row = rows[i]
        m = SPLIT_MEMO.match(row.memo)
        if not m:
            joined.append((row, []))
            i += 1
            continue
        count = int(m[2])
        parts = rows[i:i + count]
        for k, part in enumerate(parts, start=1):
            pm = SPLIT_MEMO.match(part.memo)
            if (
                not pm
                or int(pm[1]) != k
                or int(pm[2]) != count
                or (part.account, part.date, part.payee) != (row.account, row.date, row.payee)
            ):
                raise RegisterError(part.line, f"split part {k} of {count} expected (memo 'Split ({k}/{count}) …')")
        if len(parts) != count or count < 2:
            raise RegisterError(row.line, f"a split of {count} parts has only {len(parts)}")
        joined.append((row, parts))
        i += count

    _check_category_room(joined, groups, categories)
    if ensure_built(store, ctx.workspace_id):  # every row checked: the roll-ups first, if there are none
        ledger = Ledger(store, ctx.workspace_id)
    # an import id names its date, so a transaction imported before is in the month of its row
    existing_ids = {ref.data["import_id"] for month in sorted({month_key(r.date) for r, _ in joined})
                    for ref in ledger.month_transactions(month) if ref.data.get("import_id")}
    occurrences: dict[tuple[str, int, str], int] = {}
    staged = Staged(ledger)
    chunks: set[str] = set()
    for row, parts in joined:
        acc = account_id(row.account)
        amount = sum(p.amount for p in parts) if parts else row.amount
        key = (acc, amount, row.date)
        occurrences[key] = occurrences.get(key, 0) + 1
        import_id = f"YNAB:{amount}:{row.date}:{occurrences[key]}"
        if f"{acc}|{import_id}" in existing_ids:
            result.skipped += 1
            continue
        transfer = (
            row.payee[len(TRANSFER_PREFIX):] if row.payee.startswith(TRANSFER_PREFIX) and not row.category else None
        )
        subs = [{"amount": p.amount, "category_id": category_id(p.group, p.category),
                 "memo": _split_part_memo(p.memo)} for p in parts]
        txn = new_txn(new_txn_id(row.date), row.date, row.payee or "(no payee)", amount,
                      None if parts else category_id(row.group, row.category),
                      memo="" if parts else row.memo, cleared=row.cleared, approved=True, flag=row.flag,
                      subtransactions=subs, import_id=f"{acc}|{import_id}", transfer=transfer or None)
        chunks.add(staged.add(acc, txn))
        result.imported += 1
        # a batch's totals and roll-ups agree with its transactions
        if len(writes) + len(staged.docs) + staged.rollup_bound() >= MAX_DOC_WRITES - 10:
            _write(store, ctx.workspace_id, [*writes, *staged.writes()])
            writes.clear()
            staged = Staged(Ledger(store, ctx.workspace_id))
    writes.extend(staged.writes())

    if result.imported == 0 and not writes:
        return result
    op_id, op = new_operation(ctx, "import", f"import {result.imported} transaction(s) from {source}", [],
                              undoable=False, note="An import is not undone through undo_operation.")
    op["chunks"] = sorted(chunks)
    writes.append(DocWrite(OP, op_id, op, 0))
    result.operation_id = op_id
    _write(store, ctx.workspace_id, writes)
    return result


def _write(store: DocStore, workspace_id: str, writes: list[DocWrite]) -> None:
    """One batch, one transaction: a batch over the store's limit is refused, never split (its
    totals and roll-ups would part)."""
    if len(writes) > MAX_DOC_WRITES:
        raise RegisterError(0, f"a batch of this import would write {len(writes)} records at once (the limit is "
                               f"{MAX_DOC_WRITES}): its rows reach back across too many years of roll-ups; "
                               "import the oldest years on their own first")
    store.write_docs(workspace_id, writes)

