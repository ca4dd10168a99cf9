"""Storage: one interface (:class:`Store`), two implementations (SQLite, DynamoDB)."""

from __future__ import annotations

from .errors import BadInput, Conflict, NotFound, StoreError
from .interface import Store

__all__ = ["BadInput", "Conflict", "NotFound", "Store", "StoreError", "open_store"]


def open_store(url: str, **kwargs) -> Store:
    """``sqlite:///PATH`` or ``dynamodb://TABLE``."""
    if url.startswith("sqlite:///"):
        from .sqlite import SQLiteStore

        return SQLiteStore(url[len("sqlite:///"):] or ":memory:", **kwargs)
    if url.startswith("dynamodb://"):
        from .dynamodb import DynamoDBStore

        return DynamoDBStore(url[len("dynamodb://"):], **kwargs)
    raise ValueError(f"unknown store URL {url!r}: expected sqlite:///PATH or dynamodb://TABLE")
