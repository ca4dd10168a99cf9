"""The limits role: email slots, rate limits, confirmation codes and nonces.

:class:`LimitStore` is the interface both stores implement; its record, :class:`~countersign.core.codes.CodeRecord`,
is the core's. The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc

from ..core.codes import CodeRecord


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
