"""The names of the budget's docs: their kinds and the ids of the totals and roll-ups, pure naming
(what each doc holds: :mod:`.model`; who keeps it: :mod:`.layout`, :mod:`.attention`,
:mod:`.rollup`). Every module that reads or writes a doc names it from here, so they cannot
disagree about where it is.
"""

from __future__ import annotations

from .values import month_key

ACCOUNT, GROUP, CATEGORY, MONTH, TXNS, OP, TOTAL, LOCATOR = (
    "budget_account", "budget_group", "budget_category", "budget_month", "budget_txns", "budget_op",
    "budget_total", "budget_locator",
)


# -- the totals kept beside the transactions (:mod:`.layout`, :mod:`.attention`) ------------------


def month_total_id(month: str) -> str:
    """``m.<YYYY-MM>`` of a month or a day."""
    return f"m.{month_key(month)}"


def account_total_id(account_id: str) -> str:
    return f"a.{account_id}"


def open_total_id(account_id: str) -> str:
    return f"o.{account_id}"


ATTENTION_PREFIX = "u."


def attention_id(month: str) -> str:
    """``u.<YYYY-MM>`` of a month or a day."""
    return f"{ATTENTION_PREFIX}{month_key(month)}"


# -- the roll-ups (:mod:`.rollup`) ------------------------------------------------------------------

LEDGER_ID = "ledger"
BLOCK_YEARS = 5


def year_id(year: str) -> str:
    return f"y.{year}"


def block_of(year: str) -> str:
    """The first year of ``year``'s block (``2016`` → ``2015``)."""
    return str(int(year) // BLOCK_YEARS * BLOCK_YEARS)


def block_id(block: str) -> str:
    return f"e.{block}"


def is_rollup(doc_id: str) -> bool:
    return doc_id == LEDGER_ID or doc_id.startswith(("y.", "e."))


def rollup_keys(month: str) -> list[tuple[str, str]]:
    """The docs a read or change of ``month`` (``YYYY-MM…``) needs in the usual case: the ledger
    doc, its year and its block (read with the month's own docs, in one read)."""
    return [(TOTAL, LEDGER_ID), (TOTAL, year_id(month[:4])), (TOTAL, block_id(block_of(month[:4])))]
