"""Cards on DynamoDB: filing (one live card per request), reading, listings, the commit, audit.

Items (see :mod:`countersign.store.table`): the card ``CARD#<id>``/``CARD`` and its audit entries
under the same ``pk``; the request ``REQ#<key>``/``REQ`` naming its latest card and until when
that card holds it (``live_until``: the deadline while pending, forever while running, 0 once
decided); ``SPENT#<digest>`` once a card's ticket has left ``pending``.

Filing is one ``TransactWriteItems``: the request Put (only if absent or no longer live: the
loser reads the winner from ``ALL_OLD``), the card, its ``filed`` entry, its notification. A
commit is one more: the card's conditional move, the request, the spent ticket, the audit
entries, and the effect's writes (:mod:`.docs`).

Pending cards sit in the sparse GSI partition ``PENDING#<ws>#<person>`` keyed by
``<expires_at:012d>#<id>``, so "unexpired" is a key condition; running cards in ``RUNNING`` by
lease; decided cards in ``DONE#<ws>#<person>`` by ``updated_at``. History is the merge, newest
first, of that partition and the lapsed part of the pending one.
"""

from __future__ import annotations

import heapq
import logging
import uuid
from collections.abc import Iterator
from typing import Any

from ...core.card_states import (
    SPENT_MESSAGE,
    CardState,
    Refusal,
    RefusalReason,
    check_move,
    check_step,
    effective_state,
    refusal_for,
    request_held_until,
)
from ..cards import (
    AuditEntry,
    Card,
    CardCommit,
    CardStore,
    amended,
    check_card,
    listed,
    marked_shared,
    request_key,
    stored_lines,
    ticket_digest,
)
from ..docs import check_doc_writes
from ..errors import BadInput, Conflict, GrantUnavailable, Moved, NotFound, Replayed, StoreError, Taken
from ..limits import OverLimit, RequestCounts
from ..outbox import Notification, audience_notification, card_reminder
from ..table import GSI1
from ..webhook_deliveries import card_events
from . import codec
from .client import Cancelled, Table
from .docs import conflict_of, write_ops
from .limits import count_updates
from .signing_keys import key_note_item
from .standing_grants import use_items
from .webhook_deliveries import event_puts
from .webhook_endpoints import has_endpoints

log = logging.getLogger("countersign.store")

# What a transaction's item is cancelled with when its partition was over its throughput
# (DynamoDB's CancellationReasons codes).
THROTTLED = frozenset({"ThrottlingError", "ProvisionedThroughputExceeded"})
LIVE_FOREVER = 2**62  # a running card holds its request until it is settled
AUDIT_SLACK = 30 * 24 * 3600  # an appended entry outlives its card's purge by at most this
NOTIFICATION_RETENTION = 7 * 24 * 3600
MAX_TRANSACTION_ITEMS = 100  # DynamoDB's limit on one TransactWriteItems


