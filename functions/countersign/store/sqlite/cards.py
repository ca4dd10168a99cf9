"""Cards on SQLite: filing (one live card per request), reading, listings, and the commit.

A card's request (``requests`` row, keyed by :func:`~countersign.store.cards.request_key`)
names the latest card filed for it and until when that card holds it (``live_until``: its
deadline while pending, forever while running, 0 once decided). Filing claims the row in the same
``BEGIN IMMEDIATE`` transaction as the card, so two identical filings — threads or processes —
can never both file.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
from typing import Any, cast

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
from ...core.crash_points import crash_point
from ..cards import AuditEntry, Card, CardCommit, CardStore, amended, check_card, listed, request_key, ticket_digest
from ..docs import check_doc_writes
from ..errors import BadInput, Moved, NotFound, Replayed, StoreUnavailable, Taken
from ..limits import RequestCounts
from ..outbox import Notification, audience_notification, card_reminder
from ..webhook_deliveries import card_events
from . import schema
from .database import Database, unique
from .docs import apply_writes
from .limits import take_counts
from .outbox import insert_notification
from .signing_keys import note_key
from .standing_grants import consume_use
from .webhook_deliveries import insert_events
from .webhook_endpoints import has_endpoints

# History is ordered by when a card stopped being pending: a card that lapsed without a
# transition has no updated_at for that moment, so its expiry stands in.
HISTORY_KEY = "CASE WHEN state = 'pending' THEN expires_at ELSE updated_at END"
# The card a request's claim holds at a moment (key, workspace, now): its latest, while the claim is live.
HOLDER = ("SELECT cards.* FROM requests JOIN cards ON cards.id = requests.card_id WHERE requests.key = ?"
          " AND cards.workspace_id = ? AND requests.live_until > ?")

log = logging.getLogger("countersign.store")


class SQLiteCards(CardStore):
    def __init__(self, db: Database):
        self.db = db

    # -- filing and reading -----------------------------------------------------------------------

    def file_card(self, card: Card, audit: AuditEntry, *, notify: bool = True, replacing: str | None = None,
                  signing_key: tuple[str, int] | None = None, counts: RequestCounts | None = None) -> Card:
        check_card(card)
        counts = counts.to_take() if counts is not None else None
        with self.db.write() as db:
            holder = _claim_request(db, card, card.claim_until, card.created_at, replacing)
            if holder is not None:
                return holder.at(card.created_at)
            if counts is not None:
                take_counts(db, counts)
            if signing_key is not None:
                note_key(db, *signing_key)
            _insert_card(db, card)
            _insert_audit(db, audit)
            if notify:
                insert_notification(db, Notification(card.id, card.workspace_id, card.person_id, card.created_at,
                                                     due_at=card.created_at))
            for member in card.audience:  # each person who may also answer it is told it waits
                insert_notification(db, audience_notification(member, card, card.created_at), unless_present=True)
            if _owes_events(db, card):
                insert_events(db, card_events(card.workspace_id, card.id, None, CardState.PENDING, card.created_at,
                                              card.expires_at))
            reminder = card_reminder(card.id, card.workspace_id, card.person_id, card.created_at, card.lifetime)
            if reminder is not None:  # its lifetime has a reminder: owed with it
                insert_notification(db, reminder)
        if counts is not None:
            counts.taken = True
        return card

    def _stored_card(self, workspace_id: str, card_id: str, db: sqlite3.Connection | None = None) -> Card:
        """The card as stored (no expiry applied)."""
        sql, args = "SELECT * FROM cards WHERE id = ? AND workspace_id = ?", (card_id, workspace_id)
        row = (db.execute(sql, args).fetchone() if db is not None else self.db.one(sql, *args))
        if row is None:
            raise NotFound("card", card_id)
        return schema.card(row)

    def get_card(self, workspace_id: str, card_id: str, now: int) -> Card:
        return self._stored_card(workspace_id, card_id).at(now)

    def latest_card(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int) -> Card | None:
        row = self.db.one(
            "SELECT cards.* FROM requests JOIN cards ON cards.id = requests.card_id WHERE requests.key = ?"
            " AND cards.workspace_id = ?",
            request_key(workspace_id, person_id, tool, fingerprint), workspace_id,
        )
        return schema.card(row).at(now) if row else None

    def request_holder(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int,
                       counts: RequestCounts | None = None) -> Card | None:
        args = (request_key(workspace_id, person_id, tool, fingerprint), workspace_id, now)
        counts = counts.to_take() if counts is not None else None
        if counts is not None:
            try:
                with self.db.write() as db:  # one transaction: the claim read, the counts taken if it holds nothing
                    row = db.execute(HOLDER, args).fetchone()
                    if row is None:
                        take_counts(db, counts)  # OverLimit: rolled back, nothing counted
            except StoreUnavailable:
                log.warning("the request's counts could not be taken with its claim; it is counted after its work")
            else:
                if row is None:
                    counts.taken = True
                return schema.card(row).at(now) if row else None
        row = self.db.one(HOLDER, *args)
        return schema.card(row).at(now) if row else None

    def list_pending_cards(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        # Oldest first by deadline (as DynamoDB's index orders them): the partial index cards_waiting
        # seeks past every lapsed card, however many there are. The cards others' requests let this
        # person answer too (card_audience, in deadline order by card_audience_waiting) merge in.
        own, _ = self._page(
            "state = 'pending' AND expires_at > ?", (now,), "expires_at", "ASC",
            workspace_id, person_id, now, limit, cursor, whole=True,
        )
        after, after_args = "", cast(tuple[int, str] | tuple[()], ())
        if cursor is not None:
            after, after_args = " AND (a.waiting_until, a.card_id) > (?, ?)", schema.decode_cursor(cursor)
        theirs = self.db.all(
            "SELECT cards.*, a.waiting_until AS sort_key FROM card_audience a JOIN cards ON cards.id = a.card_id"
            f" WHERE a.workspace_id = ? AND a.person_id = ? AND a.waiting_until > ?{after}"
            " ORDER BY a.waiting_until, a.card_id LIMIT ?",
            workspace_id, person_id, now, *after_args, limit + 1,
        )
        found = sorted([*own, *theirs], key=lambda r: (r["sort_key"], r["id"]))[:limit + 1]
        more = len(found) > limit
        found = found[:limit]
        next_cursor = schema.encode_cursor(found[-1]["sort_key"], found[-1]["id"]) if more else None
        return [listed(schema.card(r).at(now)) for r in found], next_cursor

    def count_pending_cards(self, workspace_id: str, person_id: str, now: int) -> int:
        row = self.db.all(
            "SELECT COUNT(*) AS n FROM cards WHERE workspace_id = ? AND person_id = ? AND state = 'pending'"
            " AND expires_at > ?", workspace_id, person_id, now,
        )
        theirs = self.db.all(
            "SELECT COUNT(*) AS n FROM card_audience WHERE workspace_id = ? AND person_id = ? AND waiting_until > ?",
            workspace_id, person_id, now,
        )
        return int(row[0]["n"]) + int(theirs[0]["n"])

    def list_card_history(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        # cards_history serves this in order (its expression is HISTORY_KEY); the live pending
        # cards it also holds have the latest keys and are skipped once.
        return self._page(
            "state != 'running' AND NOT (state = 'pending' AND expires_at > ?)", (now,),
            HISTORY_KEY, "DESC", workspace_id, person_id, now, limit, cursor,
        )

    def _page(
        self, where: str, args: tuple, key: str, direction: str,
        workspace_id: str, person_id: str, now: int, limit: int, cursor: str | None, whole: bool = False,
    ) -> tuple[Any, str | None]:
        """One keyset page of a person's cards ordered by ``(key, id)``; a cursor only if more follow.
        ``whole``: the ``limit + 1`` rows as read (with ``sort_key``), for the caller to merge."""
        if type(limit) is not int or limit < 1:
            raise BadInput("limit", "must be a positive whole number.")
        after = ""
        after_args: tuple[int, str] | tuple[()] = ()
        if cursor is not None:
            position = schema.decode_cursor(cursor)
            beyond = ">" if direction == "ASC" else "<"
            after, after_args = f" AND ({key}, id) {beyond} (?, ?)", position
        found = self.db.all(
            f"SELECT *, {key} AS sort_key FROM cards WHERE workspace_id = ? AND person_id = ? AND {where}{after}"
            f" ORDER BY sort_key {direction}, id {direction} LIMIT ?",
            workspace_id, person_id, *args, *after_args, limit + 1,
        )
        if whole:
            return found, None
        more = len(found) > limit
        found = found[:limit]
        next_cursor = schema.encode_cursor(found[-1]["sort_key"], found[-1]["id"]) if more else None
        return [listed(schema.card(r).at(now)) for r in found], next_cursor

    def running_cards(self, now: int, limit: int = 50) -> list[Card]:
        found = self.db.all(
            "SELECT * FROM cards WHERE state = 'running' AND lease_until <= ? ORDER BY lease_until, id LIMIT ?",
            now,
            limit,
        )
        return [schema.card(r) for r in found]

    def escalations_due(self, now: int, limit: int = 50) -> list[Card]:
        found = self.db.all(
            "SELECT * FROM cards WHERE state = 'pending' AND escalate_at IS NOT NULL AND escalate_at <= ?"
            " ORDER BY escalate_at, id LIMIT ?", now, limit,
        )
        return [c for c in (schema.card(r).at(now) for r in found) if c.state is CardState.PENDING]

    def amend_card(self, card: Card, now: int, audit: tuple[AuditEntry, ...], *,
                   votes: tuple[dict[str, Any], ...] | None = None, audience: tuple[str, ...] | None = None,
                   escalation: dict[str, Any] | None = None, escalate_at: int | None = None,
                   notify: tuple[str, ...] = ()) -> Card:
        written = amended(card, votes, audience, escalation, escalate_at)
        with self.db.write() as db:
            stored = self._stored_card(card.workspace_id, card.id, db)
            state = effective_state(stored.state, stored.expires_at, now)
            if state is not CardState.PENDING:
                raise refusal_for(state, CardState.PENDING)
            if stored.version != card.version:
                raise Moved()
            row = schema.card_row(written)
            changed = {k: row[k] for k in ("version", "votes", "audience", "escalation", "escalate_at")}
            db.execute(f"UPDATE cards SET {', '.join(f'{k} = ?' for k in changed)} WHERE id = ? AND version = ?",
                       (*changed.values(), card.id, card.version))
            _insert_audience(db, written, [p for p in written.audience if p not in card.audience])
            for entry in audit:
                _insert_audit(db, entry)
            for member in notify:
                insert_notification(db, audience_notification(member, written, now), unless_present=True)
        return written

    # -- the commit -------------------------------------------------------------------------------

    def commit_card(self, commit: CardCommit) -> Card:
        card, target, now = commit.card, CardState(commit.target), commit.now
        writes = list(commit.writes)
        check_doc_writes(writes)
        counts = commit.counts.to_take() if commit.counts is not None else None
        with self.db.write() as db:
            if commit.nonce is not None and not _spend_nonce(db, *commit.nonce, now):
                raise Replayed()
            if commit.new:
                check_card(card)
                source = check_move(CardState.PENDING, target, card.expires_at, now)
                holder = _claim_request(db, card, schema.LIVE_FOREVER if target is CardState.RUNNING else 0, now,
                                        asked_at=commit.asked_at)
                if holder is not None:
                    raise Taken(holder.at(now))
            else:
                stored = self._stored_card(card.workspace_id, card.id, db)
                if stored.version != card.version:  # it moved since the caller read it: report where to
                    raise refusal_for(effective_state(stored.state, stored.expires_at, now), target)
                source = (
                    check_step(stored.state)
                    if commit.step
                    else check_move(stored.state, target, stored.expires_at, now)
                )
            if source is CardState.PENDING:
                _spend(db, card, now)
            if commit.grant_use is not None:
                consume_use(db, commit.grant_use, card.id)
            if counts is not None:
                take_counts(db, counts)
            apply_writes(db, card.workspace_id, writes)
            written = commit.written()
            if commit.new:
                _insert_card(db, written)
            else:
                _update_card(db, written)
            for entry in commit.audit:
                _insert_audit(db, entry)
            if commit.successor is not None:
                _file_successor(db, commit, now)
            live_until = request_held_until(target, now, commit.refusal is not None, schema.LIVE_FOREVER)
            if target is not CardState.EXPIRED:
                db.execute(
                    "UPDATE requests SET live_until = ? WHERE key = ? AND card_id = ?",
                    (live_until, card.request_key, card.id),
                )
            if card.audience and source is CardState.PENDING:  # it waits on no one any more
                db.execute("UPDATE card_audience SET waiting_until = 0 WHERE card_id = ?", (card.id,))
            if _owes_events(db, card):
                insert_events(db, card_events(card.workspace_id, card.id, source, target, now, card.expires_at))
            crash_point("mid_commit")
        if counts is not None:
            counts.taken = True
        return written

    # -- audit ------------------------------------------------------------------------------------

    def append_audit(self, entry: AuditEntry) -> None:
        with self.db.write() as db:
            _insert_audit(db, entry)

    def audit_trail(self, workspace_id: str, card_id: str) -> list[AuditEntry]:
        self._stored_card(workspace_id, card_id)
        found = self.db.all(
            "SELECT * FROM audit WHERE workspace_id = ? AND card_id = ? ORDER BY at, seq", workspace_id, card_id
        )
        return [schema.audit_entry(r) for r in found]



def _owes_events(db: sqlite3.Connection, card: Card) -> bool:
    """Whether ``card``'s moves owe webhook events: as it was filed, else (None) whether its
    workspace has an endpoint now, inside the transaction."""
    return card.webhooks if card.webhooks is not None else has_endpoints(db, card.workspace_id)


def _file_successor(db: sqlite3.Connection, commit: CardCommit, now: int) -> None:
    """An edit's new pending card, in the edited card's transaction: its request claimed (else
    :class:`Taken` with the card that holds it, and the whole transaction rolls back), the card,
    its ``filed`` entry and the signing key note; no email to its person (they are on the page), but
    each of its audience is told it waits, as when a card is filed (an edited quorum card is a fresh vote),
    and the reminder its lifetime gives it and the webhook events a filed card owes are owed with it."""
    successor = commit.successor
    assert successor is not None and commit.successor_audit is not None
    check_card(successor)
    holder = _claim_request(db, successor, successor.claim_until, now)
    if holder is not None:
        raise Taken(holder.at(now))
    if commit.successor_key is not None:
        note_key(db, *commit.successor_key)
    _insert_card(db, successor)
    _insert_audit(db, commit.successor_audit)
    for member in successor.audience:
        insert_notification(db, audience_notification(member, successor, now), unless_present=True)
    reminder = card_reminder(successor.id, successor.workspace_id, successor.person_id, successor.created_at,
                             successor.lifetime)
    if reminder is not None:
        insert_notification(db, reminder)
    if _owes_events(db, successor):  # card.filed, and card.lapsed due at its deadline, as for a filed card
        insert_events(db, card_events(successor.workspace_id, successor.id, None, CardState.PENDING,
                                      successor.created_at, successor.expires_at))


def _spend_nonce(db: sqlite3.Connection, nonce: str, expires_at: int, now: int) -> bool:
    """As :meth:`SQLiteLimits.use_nonce`, inside the caller's transaction."""
    return db.execute(
        "INSERT INTO nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO UPDATE"
        " SET expires_at = excluded.expires_at WHERE nonces.expires_at <= ?",
        (nonce, expires_at, now),
    ).rowcount == 1


