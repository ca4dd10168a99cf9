"""moto's DynamoDB with transactions as DynamoDB runs them: one at a time.

moto applies a transaction's items one by one without a lock, so threads could interleave inside
one of its transactions, which DynamoDB never does (a transaction is serializable). A race test on
DynamoDB serializes ``transact_write_items`` and nothing else: the reads, the decisions and the
building of each transaction stay concurrent, so a condition expression decides the winner.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def serialized_transactions() -> Iterator[None]:
    from moto.dynamodb.models import DynamoDBBackend

    serial = threading.Lock()
    original = DynamoDBBackend.transact_write_items

    def serializable(self: Any, transact_items: Any) -> Any:
        with serial:
            return original(self, transact_items)

    DynamoDBBackend.transact_write_items = serializable  # type: ignore[method-assign]
    try:
        yield
    finally:
        DynamoDBBackend.transact_write_items = original  # type: ignore[method-assign]


WRITES = ("put_item", "update_item", "delete_item", "transact_write_items")
READS = ("query", "get_item")


@contextlib.contextmanager
def serialized_writes() -> Iterator[None]:
    """Every write of moto's DynamoDB one at a time, as DynamoDB applies each item's write (and
    each transaction) atomically: moto checks a condition and writes in two Python steps that
    threads can interleave. Reads and everything around the writes stay concurrent."""
    with _one_at_a_time(WRITES):
        yield


@contextlib.contextmanager
def serialized_writes_and_reads() -> Iterator[None]:
    """:func:`serialized_writes`, with each query and item read one at a time among them too:
    moto's reads change its table (a read of a missing partition adds an empty one to a
    defaultdict) while a transaction deep-copies it, and a query walks a partition's items in
    Python while another thread's write may change them (``RuntimeError: dictionary changed size
    during iteration``); DynamoDB's consistent reads see one committed state. The decisions
    between the reads and the writes stay concurrent."""
    with _one_at_a_time((*WRITES, *READS)):
        yield


@contextlib.contextmanager
def _one_at_a_time(names: tuple[str, ...]) -> Iterator[None]:
    """moto's DynamoDB backend methods ``names``, each call one at a time among them (a reentrant
    lock: a transaction's items may go through the single-item writes)."""
    from moto.dynamodb.models import DynamoDBBackend

    serial = threading.RLock()
    originals = {name: getattr(DynamoDBBackend, name) for name in names}

    def serializable(original: Any) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            with serial:
                return original(self, *args, **kwargs)
        return call

    for name, original in originals.items():
        setattr(DynamoDBBackend, name, serializable(original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(DynamoDBBackend, name, original)
