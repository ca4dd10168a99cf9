"""Email slots, rate limits, confirmation codes and nonces on DynamoDB: one conditional write each."""

from __future__ import annotations

from typing import Any

from ...core.codes import CodeRecord
from ..limits import LimitStore, RequestCounts
from . import codec
from .client import Cancelled, Table


class DynamoLimits(LimitStore):
    def __init__(self, table: Table):
        self.table = table

    # -- single-use values: confirmation codes and answer nonces -------------------------------------

    def put_code(self, record: CodeRecord) -> None:
        self.table.client.put_item(TableName=self.table.name, Item=codec.code_item(record))

    def take_code(self, code_hash: str, now: int) -> CodeRecord | None:
        out = self.table.client.delete_item(
            TableName=self.table.name, Key=codec.single_key("CODE", code_hash), ReturnValues="ALL_OLD"
        )
        raw = out.get("Attributes")
        return codec.code_from(codec.plain(raw)) if raw else None

    def use_nonce(self, nonce: str, expires_at: int, now: int) -> bool:
        try:
            self.table.client.put_item(
                TableName=self.table.name,
                Item={**codec.single_key("NONCE", nonce), **codec.item({"expires_at": expires_at})},
                ConditionExpression="attribute_not_exists(pk) OR expires_at <= :now",
                ExpressionAttributeValues=codec.values({":now": now}),
            )
            return True
        except self.table.errors.ConditionalCheckFailedException:
            return False

    # -- rate limits ------------------------------------------------------------------------------

    def claim_email_slot(self, person_id: str, now: int, interval: int, claimer: str | None = None) -> bool:
        values: dict[str, int | str] = {":now": now, ":cutoff": now - interval, ":exp": now + 2 * interval}
        update, condition = (
            "SET last_sent = :now, expires_at = :exp",
            "attribute_not_exists(last_sent) OR last_sent <= :cutoff",
        )
        if claimer is not None:
            values[":me"] = claimer
            update, condition = update + ", claimer = :me", condition + " OR claimer = :me"
        else:
            update += " REMOVE claimer"
        return self.table.update(
            codec.email_slot_key(person_id), UpdateExpression=update, ConditionExpression=condition,
            ExpressionAttributeValues=codec.values(values),
        ) is not None

    def release_email_slot(self, person_id: str, claimed_at: int) -> None:
        try:
            self.table.client.delete_item(
                TableName=self.table.name,
                Key=codec.email_slot_key(person_id),
                ConditionExpression="last_sent = :mine",
                ExpressionAttributeValues=codec.values({":mine": claimed_at}),
            )
        except self.table.errors.ConditionalCheckFailedException:
            pass  # a later claim replaced ours (or nothing was claimed): leave it

    def hit_rate_limit(self, key: str, now: int, window: int, limit: int) -> bool:
        start = now - now % window
        return self.table.update(
            codec.limit_key(key, start),
            UpdateExpression="ADD hits :one SET expires_at = :exp",
            ConditionExpression="attribute_not_exists(hits) OR hits < :limit",
            ExpressionAttributeValues=codec.values({":one": 1, ":limit": limit, ":exp": start + 2 * window}),
        ) is not None

    def read_counts(self, counts: RequestCounts) -> None:
        seen_in(counts, self.table.batch_get(count_keys(counts)))

    def take_counts(self, counts: RequestCounts) -> bool:
        """One ``UpdateItem`` for a single counter, else one ``TransactWriteItems`` for them all."""
        updates = count_updates(counts)
        if len(updates) == 1:
            update = dict(updates[0]["Update"])
            taken = self.table.update(update.pop("Key"), **update) is not None
        else:
            try:
                self.table.transact(updates)
                taken = True
            except Cancelled as cancelled:
                if not any(cancelled.code(i) == "ConditionalCheckFailed" for i in range(len(updates))):
                    raise
                taken = False
        counts.taken = taken
        return taken


def count_keys(counts: RequestCounts) -> list[codec.Item]:
    """The counters' items in this window (to read with a caller's ``BatchGetItem``)."""
    return [codec.limit_key(key, counts.window_start) for key, _ in counts.counters]


def seen_in(counts: RequestCounts, found: list[dict[str, Any]]) -> None:
    """``counts.seen`` from the items a batch read (others among them are left alone)."""
    mine = {f"LIMIT#{key}": key for key, _ in counts.counters}
    sk = f"{counts.window_start:012d}"
    counts.seen = {mine[v["pk"]]: int(v.get("hits", 0)) for v in found if v["pk"] in mine and v["sk"] == sk}


def count_updates(counts: RequestCounts) -> list[dict[str, Any]]:
    """Each counter one hit more, if it is not at its limit: transaction items (a card's, or their own)."""
    return [{"Update": {
        "Key": codec.limit_key(key, counts.window_start),
        "UpdateExpression": "ADD hits :one SET expires_at = :exp",
        "ConditionExpression": "attribute_not_exists(hits) OR hits < :limit",
        "ExpressionAttributeValues": codec.values({":one": 1, ":limit": limit, ":exp": counts.expires_at}),
    }} for key, limit in counts.counters]