def _holder(db: sqlite3.Connection, card: Card) -> Card | None:
    row = db.execute(
        "SELECT cards.* FROM requests JOIN cards ON cards.id = requests.card_id WHERE requests.key = ?",
        (card.request_key,),
    ).fetchone()
    return schema.card(row) if row else None


def _claim_request(db: sqlite3.Connection, card: Card, live_until: int, now: int,
                   replacing: str | None = None, asked_at: int | None = None) -> Card | None:
    """Make ``card`` its request's latest card; or, if a card holds the request (live, or answered
    within the answer memory) and it is not ``replacing``, that card. ``asked_at``: a card of the
    request decided at or after it holds the request too."""
    if asked_at is not None:
        earlier = _holder(db, card)
        if earlier is not None and earlier.at(now).decided_at() >= asked_at:
            return earlier
    claimed = db.execute(
        "INSERT INTO requests (key, workspace_id, card_id, live_until) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (key) DO UPDATE SET card_id = excluded.card_id, live_until = excluded.live_until"
        " WHERE requests.live_until <= ? OR requests.card_id = ? RETURNING card_id",
        (card.request_key, card.workspace_id, card.id, live_until, now, replacing or ""),
    ).fetchall()
    if claimed:
        return None
    holder = _holder(db, card)
    assert holder is not None  # the claim failed: a card holds the request
    return holder


