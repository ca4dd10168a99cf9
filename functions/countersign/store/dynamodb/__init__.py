"""The DynamoDB store: one table (see :mod:`countersign.store.table`), one object per role, all
sharing one :class:`~.client.Table` (the low-level boto3 client and the table's name)."""

from __future__ import annotations

from typing import Any

from ..composed import ComposedStore
from .accounts import DynamoAccounts
from .callers import DynamoCallerReads
from .cards import DynamoCards
from .client import Table
from .docs import DynamoDocs
from .limits import DynamoLimits
from .oauth import DynamoOAuth
from .outbox import DynamoOutbox
from .passkeys import DynamoPasskeys
from .suppressions import DynamoSuppressions

__all__ = ["CARD_RETENTION", "DynamoDBStore"]

CARD_RETENTION = 365 * 24 * 3600  # decided cards and their audit trail stay this long after the deadline


class DynamoDBStore(DynamoCallerReads, ComposedStore):
    def __init__(self, table_name: str, *, client: Any = None, region_name: str | None = None,
                 card_retention: int | None = CARD_RETENTION):
        self._own_client = client is None
        if client is None:
            import boto3

            from ...platform.botocore_config import DYNAMODB_CONFIG

            client = boto3.client("dynamodb", region_name=region_name, config=DYNAMODB_CONFIG)
        self.table = Table(client, table_name, card_retention)
        super().__init__(
            docs=DynamoDocs(self.table), cards=DynamoCards(self.table), outbox=DynamoOutbox(self.table),
            accounts=DynamoAccounts(self.table), limits=DynamoLimits(self.table),
            oauth=DynamoOAuth(self.table),
            suppressions=DynamoSuppressions(self.table), passkeys=DynamoPasskeys(self.table),
        )

    @property
    def client(self) -> Any:
        return self.table.client

    def close(self) -> None:
        if self._own_client:
            self.table.client.close()
