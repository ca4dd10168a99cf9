"""The signing-keys role: which keys signed tickets of cards that may still be answered.

A key may be retired only once no card it signed can still be answered; the record is kept by
:meth:`~.cards.CardStore.file_card` (in the filing's own transaction) and by the operator
(:meth:`SigningKeyStore.note_signing_key`). The rules every role keeps are stated in
:mod:`.workspaces`.
"""

from __future__ import annotations

import abc


class SigningKeyStore(abc.ABC):
    @abc.abstractmethod
    def note_signing_key(self, key_id: str, until: int) -> None:
        """Record that tickets signed by ``key_id`` may be spent until ``until`` (never lowers it)."""

    @abc.abstractmethod
    def signing_keys_in_use(self, now: int) -> dict[str, int]:
        """Key id → until, for every key that signed a card that may still be answered."""

    @abc.abstractmethod
    def forget_signing_key(self, key_id: str) -> None:
        """Drop a key from the record (its cards will be refused as tampered if clicked)."""
