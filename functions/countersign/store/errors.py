"""Typed errors of the store layer. Messages are for people: they name the problem."""

from __future__ import annotations


class StoreError(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class NotFound(StoreError):
    """Unknown id, or an id of another workspace (the two are indistinguishable on purpose)."""

    def __init__(self, what: str, ident: str):
        super().__init__(f"No {what} with id {ident!r} in this workspace.")
        self.what = what
        self.ident = ident


class Conflict(StoreError):
    """A create whose id exists, or a versioned write whose version moved.

    For a versioned write (:meth:`Store.write_docs`), ``kind`` and ``id`` name the doc whose
    version moved; they are None for every other conflict.
    """

    def __init__(self, message: str, kind: str | None = None, id: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.id = id


class BadInput(StoreError):
    """Input the store refuses before writing anything; ``field`` names the culprit."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


class StoreUnavailable(StoreError):
    """The store could not record a write (disk full, read-only, I/O error): nothing was written,
    and the same request may be tried again once the cause is gone."""


class StoreUnusable(StoreError):
    """The store cannot be opened at all: the database file is corrupt, read-only, empty or cannot
    be created. Raised at start-up; the message is one line naming the file and the fix."""


class Taken(StoreError):
    """A new card could not be filed decided: its request is held by a live card, ``card``."""

    def __init__(self, card):
        super().__init__(f"The request is held by the card {card.id!r}.")
        self.card = card


class Replayed(StoreError):
    """A commit carried a single-use value (``CardCommit.nonce``) that was spent already: nothing was written."""

    def __init__(self) -> None:
        super().__init__("This single-use value was used already; nothing was written.")


class GrantUnavailable(StoreError):
    """A card's commit carried a use of a standing grant (``CardCommit.grant_use``) that the grant
    no longer has: revoked, expired, no use left, or no room under its cap. Nothing was written."""

    def __init__(self) -> None:
        super().__init__("The standing grant has no use left for this call (used up, over its cap, expired or "
                         "revoked); nothing was written.")


class Moved(StoreError):
    """A pending card changed since the caller read it (another vote, a widened audience): nothing
    was written; read it again and decide again."""

    def __init__(self) -> None:
        super().__init__("The card changed since it was read; nothing was written.")
