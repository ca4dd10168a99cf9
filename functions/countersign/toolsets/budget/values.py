"""Values of the budget: amounts (milliunits) and their text, dates, the months and the categories a budget holds."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from ...core.preview import money
from ...toolkit import ActionError

MAX_UNITS = Decimal(1_000_000_000)  # a billion in any currency is not a household budget amount
# The most categories a budget holds. A year's roll-up and a month's totals keep an entry per
# category, and a stored item must stay under DynamoDB's 400 KB: at this many, budgeted and spent
# in every month, the largest (a year doc) is under half of that (tests/budget/test_item_bound.py).
MAX_CATEGORIES = 500


def too_many_categories(adding: int, have: int) -> str:
    return (f"This budget has {have} categories; adding {adding} more would pass the most one budget holds "
            f"({MAX_CATEGORIES}): rename and reuse one that is no longer needed (update_category). "
            "Nothing was written.")


# -- amounts ---------------------------------------------------------------------------------------


AMOUNT_IS = (
    "an amount is a number of currency units, such as 150.00 or \"-86.40\" (outflows negative), with at most "
    "3 decimals and less than 1,000,000,000"
)


_AMOUNT = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)", re.ASCII)


def _not_an_amount(value: Any, field: str) -> ActionError:
    shown = "NaN" if isinstance(value, float) and value != value else repr(value)
    return ActionError(f"{field}: {shown} is not an amount; {AMOUNT_IS}.", field=field)


def to_milliunits(value: Any, field: str) -> int:
    """A currency amount (``150``, ``150.5``, ``"-86.40"``) to milliunits; :class:`ActionError` naming
    ``field`` and saying what an amount is."""
    if isinstance(value, bool) or value is None or not isinstance(value, (int, float, str)):
        raise _not_an_amount(value, field)
    text = value.strip() if isinstance(value, str) else repr(value)
    if isinstance(value, str) and not _AMOUNT.fullmatch(text):
        raise _not_an_amount(value, field)
    try:
        amount = Decimal(text)
    except InvalidOperation:
        raise _not_an_amount(value, field) from None
    if not amount.is_finite():
        raise _not_an_amount(value, field)
    if abs(amount) >= MAX_UNITS:
        raise ActionError(f"{field}: {value!r} is too large for a budget amount; {AMOUNT_IS}.", field=field)
    milli = amount * 1000
    if isinstance(value, float) and abs(milli - milli.to_integral_value()) < Decimal("0.000001"):
        milli = milli.to_integral_value()  # binary float noise such as 0.1 + 0.2
    if milli != milli.to_integral_value():
        raise ActionError(f"{field}: {value!r} has more decimals than a budget keeps (at most 3).", field=field)
    return int(milli)


def display(milliunits: int) -> str:
    """``150000`` → ``"150.00"`` (the format of every preview); an amount with a thousandth, which
    a budget keeps, with its third decimal (``4`` → ``"0.004"``), never rounded away: two different
    changes never read alike."""
    if milliunits % 10 == 0:
        return money(milliunits)
    sign = "-" if milliunits < 0 else ""
    return f"{sign}{abs(milliunits) // 1000}.{abs(milliunits) % 1000:03d}"


def amounts(prefix: str, milliunits: int) -> dict[str, Any]:
    """``{prefix: "150.00", prefix_milliunits: 150000}`` for read results."""
    return {prefix: display(milliunits), f"{prefix}_milliunits": milliunits}


# -- dates and months ------------------------------------------------------------------------------

# ASCII digits only: \d would also take "١٢" or "２０２６" (other scripts' digits), which Decimal and
# int() read as numbers, and a month written so would name a document no other spelling finds.
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_ISO_MONTH = re.compile(r"(\d{4})-(\d{2})", re.ASCII)


def today(now: int) -> date:
    return datetime.fromtimestamp(now, tz=UTC).date()


def iso_time(ts: int) -> str:
    """A time as every answer of countersign gives one: ``2026-09-20T12:00:00Z`` (UTC, to the second)."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# The months a budget holds: from January 2000 to ten years after the current month. A month or a
# day outside them (1900-01, 9999-12) is a slip, refused before anything is planned.
EARLIEST_MONTH = "2000-01-01"
YEARS_AHEAD = 10


def month_window(now: int) -> tuple[str, str]:
    """(first, last) month a budget holds at ``now``, as ``YYYY-MM-01``."""
    return EARLIEST_MONTH, add_months(today(now).isoformat()[:7] + "-01", 12 * YEARS_AHEAD)


def _within(day: str, now: int, field: str, shown: str) -> str:
    first, last = month_window(now)
    if not first <= month_start(day) <= last:
        raise ActionError(
            f"{field}: {shown} is outside the months a budget holds: from {first[:7]} to {last[:7]} "
            f"(ten years after the current month).",
            field=field,
        )
    return day


def parse_date(value: Any, field: str, now: int | None = None) -> str:
    """``YYYY-MM-DD`` of a day that exists (and, given ``now``, in :func:`month_window`), else
    :class:`ActionError` naming ``field``."""
    text = value.strip() if isinstance(value, str) else None
    m = _ISO_DATE.fullmatch(text or "")
    if not m:
        raise ActionError(f"{field}: {value!r} is not a date; use YYYY-MM-DD.", field=field)
    try:
        day = date(int(m[1]), int(m[2]), int(m[3])).isoformat()
    except ValueError:
        raise ActionError(f"{field}: {text} is not a date that exists.", field=field) from None
    return day if now is None else _within(day, now, field, day)


def month_key(day: str) -> str:
    """``2026-09-12`` → ``2026-09`` (a bucket's month)."""
    return day[:7]


MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


def month_name(month: str) -> str:
    """``2026-09-01`` (or ``2026-09``) → ``September 2026``, as an outcome names a month."""
    try:
        first = date.fromisoformat(month_start(str(month)))
    except ValueError:
        return str(month)
    return f"{MONTHS[first.month - 1]} {first.year}"


def counted(n: int, one: str, many: str | None = None) -> str:
    """``1 transaction``, ``2 transactions``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def month_start(day: str) -> str:
    """``2026-09-12`` → ``2026-09-01`` (a month as the budget tools resolve it: its first day)."""
    return day[:7] + "-01"


def add_months(month: str, delta: int) -> str:
    year, mon = int(month[:4]), int(month[5:7])
    index = year * 12 + (mon - 1) + delta
    return f"{index // 12:04d}-{index % 12 + 1:02d}-01"


def resolve_month(value: Any, now: int, field: str = "month") -> str:
    """``2026-09``, ``2026-09-01`` (any existing day), ``current``, ``next``, ``previous`` → ``2026-09-01``."""
    if not isinstance(value, str) or not value.strip():
        raise ActionError(f"{field}: give a month as 2026-09, 2026-09-01, current or next.", field=field)
    text = value.strip().lower()
    current = today(now).isoformat()[:7] + "-01"
    if text in ("current", "this", "now"):
        return current
    if text == "next":
        return add_months(current, 1)
    if text in ("previous", "last"):
        return add_months(current, -1)
    m = _ISO_MONTH.fullmatch(text)
    if m:
        if not 1 <= int(m[2]) <= 12:
            raise ActionError(f"{field}: {value!r} is not a month that exists.", field=field)
        return _within(f"{m[1]}-{m[2]}-01", now, field, text)
    if _ISO_DATE.fullmatch(text):
        return _within(month_start(parse_date(text, field)), now, field, text)
    raise ActionError(f"{field}: {value!r} is not a month; use 2026-09, 2026-09-01, current or next.", field=field)
