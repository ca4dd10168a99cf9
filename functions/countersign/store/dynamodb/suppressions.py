"""Suppressed addresses (bounces, complaints) on DynamoDB: ``SUPPRESSED#<address>`` items.

Written with ``UpdateItem`` (an upsert), so the notifier function records SES's feedback with the
calls it already makes; never expired by TTL: a bounced address stays suppressed until lifted.
"""

from __future__ import annotations

from ..suppressions import Suppression, SuppressionStore, check_suppression
from ..workspaces import email_key
from . import codec
from .client import Table


class DynamoSuppressions(SuppressionStore):
    def __init__(self, table: Table):
        self.table = table

    def suppress_address(self, suppression: Suppression) -> None:
        check_suppression(suppression)
        values = {":reason": suppression.reason, ":at": suppression.at}
        expression = "SET reason = :reason, #at = :at"
        if suppression.detail is not None:
            values[":detail"] = suppression.detail
            expression += ", detail = :detail"
        else:
            expression += " REMOVE detail"
        self.table.update(codec.suppression_key(suppression.email), UpdateExpression=expression,
                          ExpressionAttributeNames={"#at": "at"}, ExpressionAttributeValues=codec.values(values))

    def address_suppression(self, email: str) -> Suppression | None:
        address = email_key(email)
        found = self.table.get(codec.suppression_key(address))
        return None if found is None else Suppression(address, found["reason"], found["at"], found.get("detail"))

    def lift_suppression(self, email: str) -> None:
        self.table.client.delete_item(TableName=self.table.name, Key=codec.suppression_key(email_key(email)))
