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
    """A create whose id exists, or a versioned write whose version moved."""


class BadInput(StoreError):
    """Input the store refuses before writing anything; ``field`` names the culprit."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
