"""What one transaction of the budget is: its fields, the categories it counts towards, the
month its id carries, and :class:`TxnRef`, a transaction found in a chunk (:mod:`.model`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from .values import display


def txn_month(txn_id: str) -> str | None:
    """``t_20260912_…`` → ``2026-09``; None for an id that does not carry its month."""
    if len(txn_id) > 11 and txn_id.startswith("t_") and txn_id[10] == "_" and txn_id[2:10].isdigit():
        return f"{txn_id[2:6]}-{txn_id[6:8]}"
    return None


class TxnRef(NamedTuple):
    """A transaction found in the ledger: its chunk, its account and its data (do not mutate).
    A named tuple: a read makes one per transaction of every month it reads, and a frozen
    dataclass takes about three times as long to make."""

    chunk: str
    account_id: str
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return self.data["id"]


def is_transfer(txn: dict) -> bool:
    return bool(txn.get("transfer"))


def is_split(txn: dict) -> bool:
    return bool(txn.get("subtransactions"))


def is_uncategorised(txn: dict) -> bool:
    return txn.get("category_id") is None and not is_split(txn) and not is_transfer(txn)


def category_lines(txn: dict) -> list[tuple[str | None, int]]:
    """(category, amount) of each part of a transaction that counts towards the budget."""
    if is_split(txn):
        return [(s.get("category_id"), s["amount"]) for s in txn["subtransactions"]]
    if is_transfer(txn):
        return []
    return [(txn.get("category_id"), txn["amount"])]


def txn_categories(txn: dict) -> set[str]:
    """Every category a transaction names, split lines included."""
    return ({txn["category_id"]} if txn.get("category_id") else set()) | {
        s["category_id"] for s in txn.get("subtransactions") or [] if s.get("category_id")}


def sort_transactions(txns: Iterable[dict]) -> list[dict]:
    return sorted(txns, key=lambda t: (t["date"], t["id"]))


def new_txn(txn_id: str, day: str, payee: str, amount: int, category_id: str | None = None, *, memo: str = "",
            cleared: str = "uncleared", approved: bool = True, flag: str | None = None,
            subtransactions: list[dict] | None = None, import_id: str | None = None,
            transfer: str | None = None) -> dict[str, Any]:
    """A transaction with every field present (so a change's ``before`` always compares like with like)."""
    return {
        "id": txn_id, "date": day, "payee": payee, "amount": int(amount), "category_id": category_id, "memo": memo,
        "cleared": cleared, "approved": bool(approved), "flag": flag, "subtransactions": list(subtransactions or []),
        "import_id": import_id, "transfer": transfer,
    }


def txn_line(txn: dict) -> str:
    """``2026-09-12, Market, -86.40``: how a budget preview names a transaction (date, payee, amount)."""
    return f"{txn['date']}, {txn['payee']}, {display(txn['amount'])}"
