"""The one table, as every role of the DynamoDB store uses it: reads, paginated queries, and
transactions that report why they were cancelled.

``TransactionConflict`` (another transaction touched an item at the same moment) is contention,
not a verdict: :meth:`Table.transact` retries it a few times with jittered backoff. A
``ConditionalCheckFailed`` is a verdict on committed data and is returned to the caller.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

from ..errors import StoreUnavailable
from . import codec

CONFLICT_ATTEMPTS = 5


class Cancelled(Exception):
    """A transaction that did not commit: ``reasons`` has one entry per item, in request order."""

    def __init__(self, reasons: list[dict[str, Any]]):
        super().__init__([r.get("Code") for r in reasons])
        self.reasons = reasons

    def code(self, index: int) -> str | None:
        return self.reasons[index].get("Code") if index < len(self.reasons) else None

    def old(self, index: int) -> dict[str, Any] | None:
        """The item as it was when item ``index``'s condition failed (when it asked for ALL_OLD)."""
        item = self.reasons[index].get("Item") if index < len(self.reasons) else None
        return codec.plain(item) if item else None


class Table:
    def __init__(self, client: Any, name: str, card_retention: int | None):
        self.client = client
        self.name = name
        self.card_retention = card_retention
        self.errors = client.exceptions
        self.seq = codec.Sequence()

    def purge_at(self, t: int) -> int | None:
        """When records tied to a card answerable until ``t`` are removed by TTL (None: never)."""
        return None if self.card_retention is None else t + self.card_retention

    # -- reads ------------------------------------------------------------------------------------

    def get(self, key: codec.Item) -> dict[str, Any] | None:
        item = self.client.get_item(TableName=self.name, Key=key, ConsistentRead=True).get("Item")
        return codec.plain(item) if item else None

    def batch_get(self, keys: list[codec.Item]) -> list[dict[str, Any]]:
        """Up to 100 items by key in one consistent ``BatchGetItem`` (again for any left unprocessed)."""
        if not keys:
            return []
        found: list[dict[str, Any]] = []
        request: dict[str, Any] = {self.name: {"Keys": keys, "ConsistentRead": True}}
        for attempt in range(CONFLICT_ATTEMPTS * 2):
            out = self.client.batch_get_item(RequestItems=request)
            found.extend(codec.plain(item) for item in out.get("Responses", {}).get(self.name, []))
            request = out.get("UnprocessedKeys") or {}
            if not request:
                return found
            time.sleep(random.uniform(0, 0.02 * 2**attempt))
        raise StoreUnavailable("DynamoDB kept some reads of a batch unprocessed; try again.")

    def query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every item of a query, page after page (boto3's paginator), as plain values."""
        kwargs.setdefault("TableName", self.name)
        for page in self.client.get_paginator("query").paginate(**kwargs):
            for item in page.get("Items", []):
                yield codec.plain(item)

    def count(self, **kwargs: Any) -> int:
        """How many items a query matches (``Select=COUNT``, page after page): none are read out."""
        kwargs.setdefault("TableName", self.name)
        pages = self.client.get_paginator("query").paginate(Select="COUNT", **kwargs)
        return sum(int(page.get("Count", 0)) for page in pages)

    def workspace_records(self, workspace_id: str, prefix: str) -> list[dict[str, Any]]:
        """The workspace's items whose sort key starts with ``prefix`` (``PERSON#``, ``CONN#``), in
        order of creation."""
        found = self.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=codec.values({":pk": f"WS#{workspace_id}", ":prefix": prefix}),
            ConsistentRead=True,
        )
        return sorted(found, key=lambda v: (v["created_at"], v["id"]))

    # -- writes -----------------------------------------------------------------------------------

    def put(self, key: codec.Item, values: dict[str, Any]) -> None:
        """Put (or replace) the item ``key`` with ``values`` (plain; None left out)."""
        self.client.put_item(TableName=self.name, Item={**key, **codec.item(values)})

    def put_new(self, raw: codec.Item) -> bool:
        """Put ``raw`` (an item as :mod:`.codec` builds it) unless its key exists; False if it did."""
        try:
            self.client.put_item(TableName=self.name, Item=raw, ConditionExpression="attribute_not_exists(pk)")
            return True
        except self.errors.ConditionalCheckFailedException:
            return False

    def update(self, key: codec.Item, **kwargs: Any) -> dict[str, Any] | None:
        """One UpdateItem; None if its condition failed, else the attributes it returned (if any)."""
        try:
            out = self.client.update_item(TableName=self.name, Key=key, **kwargs)
        except self.errors.ConditionalCheckFailedException:
            return None
        attributes = out.get("Attributes")
        return codec.plain(attributes) if attributes else {}

    def transact(self, items: list[dict[str, Any]], token: str | None = None) -> None:
        """Run a transaction or raise :class:`Cancelled` (after retrying mere contention)."""
        for op in items:
            next(iter(op.values())).setdefault("TableName", self.name)
        kwargs: dict[str, Any] = {"TransactItems": items}
        if token is not None:
            kwargs["ClientRequestToken"] = token
        for attempt in range(CONFLICT_ATTEMPTS):
            try:
                self.client.transact_write_items(**kwargs)
                return
            except self.errors.TransactionCanceledException as exc:
                reasons = exc.response.get("CancellationReasons") or [{"Code": "Unknown"}] * len(items)
                codes = {r.get("Code") for r in reasons}
                if "TransactionConflict" in codes and "ConditionalCheckFailed" not in codes:
                    time.sleep(random.uniform(0, 0.02 * 2**attempt))
                    continue
                raise Cancelled(reasons) from None
            except self.errors.TransactionInProgressException:
                time.sleep(random.uniform(0, 0.02 * 2**attempt))
        raise Cancelled([{"Code": "TransactionConflict"}] * len(items))
