"""Cards on DynamoDB: filing, reading, listings, transitions and the audit trail.

A mixin of :class:`countersign.store.dynamodb.DynamoDBStore` (kept apart to keep files short);
it uses the store's ``client``, ``table``, ``_get``, ``_transact``, ``_seq``, ``_purge_at``,
``_remember`` and ``_cards``.

Pending cards sit in the sparse GSI partition ``PENDING#<ws>#<person>`` keyed by
``<expires_at:012d>#<id>``, so "unexpired" is a key condition. Leaving ``pending`` moves the
card to ``DONE#<ws>#<person>`` keyed by ``<updated_at:012d>#<id>``. History is the merge, newest
first, of that partition and the lapsed part of the pending one (a pending card past its
deadline is history too; its time is its deadline).
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from typing import Any, Iterator

from ..core.cards import LEGAL_MOVES, CardState, Refusal, check_move, effective_state, refusal_for
from . import dynamodb_codec as codec
from . import checks
from .errors import BadInput, Conflict, NotFound, StoreError
from .records import AuditEntry, Card
from .table import GSI1

S, N = codec.S, codec.N
STATUS = {"#s": "status"}
# The one state each target is reachable from (no target of the lifecycle has two sources).
SOURCE: dict[CardState, CardState] = {t: s for s, targets in LEGAL_MOVES.items() for t in targets}
AUDIT_SLACK = 30 * 24 * 3600  # an appended entry outlives its card's purge by at most this
ATTEMPTS = 4


class CardMethods:
    client: Any
    table: str

    # -- filing and reading ----------------------------------------------------------------------

    def file_card(self, card: Card, audit: AuditEntry) -> None:
        checks.check_arguments(card.arguments)  # plain JSON, at most 64 KiB as canonical JSON
        purge = self._purge_at(card.expires_at)
        latest = {
            **codec.latest_key(card.workspace_id, card.person_id, card.tool, card.fingerprint),
            "card_id": S(card.id),
            "workspace_id": S(card.workspace_id),
        }
        codec.put_optional(latest, "expires_at", purge)
        reasons = self._transact([
            {"Put": {"Item": codec.card_item(card, purge), "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"Item": codec.audit_item(audit, self._seq.next(), purge), "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"Item": latest}},
        ])
        if reasons is None:
            self._remember(card)
            return
        if reasons[0].get("Code") == "ConditionalCheckFailed":
            raise Conflict(f"A card with id {card.id!r} already exists.")
        raise StoreError(f"The card could not be filed ({[r.get('Code') for r in reasons]}); nothing was written.")

    def _read_card(self, workspace_id: str, card_id: str) -> Card:
        """The stored card (no expiry applied), read consistently; NotFound across workspaces."""
        item = self._get(codec.card_key(card_id))
        if item is None or item["workspace_id"]["S"] != workspace_id:
            raise NotFound("card", card_id)
        return self._remember(codec.card_from_item(item))

    def get_card(self, workspace_id: str, card_id: str, now: int) -> Card:
        return self._read_card(workspace_id, card_id).at(now)

    def latest_card(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int) -> Card | None:
        pointer = self._get(codec.latest_key(workspace_id, person_id, tool, fingerprint))
        if pointer is None:
            return None
        try:
            return self.get_card(workspace_id, pointer["card_id"]["S"], now)
        except NotFound:
            return None

    # -- listings --------------------------------------------------------------------------------

    def _index(self, partition: str, op: str, bound: str, forward: bool, page: int) -> Iterator[codec.Item]:
        """Items of one gsi1 partition with ``gsi1sk <op> bound``, in key order, fetched ``page`` at a time."""
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": GSI1,
            "KeyConditionExpression": f"gsi1pk = :p AND gsi1sk {op} :b",
            "ExpressionAttributeValues": {":p": S(partition), ":b": S(bound)},
            "ScanIndexForward": forward,
            "Limit": page,
        }
        while True:
            out = self.client.query(**kwargs)
            yield from out.get("Items", [])
            if "LastEvaluatedKey" not in out:
                return
            kwargs["ExclusiveStartKey"] = out["LastEvaluatedKey"]

    @staticmethod
    def _page(items: Iterator[codec.Item], limit: int, now: int) -> tuple[list[Card], str | None]:
        """The first ``limit`` items as cards, and a cursor if one more exists."""
        taken: list[codec.Item] = []
        for item in items:
            taken.append(item)
            if len(taken) > limit:
                break
        cursor = codec.encode_cursor(taken[limit - 1]["gsi1sk"]["S"]) if len(taken) > limit else None
        return [codec.card_from_item(i).at(now) for i in taken[:limit]], cursor

    def list_pending_cards(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        _check_limit(limit)
        lower = codec.after_second(now)  # expires_at > now, in the key condition
        if cursor is not None:
            lower = max(lower, codec.decode_cursor(cursor))
        items = self._index(codec.pending_partition(workspace_id, person_id), ">", lower, True, limit + 1)
        return self._page(items, limit, now)

    def list_card_history(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        _check_limit(limit)
        lapsed_upper = codec.after_second(now)  # pending cards with expires_at <= now
        done_upper = "~"  # above every time key
        if cursor is not None:
            done_upper = codec.decode_cursor(cursor)
            lapsed_upper = min(lapsed_upper, done_upper)
        done = self._index(codec.history_partition(workspace_id, person_id), "<", done_upper, False, limit + 1)
        lapsed = self._index(codec.pending_partition(workspace_id, person_id), "<", lapsed_upper, False, limit + 1)
        merged = heapq.merge(done, lapsed, key=lambda i: i["gsi1sk"]["S"], reverse=True)
        return self._page(merged, limit, now)

    # -- transitions -----------------------------------------------------------------------------

    def transition_card(
        self,
        workspace_id: str,
        card_id: str,
        target: CardState,
        now: int,
        audit: AuditEntry,
        *,
        result: Any = None,
        decline_reason: str | None = None,
        refusal: str | None = None,
        channel: str | None = None,
    ) -> Card:
        target = CardState(target)
        source = SOURCE.get(target)
        base = self._cards.get(card_id)
        fresh = base is None or base.state is not source
        if fresh:
            base = self._read_card(workspace_id, card_id)
        if base.workspace_id != workspace_id:
            raise NotFound("card", card_id)
        fields = {"result": result, "decline_reason": decline_reason, "refusal": refusal, "channel": channel}
        fields = {k: v for k, v in fields.items() if v is not None}  # None keeps what an earlier move wrote
        for _ in range(ATTEMPTS):
            try:
                check_move(base.state, target, base.expires_at, now)
            except Refusal:
                if fresh:
                    raise
                base, fresh = self._read_card(workspace_id, card_id), True
                continue
            reasons = self._transact(self._move_ops(base, target, now, audit, fields))
            if reasons is None:
                return self._remember(replace(base, state=target, updated_at=now, **fields))
            old = reasons[0].get("Item") if reasons[0].get("Code") == "ConditionalCheckFailed" else None
            if old is not None:  # the state it lost to, without a second read
                if old["workspace_id"]["S"] != workspace_id:
                    raise NotFound("card", card_id)
                base = self._remember(codec.card_from_item(old))
            else:  # a concurrent transaction (TransactionConflict) or a vanished item: look again
                base = self._read_card(workspace_id, card_id)
            fresh = True
        raise refusal_for(effective_state(base.state, base.expires_at, now), target)

    def _move_ops(self, base: Card, target: CardState, now: int, audit: AuditEntry, fields: dict[str, Any]) -> list:
        source = base.state
        names = dict(STATUS)
        values: dict[str, Any] = {
            ":to": S(target.value),
            ":from": S(source.value),
            ":ws": S(base.workspace_id),
            ":now": N(now),
            ":gpk": S(codec.history_partition(base.workspace_id, base.person_id)),
            ":gsk": S(codec.time_key(now, base.id)),
        }
        sets = ["#s = :to", "updated_at = :now", "gsi1pk = :gpk", "gsi1sk = :gsk"]
        for name, value in fields.items():
            names[f"#{name}"] = name
            values[f":{name}"] = codec.J(value) if name == "result" else S(value)
            sets.append(f"#{name} = :{name}")
        condition = "#s = :from AND workspace_id = :ws"
        if source is CardState.PENDING and target is not CardState.EXPIRED:
            condition += " AND card_expires_at > :now"
        purge = self._purge_at(base.expires_at)
        return [
            {"Update": {
                "Key": codec.card_key(base.id),
                "UpdateExpression": "SET " + ", ".join(sets),
                "ConditionExpression": condition,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }},
            {"Put": {"Item": codec.audit_item(audit, self._seq.next(), purge), "ConditionExpression": "attribute_not_exists(pk)"}},
        ]

    # -- audit -----------------------------------------------------------------------------------

    def append_audit(self, entry: AuditEntry) -> None:
        cached = self._cards.get(entry.card_id)
        purge = self._purge_at(cached.expires_at if cached else entry.at + AUDIT_SLACK)
        self.client.put_item(TableName=self.table, Item=codec.audit_item(entry, self._seq.next(), purge))

    def audit_trail(self, workspace_id: str, card_id: str) -> list[AuditEntry]:
        wanted = ("sk", "card_id", *codec.AUDIT_FIELDS)
        names = {f"#a{i}": name for i, name in enumerate(wanted)}
        items = list(self._query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": S(f"CARD#{card_id}")},
            ProjectionExpression=", ".join(names),
            ExpressionAttributeNames=names,
            ConsistentRead=True,
        ))
        card = next((i for i in items if i["sk"]["S"] == "CARD"), None)
        if card is None or card["workspace_id"]["S"] != workspace_id:
            raise NotFound("card", card_id)
        return [codec.audit_from_item(i) for i in items if i["sk"]["S"].startswith("AUDIT#")]


def _check_limit(limit: int) -> None:
    if type(limit) is not int or limit < 1:
        raise BadInput("limit", "must be a positive whole number.")