def _spend(db: sqlite3.Connection, card: Card, now: int) -> None:
    try:
        db.execute(
            "INSERT INTO spent_tickets (ticket_digest, card_id, at) VALUES (?, ?, ?)",
            (ticket_digest(card.ticket), card.id, now),
        )
    except sqlite3.IntegrityError:
        raise Refusal(RefusalReason.ALREADY_ANSWERED, SPENT_MESSAGE) from None


@functools.lru_cache(maxsize=8)
def _insert_statement(table: str, columns: tuple[str, ...]) -> str:
    """``INSERT INTO table (columns) VALUES (?, ...)``, made once per set of columns."""
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def _insert_card(db: sqlite3.Connection, card: Card) -> None:
    row = schema.card_row(card)
    with unique(f"A card with id {card.id!r} already exists."):
        db.execute(_insert_statement("cards", tuple(row)), tuple(row.values()))
    if card.audience:
        _insert_audience(db, card, card.audience)


def _insert_audience(db: sqlite3.Connection, card: Card, members: Any) -> None:
    """``members`` may answer ``card`` too: listed among what waits on them while it is pending."""
    waiting_until = card.expires_at if card.state is CardState.PENDING else 0
    for member in members:
        db.execute("INSERT OR IGNORE INTO card_audience (card_id, workspace_id, person_id, waiting_until)"
                   " VALUES (?, ?, ?, ?)", (card.id, card.workspace_id, member, waiting_until))


def _update_card(db: sqlite3.Connection, card: Card) -> None:
    row = schema.card_row(card)
    changed = {k: row[k] for k in ("state", "updated_at", "version", "result", "decline_reason", "refusal",
                                   "channel", "run", "lease_until", "passkey", "edited", "lifetime", "votes")}
    db.execute(
        f"UPDATE cards SET {', '.join(f'{k} = ?' for k in changed)} WHERE id = ? AND version = ?",
        (*changed.values(), card.id, card.version - 1),
    )


def _insert_audit(db: sqlite3.Connection, entry: AuditEntry) -> None:
    db.execute(_insert_statement("audit", schema.AUDIT_FIELDS), tuple(getattr(entry, k) for k in schema.AUDIT_FIELDS))
