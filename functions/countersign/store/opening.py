"""Which store a URL names, opened: ``sqlite:///PATH`` or ``dynamodb://TABLE``.

Apart from :class:`~countersign.store.Store` so that the package imports no adapter (each adapter
imports the package), and each adapter is imported only when named: a Lambda never loads the
SQLite store, a local server never boto3.
"""

from __future__ import annotations

from . import Store


def open_store(url: str, **kwargs) -> Store:
    """``sqlite:///PATH`` or ``dynamodb://TABLE``."""
    if url.startswith("sqlite:///"):
        # each store imported only when named (the cold start of a Lambda, which needs DynamoDB only)
        from .sqlite import SQLiteStore

        return SQLiteStore(url[len("sqlite:///"):] or ":memory:", **kwargs)
    if url.startswith("dynamodb://"):
        from .dynamodb import DynamoDBStore  # (boto3's import, only where a table is named)

        return DynamoDBStore(url[len("dynamodb://"):], **kwargs)
    raise ValueError(f"unknown store URL {url!r}: expected sqlite:///PATH or dynamodb://TABLE")
