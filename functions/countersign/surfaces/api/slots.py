"""A counted slot of something Settings lets a person (or a session) do a few times per window:
taken in the store, or refused with 429, ``Retry-After`` and a sentence saying when to try again."""

from __future__ import annotations

from ...store.limits import LimitStore
from .errors import ApiError


def take_slot(limits: LimitStore, key: str, now: int, window: int, limit: int, refused: str) -> None:
    """Count one use of ``key``, or refuse it: ``refused`` (what was not done and the limit, a
    sentence) then when to try again."""
    if limits.hit_rate_limit(key, now, window, limit):
        return
    wait = window - now % window
    minutes = max(1, -(-wait // 60))
    raise ApiError(429, "rate_limited", f"{refused} Try again in {minutes} minute{'' if minutes == 1 else 's'}.",
                   headers={"Retry-After": str(wait)})
