"""The DynamoDB store: one table (see :mod:`countersign.store.table`), one object per role, all
sharing one :class:`~.client.Table` (the low-level boto3 client and the table's name)."""

from __future__ import annotations

from typing import Any

from .. import Store
from ..errors import StoreUnusable
from .authorizations import DynamoAuthorizations
from .callers import DynamoCallerReads
from .cards import DynamoCards
from .client import Table
from .connections import DynamoConnections
from .docs import DynamoDocs
from .grants import DynamoGrants
from .limits import DynamoLimits
from .outbox import DynamoOutbox
from .passkeys import DynamoPasskeys
from .push_subscriptions import DynamoPushSubscriptions
from .sessions import DynamoSessions
from .signing_keys import DynamoSigningKeys
from .slack import DynamoSlack
from .standing_grants import DynamoStandingGrants
from .suppressions import DynamoSuppressions
from .webhook_deliveries import DynamoWebhookDeliveries
from .webhook_endpoints import DynamoWebhookEndpoints
from .workspaces import DynamoWorkspaces

__all__ = ["CARD_RETENTION", "DynamoDBStore"]

CARD_RETENTION = 365 * 24 * 3600  # decided cards and their audit trail stay this long after the deadline


class DynamoDBStore(Store):
    def __init__(self, table_name: str, *, client: Any = None, region_name: str | None = None,
                 card_retention: int | None = CARD_RETENTION):
        self._own_client = client is None
        if client is None:
            # boto3 is the aws extra: this adapter is imported only when a dynamodb:// store is opened,
            # and a local install without the extra is told so by the settings check first.
            import boto3
            from botocore.exceptions import NoRegionError

            from ...platform.botocore_config import DYNAMODB_CONFIG

            try:
                client = boto3.client("dynamodb", region_name=region_name, config=DYNAMODB_CONFIG)
            except NoRegionError:
                raise StoreUnusable(
                    f"dynamodb://{table_name}: no AWS region is set, so the table cannot be found. Set "
                    "AWS_REGION (or AWS_DEFAULT_REGION, or a region in the AWS profile you use) to the "
                    "stack's region.") from None
        self.table = Table(client, table_name, card_retention)
        table = self.table
        super().__init__(
            docs=DynamoDocs(table), cards=DynamoCards(table), signing_keys=DynamoSigningKeys(table),
            outbox=DynamoOutbox(table), workspaces=DynamoWorkspaces(table), connections=DynamoConnections(table),
            sessions=DynamoSessions(table), limits=DynamoLimits(table), authorizations=DynamoAuthorizations(table),
            grants=DynamoGrants(table), suppressions=DynamoSuppressions(table), passkeys=DynamoPasskeys(table),
            standing_grants=DynamoStandingGrants(table),
            webhook_endpoints=DynamoWebhookEndpoints(table),
            webhook_deliveries=DynamoWebhookDeliveries(table),
            slack=DynamoSlack(table),
            push_subscriptions=DynamoPushSubscriptions(table),
            callers=DynamoCallerReads(table),
        )

    @property
    def client(self) -> Any:
        return self.table.client

    def close(self) -> None:
        if self._own_client:
            self.table.client.close()
