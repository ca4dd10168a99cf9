"""The limits role: email slots, rate limits, confirmation codes and nonces.

:class:`LimitStore` is the interface both stores implement; its record, :class:`~countersign.core.codes.CodeRecord`,
is the core's. The rules every role keeps are stated in :mod:`.workspaces`.

A request's counts against the request limits (:class:`RequestCounts`, docs/operations.md,
"Request limits") are read with the request's caller (:mod:`.callers`) and taken once: in the
transaction of the card the request files or answers (``CardCommit.counts``, ``file_card``'s
``counts``), or alone (:meth:`LimitStore.take_counts`). The one of the request being served
travels as a value: in the request's ASGI scope, then on its caller, question and answer
(docs/architecture.md).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

from ..core.codes import CodeRecord
from .errors import StoreError


@dataclass
class RequestCounts:
    """The counters one request is charged to: each ``(key, limit)``, counted in the fixed window of
    ``window`` seconds that holds ``now``. ``refusal``: the sentence a request over a limit is told
    (``{wait}``: the seconds left in the window).

    ``seen``: each counter's hits so far, once read (with the caller: a key absent was not hit in
    this window); ``taken``: whether this request has been counted (a store sets it when the
    write that counts it went through); ``skipped``: see below. Set and read by one request only."""

    counters: tuple[tuple[str, int], ...]
    now: int
    window: int
    refusal: str = "Too many requests. Wait {wait} s, then try again."
    seen: dict[str, int] | None = None
    taken: bool = False
    # The card's transaction that was to count it was throttled on a counter and went through
    # without them (docs/operations.md, "Request limits"): not counted, and not tried again.
    skipped: bool = False

    @property
    def window_start(self) -> int:
        return self.now - self.now % self.window

    @property
    def expires_at(self) -> int:
        """When a counter of this window may be forgotten."""
        return self.window_start + 2 * self.window

    @property
    def wait(self) -> int:
        """Seconds to the next window (``Retry-After``)."""
        return self.window - self.now % self.window

    def over(self) -> bool:
        """Whether what was read shows a counter at its limit already."""
        return self.seen is not None and any(self.seen.get(key, 0) >= limit for key, limit in self.counters)

    def to_take(self) -> RequestCounts | None:
        """These counts, if a write should still take them (None once taken or with no counter)."""
        return None if self.taken or self.skipped or not self.counters else self


class OverLimit(StoreError):
    """A request over one of its limits: refused before its work, or a write that would have
    counted it found a counter at its limit (another request took the last count meanwhile), and
    nothing was written."""

    def __init__(self, counts: RequestCounts):
        super().__init__(f"{counts.refusal.format(wait=counts.wait)} Nothing was written.")
        self.wait = counts.wait


class LimitStore(abc.ABC):
    """Counters and single-use values: email slots, rate limits, confirmation codes, nonces."""

    @abc.abstractmethod
    def put_code(self, record: CodeRecord) -> None: ...

    @abc.abstractmethod
    def take_code(self, code_hash: str, now: int) -> CodeRecord | None:
        """Delete and return the code record: the first use spends it, matching or not.

        Returns the record even if expired (the caller checks); None if unknown or spent.
        """

    @abc.abstractmethod
    def use_nonce(self, nonce: str, expires_at: int, now: int) -> bool:
        """True the first time ``nonce`` is used (until ``expires_at``), False ever after."""

    @abc.abstractmethod
    def claim_email_slot(self, person_id: str, now: int, interval: int, claimer: str | None = None) -> bool:
        """One conditional write: True if no email went to this person in the last ``interval`` s —
        or if the last claim was ``claimer``'s own (its sender died before finishing: it may try
        again, and the others stay limited)."""

    @abc.abstractmethod
    def release_email_slot(self, person_id: str, claimed_at: int) -> None:
        """Undo a claim made at ``claimed_at`` (a failed send), unless a later claim replaced it."""

    @abc.abstractmethod
    def hit_rate_limit(self, key: str, now: int, window: int, limit: int) -> bool:
        """Count one hit on ``key`` in the fixed window containing ``now``; False once over ``limit``."""

    @abc.abstractmethod
    def read_counts(self, counts: RequestCounts) -> None:
        """Read each counter of ``counts`` (its hits in the window) into ``counts.seen``."""

    @abc.abstractmethod
    def take_counts(self, counts: RequestCounts) -> bool:
        """One write (one request on DynamoDB): each counter of ``counts`` one hit more, on condition
        that none is at its limit. True (and ``counts.taken``) if they were taken; False, with
        nothing counted, if one was at its limit."""