class DynamoCards(CardStore):
    def __init__(self, table: Table):
        self.table = table

    # -- filing and reading -----------------------------------------------------------------------

    def file_card(self, card: Card, audit: AuditEntry, *, notify: bool = True, replacing: str | None = None,
                  signing_key: tuple[str, int] | None = None, counts: RequestCounts | None = None) -> Card:
        check_card(card)  # plain JSON, at most 64 KiB as canonical JSON; who filed it
        counts = counts.to_take() if counts is not None else None
        purge = self.table.purge_at(card.expires_at)
        ops = [
            self._claim(card, card.claim_until, card.created_at, purge, replacing, settled_at=card.expires_at),
            {"Put": {"Item": codec.card_item(card, purge), "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"Item": codec.audit_item(audit, self.table.seq.next(), purge),
                     "ConditionExpression": "attribute_not_exists(pk)"}},
        ]
        if notify:
            n = Notification(card.id, card.workspace_id, card.person_id, card.created_at, due_at=card.created_at)
            ops.append({"Put": {"Item": codec.notification_item(n, card.created_at + NOTIFICATION_RETENTION),
                                "ConditionExpression": "attribute_not_exists(pk)"}})
        ops += _audience_notifications(card, card.audience, card.created_at)  # each of them is told it waits
        ops += _beside(card, purge)
        if signing_key is not None:
            ops.append({"Put": {"Item": key_note_item(*signing_key)}})
        reminder = card_reminder(card.id, card.workspace_id, card.person_id, card.created_at, card.lifetime)
        if reminder is not None:  # its lifetime has a reminder: owed with it
            ops.append({"Put": {"Item": codec.notification_item(reminder, card.expires_at + NOTIFICATION_RETENTION),
                                "ConditionExpression": "attribute_not_exists(pk)"}})
        if self._owes_events(card):  # the webhook events it owes, with it
            ops += event_puts(card_events(card.workspace_id, card.id, None, CardState.PENDING, card.created_at,
                                          card.expires_at))
        counted = len(ops)  # the request's counts, last (room for them: :func:`_with_counts`)
        ops += _with_counts(counts, len(ops))
        try:
            included = self._transact(ops, counted, counts)
        except Cancelled as cancelled:
            holder = cancelled.old(0)
            if cancelled.code(0) == "ConditionalCheckFailed" and holder is not None:
                if holder["card_id"] == card.id:  # our own filing, its response lost and retried
                    return _taken(counts, len(ops) > counted and not counts_skipped(counts), card)
                return self.get_card(card.workspace_id, holder["card_id"], card.created_at)
            if cancelled.code(1) == "ConditionalCheckFailed":
                raise Conflict(f"A card with id {card.id!r} already exists.") from None
            if counts is not None and any(cancelled.code(i) == "ConditionalCheckFailed"
                                          for i in range(counted, len(ops))):
                raise OverLimit(counts) from None
            raise StoreError(f"The card could not be filed ({cancelled}); nothing was written.") from None
        return _taken(counts, included, card)

    def _claim(self, card: Card, live_until: int, now: int, purge: int | None,
               replacing: str | None = None, *, settled_at: int, asked_at: int | None = None) -> dict[str, Any]:
        """The request Put that makes ``card`` its latest card, unless a card holds it (live, or
        answered within the answer memory) that is not ``replacing``; with ``asked_at``, also
        unless its card was decided at or after ``asked_at`` (or the item predates ``settled_at``:
        the caller then reads the card and decides). ``settled_at``: when ``card`` stops (or, if it
        lapses, will have stopped) waiting."""
        fields = {"workspace_id": card.workspace_id, "card_id": card.id, "live_until": live_until,
                  "settled_at": settled_at, "expires_at": purge}
        if asked_at is not None:
            condition = "attribute_not_exists(pk) OR (live_until <= :now AND settled_at < :asked)"
            vals: dict[str, Any] = {":now": now, ":asked": asked_at}
        else:
            condition = "attribute_not_exists(pk) OR live_until <= :now OR card_id = :replacing"
            vals = {":now": now, ":replacing": replacing or ""}
        return {"Put": {
            "Item": {**codec.request_key_item(card.request_key), **codec.item(fields)},
            "ConditionExpression": condition,
            "ExpressionAttributeValues": codec.values(vals),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }}

    def _stored_card(self, workspace_id: str, card_id: str) -> Card:
        """The stored card (no expiry applied), read consistently; NotFound across workspaces."""
        found = self.table.get(codec.card_key(card_id))
        if found is None or found["workspace_id"] != workspace_id:
            raise NotFound("card", card_id)
        return codec.card_from(found)

    def get_card(self, workspace_id: str, card_id: str, now: int) -> Card:
        return self._stored_card(workspace_id, card_id).at(now)

    def latest_card(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int) -> Card | None:
        pointer = self.table.get(codec.request_key_item(request_key(workspace_id, person_id, tool, fingerprint)))
        if pointer is None or pointer.get("workspace_id") != workspace_id:
            return None
        try:
            return self.get_card(workspace_id, pointer["card_id"], now)
        except NotFound:
            return None

    def request_holder(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int,
                       counts: RequestCounts | None = None) -> Card | None:
        key = codec.request_key_item(request_key(workspace_id, person_id, tool, fingerprint))
        counts = counts.to_take() if counts is not None else None
        if counts is not None:
            # One request: the counters, on condition that the claim holds nothing (absent, or released).
            unheld = {"ConditionCheck": {
                "Key": key, "ConditionExpression": "attribute_not_exists(pk) OR live_until <= :now",
                "ExpressionAttributeValues": codec.values({":now": now}),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }}
            updates = count_updates(counts)
            try:
                self.table.transact([unheld, *updates])
                counts.taken = True
                return None
            except Cancelled as cancelled:
                if cancelled.code(0) == "ConditionalCheckFailed":  # a card holds it: that card, nothing counted
                    return self._holder(workspace_id, cancelled.old(0), now)
                if any(cancelled.code(i + 1) == "ConditionalCheckFailed" for i in range(len(updates))):
                    raise OverLimit(counts) from None
                codes = sorted({str(cancelled.code(i)) for i in range(len(updates) + 1)} - {"None"})
                log.warning("a request's counters could not be taken with its claim (%s): the claim is read, and "
                            "the request counted after its work", ", ".join(codes))
            except self.table.errors.ClientError as exc:
                log.warning("a request's counters could not be taken with its claim (%s): the claim is read, and "
                            "the request counted after its work", exc.response.get("Error", {}).get("Code"))
        return self._holder(workspace_id, self.table.get(key), now)

    def _holder(self, workspace_id: str, claim: dict[str, Any] | None, now: int) -> Card | None:
        """The card ``claim`` (a request's item, as read) holds at ``now``, if any (read)."""
        if claim is None or claim.get("workspace_id") != workspace_id:
            return None
        if "live_until" in claim and int(claim["live_until"]) <= now:
            return None  # released: no card holds the request
        try:
            return self.get_card(workspace_id, claim["card_id"], now)
        except NotFound:
            return None

    # -- listings ---------------------------------------------------------------------------------

    def _index(self, partition: str, op: str, bound: str, forward: bool, page: int) -> Iterator[dict[str, Any]]:
        """Items of one gsi1 partition with ``gsi1sk <op> bound``, in key order, ``page`` at a time."""
        return self.table.query(
            IndexName=GSI1,
            KeyConditionExpression=f"gsi1pk = :p AND gsi1sk {op} :b",
            ExpressionAttributeValues=codec.values({":p": partition, ":b": bound}),
            ScanIndexForward=forward,
            PaginationConfig={"PageSize": page},
        )

    def _page(self, found: Iterator[dict[str, Any]], limit: int, now: int,
              others: bool = True) -> tuple[list[Card], str | None]:
        """The first ``limit`` items as cards, and a cursor if one more exists. A shared card, and
        the item that lists another's card for one of its audience, are read whole (the index
        projects no audience, quorum or votes); ``others``: list those audience items (the waiting
        list; a lapsed one is no history of this person's)."""
        taken: list[dict[str, Any]] = []
        for v in found:
            if not codec.is_card_item(v) and not (others and v.get("sk", "").startswith(codec.AUDIENCE_PREFIX)):
                continue
            taken.append(v)
            if len(taken) > limit:
                break
        cursor = codec.encode_cursor(taken[limit - 1]["gsi1sk"]) if len(taken) > limit else None
        return [self._listed(v).at(now) for v in taken[:limit]], cursor

    def _listed(self, v: dict[str, Any]) -> Card:
        if codec.is_card_item(v) and not marked_shared(v.get("lines")):
            return codec.listed_card_from(v)
        whole = self.table.get(codec.card_key(v["id"]))
        return listed(codec.card_from(whole)) if whole is not None else codec.listed_card_from(v)

    def list_pending_cards(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        _check_limit(limit)
        lower = codec.after_second(now)  # expires_at > now, in the key condition
        if cursor is not None:
            lower = max(lower, codec.decode_cursor(cursor))
        found = self._index(codec.pending_partition(workspace_id, person_id), ">", lower, True, limit + 1)
        return self._page(found, limit, now)

    def escalations_due(self, now: int, limit: int = 50) -> list[Card]:
        found = self._index(codec.ESCALATE_PARTITION, "<", codec.after_second(now), True, limit)
        cards = []
        for v in found:
            whole = self.table.get(codec.card_key(v["id"]))
            if whole is not None:
                card = codec.card_from(whole).at(now)
                if card.state is CardState.PENDING and card.escalate_at is not None and card.escalate_at <= now:
                    cards.append(card)
            if len(cards) >= limit:
                break
        return cards

    def amend_card(self, card: Card, now: int, audit: tuple[AuditEntry, ...], *,
                   votes: tuple[dict[str, Any], ...] | None = None, audience: tuple[str, ...] | None = None,
                   escalation: dict[str, Any] | None = None, escalate_at: int | None = None,
                   notify: tuple[str, ...] = ()) -> Card:
        written = amended(card, votes, audience, escalation, escalate_at)
        purge = self.table.purge_at(card.expires_at)
        sets: dict[str, Any] = {"version": written.version, "lines": stored_lines(written)}
        removes: list[str] = []
        if votes is not None:
            sets["votes"] = codec.J(list(written.votes))
        if audience is not None:
            sets["audience"] = list(written.audience)
        if escalation is not None:
            sets["escalation"] = codec.J(written.escalation)
            if written.escalate_at is None:
                removes.append("escalate_at")
            else:
                sets["escalate_at"] = written.escalate_at
        names = {f"#a{i}": k for i, k in enumerate(sets)}
        vals = {f":a{i}": v for i, v in enumerate(sets.values())}
        names["#s"] = "status"
        vals.update({":v": card.version, ":ws": card.workspace_id, ":pending": CardState.PENDING.value, ":now": now})
        expression = "SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(sets)))
        if removes:
            expression += " REMOVE " + ", ".join(removes)
        ops: list[dict[str, Any]] = [{"Update": {
            "Key": codec.card_key(card.id), "UpdateExpression": expression,
            "ConditionExpression": "version = :v AND workspace_id = :ws AND #s = :pending AND card_expires_at > :now",
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": codec.values(vals),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }}]
        ops += [{"Put": {"Item": codec.audience_item(written, p, purge)}}
                for p in written.audience if p not in card.audience]
        if escalation is not None:
            if written.escalate_at is None:
                ops.append({"Delete": {"Key": codec.escalate_key(card.id)}})
            else:
                ops.append({"Put": {"Item": codec.escalate_item(written, purge)}})
        ops += _audience_notifications(written, notify, now)
        ops += [{"Put": {"Item": codec.audit_item(entry, self.table.seq.next(), purge),
                         "ConditionExpression": "attribute_not_exists(pk)"}} for entry in audit]
        try:
            self.table.transact(ops)
        except Cancelled as cancelled:
            old = cancelled.old(0)
            if cancelled.code(0) != "ConditionalCheckFailed":
                raise StoreError(f"The card could not be changed ({cancelled}); nothing was written.") from None
            if old is None or old.get("workspace_id") != card.workspace_id:
                raise NotFound("card", card.id) from None
            state = effective_state(CardState(old["status"]), old["card_expires_at"], now)
            if state is not CardState.PENDING:
                raise refusal_for(state, CardState.PENDING) from None
            raise Moved() from None
        return written

    def count_pending_cards(self, workspace_id: str, person_id: str, now: int) -> int:
        return self.table.count(
            IndexName=GSI1,
            KeyConditionExpression="gsi1pk = :p AND gsi1sk > :b",
            ExpressionAttributeValues=codec.values(
                {":p": codec.pending_partition(workspace_id, person_id), ":b": codec.after_second(now)}),
        )

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
        merged = heapq.merge(done, lapsed, key=lambda v: v["gsi1sk"], reverse=True)
        return self._page(merged, limit, now, others=False)

    def running_cards(self, now: int, limit: int = 50) -> list[Card]:
        """From the RUNNING partition (which projects no run or arguments), each card read whole and
        consistently: one that moved on meanwhile is left out."""
        found = self._index(codec.RUNNING_PARTITION, "<", codec.after_second(now), True, limit)
        cards = []
        for v in found:
            whole = self.table.get(codec.card_key(v["id"]))
            if whole is not None and whole.get("status") == CardState.RUNNING.value and whole.get("lease_until",
                                                                                                   now) <= now:
                cards.append(codec.card_from(whole))
            if len(cards) >= limit:
                break
        return cards

    # -- the commit -------------------------------------------------------------------------------

    def commit_card(self, commit: CardCommit) -> Card:
        card, target, now = commit.card, CardState(commit.target), commit.now
        writes = list(commit.writes)
        check_doc_writes(writes)
        if commit.new:
            check_card(card)
        if commit.step:
            source = check_step(card.state)
        elif commit.new or (card.state is CardState.EXPIRED and target is CardState.EXPIRED):
            # A reader sees a lapsed pending card as expired; marking it so starts from pending
            # (and the condition below checks that it still is).
            source = check_move(CardState.PENDING, target, card.expires_at, now)
        else:
            source = check_move(card.state, target, card.expires_at, now)
        written = commit.written()
        txn_id = str(uuid.uuid4())
        purge = self.table.purge_at(card.expires_at)
        live_until = request_held_until(target, now, commit.refusal is not None, LIVE_FOREVER)
        ops: dict[str, dict[str, Any]] = {}  # by role, in transaction order
        if commit.new:
            ops["card"] = {"Put": {"Item": codec.card_item(written, purge, txn_id),
                                   "ConditionExpression": "attribute_not_exists(pk)",
                                   "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}
            ops["request"] = self._claim(card, live_until, now, purge, settled_at=now, asked_at=commit.asked_at)
        else:
            ops["card"] = self._move(card, written, source, txn_id)
            if target is not CardState.EXPIRED:
                ops["request"] = self._release(card, live_until, now, purge)
        if source is CardState.PENDING:
            fields = {"card_id": card.id, "at": now, "expires_at": purge}
            ops["spent"] = {"Put": {"Item": {**codec.spent_key(ticket_digest(card.ticket)), **codec.item(fields)},
                                    "ConditionExpression": "attribute_not_exists(pk)"}}
        if commit.nonce is not None:
            nonce, until = commit.nonce
            ops["nonce"] = {"Put": {
                "Item": {**codec.single_key("NONCE", nonce), **codec.item({"expires_at": until})},
                "ConditionExpression": "attribute_not_exists(pk) OR expires_at <= :now",
                "ExpressionAttributeValues": codec.values({":now": now}),
            }}
        if commit.grant_use is not None:
            ops["grant"], ops["grant_use"] = use_items(commit.grant_use, card.id)
        if source is CardState.PENDING and not commit.new:  # it waits on no one any more
            for i, member in enumerate(card.audience):
                ops[f"audience{i}"] = {"Delete": {"Key": codec.audience_key(card.id, member)}}
            if card.escalate_at is not None:
                ops["escalate"] = {"Delete": {"Key": codec.escalate_key(card.id)}}
        counts = commit.counts.to_take() if commit.counts is not None else None
        if commit.successor is not None:  # an edit: the new card, filed in this transaction
            successor = commit.successor
            assert commit.successor_audit is not None
            check_card(successor)
            later = self.table.purge_at(successor.expires_at)
            ops["successor_request"] = self._claim(successor, successor.claim_until, now, later,
                                                   settled_at=successor.expires_at)
            ops["successor"] = {"Put": {"Item": codec.card_item(successor, later),
                                        "ConditionExpression": "attribute_not_exists(pk)"}}
            for i, op in enumerate(_beside(successor, later)):
                ops[f"successor_beside{i}"] = op
            ops["successor_filed"] = {"Put": {
                "Item": codec.audit_item(commit.successor_audit, self.table.seq.next(), later),
                "ConditionExpression": "attribute_not_exists(pk)"}}
            if commit.successor_key is not None:
                ops["successor_key"] = {"Put": {"Item": key_note_item(*commit.successor_key)}}
            # each of its audience is told it waits, as when a card is filed (an edited quorum card is a fresh vote)
            for i, op in enumerate(_audience_notifications(successor, successor.audience, now)):
                ops[f"successor_told{i}"] = op
            reminder = card_reminder(successor.id, successor.workspace_id, successor.person_id,
                                     successor.created_at, successor.lifetime)
            if reminder is not None:  # its lifetime has a reminder: owed with it, as a filed card's is
                ops["successor_reminder"] = {"Put": {
                    "Item": codec.notification_item(reminder, successor.expires_at + NOTIFICATION_RETENTION),
                    "ConditionExpression": "attribute_not_exists(pk)"}}
            if self._owes_events(successor):  # card.filed, and card.lapsed at its deadline, as for a filed card
                for i, op in enumerate(event_puts(card_events(successor.workspace_id, successor.id, None,
                                                              CardState.PENDING, successor.created_at,
                                                              successor.expires_at))):
                    ops[f"successor_event{i}"] = op
        items = list(ops.values())
        roles = list(ops)
        for entry in commit.audit:
            items.append({"Put": {"Item": codec.audit_item(entry, self.table.seq.next(), purge),
                                  "ConditionExpression": "attribute_not_exists(pk)"}})
        first_write = len(items)
        items.extend(write_ops(card.workspace_id, writes))
        write_items = len(items) - first_write
        moved = card_events(card.workspace_id, card.id, source, target, now, card.expires_at)
        if moved and self._owes_events(card):  # the webhook events it owes, with it
            items.extend(event_puts(moved))
        counted = len(items)  # the request's counts, last (if there is room: :func:`_with_counts`)
        items.extend(_with_counts(counts, counted))
        try:
            included = self._transact(items, counted, counts, token=txn_id)
        except Cancelled as cancelled:
            failed = {role: cancelled.code(i) == "ConditionalCheckFailed" for i, role in enumerate(roles)}
            failed["counts"] = any(cancelled.code(i) == "ConditionalCheckFailed" for i in range(counted, len(items)))
            mine = cancelled.old(0)
            if failed["card"] and mine is not None and mine.get("txn_id") == txn_id:
                # our own commit: its response was lost
                return _taken(counts, len(items) > counted and not counts_skipped(counts), written)
            raise self._why(card, commit, cancelled, failed, first_write, write_items, roles) from None
        if target is CardState.EXPIRED and not commit.new:
            self._settled(card, now)
        return _taken(counts, included, written)

    def _transact(self, items: list[dict[str, Any]], counted: int, counts: RequestCounts | None,
                  token: str | None = None) -> bool:
        """Run a card's transaction, the request's counters its items from ``counted`` on; whether
        they went in with it. Cancelled only because a counter was throttled (none of the card's
        own items failed, no counter was at its limit), it runs once more without them, under a
        token of its own: a counter never costs a card its write. The request is then not counted
        (``counts.skipped``): a warning here, and the request limits' metric."""
        try:
            self.table.transact(items, token=token)
            return len(items) > counted
        except Cancelled as cancelled:
            if counts is None or not _only_counters_throttled(cancelled, counted, len(items)):
                raise
            codes = sorted({str(cancelled.code(i)) for i in range(counted, len(items))} - {"None"})
        log.warning("a request counter was throttled (%s) in a card's transaction: the card is written once more "
                    "without the counters, and the request is not counted", ", ".join(codes))
        counts.skipped = True  # (before: a lost response to the retry is still a write without them)
        self.table.transact(items[:counted])
        return False

    def _owes_events(self, card: Card) -> bool:
        """Whether ``card``'s moves owe webhook events: as it was filed (kept on its item), else
        (None: filed before this was kept) whether its workspace has an endpoint now (one read)."""
        return card.webhooks if card.webhooks is not None else has_endpoints(self.table, card.workspace_id)

    def _settled(self, card: Card, now: int) -> None:
        """A lapsed card marked expired was decided now (:meth:`Card.decided_at`): its request, if
        it still names the card, says so (no transaction needed: the request stays released)."""
        self.table.update(
            codec.request_key_item(card.request_key),
            UpdateExpression="SET settled_at = :now",
            ConditionExpression="card_id = :card AND live_until <= :now",
            ExpressionAttributeValues=codec.values({":now": now, ":card": card.id}),
        )

    def _move(self, card: Card, written: Card, source: CardState, txn_id: str) -> dict[str, Any]:
        """The card's conditional Update: on the version read (and, out of pending, its deadline)."""
        gsi1pk, gsi1sk = codec.card_index(written)
        sets = {"status": written.state.value, "version": written.version, "updated_at": written.updated_at,
                "txn_id": txn_id, "gsi1pk": gsi1pk, "gsi1sk": gsi1sk}
        for name in ("decline_reason", "refusal", "channel", "lease_until"):
            if getattr(written, name) is not None:
                sets[name] = getattr(written, name)
        for name in ("result", "run", "passkey", "edited"):
            if getattr(written, name) is not None:
                sets[name] = codec.J(getattr(written, name))
        if written.votes:
            sets["votes"] = codec.J(list(written.votes))
        removes = ["lease_until"] if written.lease_until is None else []
        names = {f"#a{i}": k for i, k in enumerate(sets)}
        vals = {f":a{i}": v for i, v in enumerate(sets.values())}
        names["#s"] = "status"
        vals.update({":v": card.version, ":ws": card.workspace_id, ":from": source.value})
        condition = "version = :v AND workspace_id = :ws AND #s = :from"
        if source is CardState.PENDING and written.state is not CardState.EXPIRED:
            condition += " AND card_expires_at > :now"
            vals[":now"] = written.updated_at
        expression = "SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(sets)))
        if removes:
            expression += " REMOVE " + ", ".join(removes)
        return {"Update": {
            "Key": codec.card_key(card.id), "UpdateExpression": expression, "ConditionExpression": condition,
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": codec.values(vals),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }}

    def _release(self, card: Card, live_until: int, now: int, purge: int | None) -> dict[str, Any]:
        """The request follows its card: held while running, released once decided (now)."""
        fields = {":card": card.id, ":ws": card.workspace_id, ":live": live_until, ":now": now}
        expression = "SET card_id = :card, workspace_id = :ws, live_until = :live, settled_at = :now"
        if purge is not None:
            fields[":purge"] = purge
            expression += ", expires_at = :purge"
        return {"Update": {
            "Key": codec.request_key_item(card.request_key),
            "UpdateExpression": expression,
            "ConditionExpression": "attribute_not_exists(pk) OR card_id = :card",
            "ExpressionAttributeValues": codec.values(fields),
        }}

    def _why(self, card: Card, commit: CardCommit, cancelled: Cancelled, failed: dict[str, bool],
             first_write: int, write_items: int, roles: list[str]) -> Exception:
        """The error a cancelled commit stands for."""
        now = commit.now
        if failed.get("nonce"):
            return Replayed()
        if failed.get("successor_request") and not failed.get("card"):  # a card holds the edited request
            holder = cancelled.old(roles.index("successor_request"))
            if holder is not None:
                return Taken(self.get_card(card.workspace_id, holder["card_id"], now))
        if failed.get("request") and commit.new:  # a live card holds the request: it is the answer
            holder = cancelled.old(1)
            if holder is not None:
                return Taken(self.get_card(card.workspace_id, holder["card_id"], now))
        if failed.get("grant"):
            return GrantUnavailable()
        if failed.get("card") and not commit.new:
            old = cancelled.old(0)
            if old is None or old.get("workspace_id") != card.workspace_id:
                return NotFound("card", card.id)
            lost_to = codec.card_from(old)
            return refusal_for(effective_state(lost_to.state, lost_to.expires_at, now), commit.target)
        if failed.get("request"):  # the request belongs to a newer card: this one lapsed
            return refusal_for(CardState.EXPIRED, commit.target)
        if failed.get("spent"):
            return Refusal(RefusalReason.ALREADY_ANSWERED, SPENT_MESSAGE)
        if failed.get("counts") and commit.counts is not None:
            return OverLimit(commit.counts)
        if any(cancelled.code(first_write + i) == "ConditionalCheckFailed" for i in range(write_items)):
            return conflict_of(card.workspace_id, list(commit.writes), cancelled, first_write)
        return StoreError(f"The card could not be committed ({cancelled}); nothing was written.")

    # -- audit ------------------------------------------------------------------------------------

    def append_audit(self, entry: AuditEntry) -> None:
        purge = self.table.purge_at(entry.at + AUDIT_SLACK)
        self.table.client.put_item(
            TableName=self.table.name, Item=codec.audit_item(entry, self.table.seq.next(), purge)
        )

    def audit_trail(self, workspace_id: str, card_id: str) -> list[AuditEntry]:
        found = list(self.table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=codec.values({":pk": f"CARD#{card_id}"}),
            ConsistentRead=True,
        ))
        card = next((v for v in found if v["sk"] == "CARD"), None)
        if card is None or card["workspace_id"] != workspace_id:
            raise NotFound("card", card_id)
        return [codec.audit_from(v) for v in found if v["sk"].startswith("AUDIT#")]



def _beside(card: Card, purge: int | None) -> list[dict[str, Any]]:
    """The items a filed card keeps beside it: one per person of its audience, its escalation's."""
    ops: list[dict[str, Any]] = [{"Put": {"Item": codec.audience_item(card, p, purge)}} for p in card.audience]
    if card.escalate_at is not None:
        ops.append({"Put": {"Item": codec.escalate_item(card, purge)}})
    return ops


def _audience_notifications(card: Card, members: tuple[str, ...], now: int) -> list[dict[str, Any]]:
    """The digest checks that tell ``members`` that ``card`` waits on them too (one per person
    per card: written again, it is the same check)."""
    return [{"Put": {"Item": codec.notification_item(n, now + NOTIFICATION_RETENTION)}}
            for n in (audience_notification(m, card, now) for m in members)]
def _with_counts(counts: RequestCounts | None, items: int) -> list[dict[str, Any]]:
    """The request's counts as items to add to a transaction of ``items`` items, if any are to take
    and they fit in DynamoDB's 100; else none (the request is then counted alone, after its work)."""
    if counts is None:
        return []
    updates = count_updates(counts)
    return updates if items + len(updates) <= MAX_TRANSACTION_ITEMS else []


def _only_counters_throttled(cancelled: Cancelled, counted: int, total: int) -> bool:
    """Whether a card's transaction was cancelled by a throttled counter item (items ``counted``
    on) and by nothing else: every other item's reason ``None``, no counter at its limit."""
    if counted >= total:
        return False
    mine = {cancelled.code(i) for i in range(counted)}
    theirs = {cancelled.code(i) for i in range(counted, total)}
    return mine <= {"None", None} and bool(theirs & THROTTLED) and theirs <= THROTTLED | {"None", None}


def counts_skipped(counts: RequestCounts | None) -> bool:
    return counts is not None and counts.skipped


def _taken(counts: RequestCounts | None, included: bool, card: Card) -> Card:
    """``card``, once the transaction that included the request's counts (if it did) went through."""
    if counts is not None and included:
        counts.taken = True
    return card


def _check_limit(limit: int) -> None:
    if type(limit) is not int or limit < 1:
        raise BadInput("limit", "must be a positive whole number.")
