"""The SQLite schema, connection setup, and conversions between rows and records.

JSON columns hold canonical JSON text (:func:`countersign.core.canonical.canonical_json`), so
the bytes stored for a value do not depend on how it was built.
"""

from __future__ import annotations

import base64
import binascii
import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from ...core.canonical import canonical_json
from ...core.card_states import CardState
from ...core.codes import CodeRecord
from ..cards import AuditEntry, Card, lines_and_sections, request_key, stored_lines
from ..connections import Connection
from ..docs import Doc
from ..errors import BadInput
from ..json_records import data_fields, known_fields
from ..outbox import Notification
from ..sessions import Session, SignInToken
from ..workspaces import Person, Workspace, channels_off_from_text, quiet_hours_from_text

BUSY_TIMEOUT_MS = 30_000
LIVE_FOREVER = 2**62  # a running card holds its request until it is settled

SCHEMA_VERSION = 12  # 8: cards.lifetime; 9: cards' audience, quorum, votes, escalation; 10: slack_links.user_name;
# 11: push_subscriptions.signed_in_until; 12: webhook_endpoints.events_exact

SCHEMA = """
CREATE TABLE IF NOT EXISTS workspaces (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, settings TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS persons (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, email TEXT NOT NULL, email_key TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL, name TEXT NOT NULL, agent_requests_email INTEGER NOT NULL, created_at INTEGER NOT NULL,
    quiet_hours TEXT, channels_off TEXT);
CREATE INDEX IF NOT EXISTS persons_by_workspace ON persons (workspace_id, created_at, id);
CREATE TABLE IF NOT EXISTS connections (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, name TEXT NOT NULL,
    token_hash TEXT NOT NULL, created_at INTEGER NOT NULL, revoked_at INTEGER);
CREATE INDEX IF NOT EXISTS connections_by_token ON connections (token_hash);
CREATE INDEX IF NOT EXISTS connections_by_workspace ON connections (workspace_id, created_at, id);
CREATE TABLE IF NOT EXISTS signin_tokens (
    token_hash TEXT PRIMARY KEY, person_id TEXT NOT NULL, workspace_id TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    session_hash TEXT PRIMARY KEY, person_id TEXT NOT NULL, workspace_id TEXT NOT NULL, csrf_token TEXT NOT NULL,
    created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS cards (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, connection_id TEXT NOT NULL,
    tool TEXT NOT NULL, arguments TEXT NOT NULL, subject TEXT NOT NULL, title TEXT NOT NULL, lines TEXT NOT NULL,
    fingerprint TEXT NOT NULL, ticket TEXT NOT NULL, state TEXT NOT NULL, created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, result TEXT, decline_reason TEXT, refusal TEXT,
    channel TEXT, version INTEGER NOT NULL DEFAULT 1, run TEXT, lease_until INTEGER, passkey TEXT, filed_by TEXT,
    edited TEXT, audience TEXT, quorum TEXT, votes TEXT, escalation TEXT, escalate_at INTEGER, lifetime TEXT);
DROP INDEX IF EXISTS cards_pending;
CREATE INDEX IF NOT EXISTS cards_waiting ON cards (workspace_id, person_id, expires_at, id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS cards_history ON cards
    (workspace_id, person_id, (CASE WHEN state = 'pending' THEN expires_at ELSE updated_at END), id)
    WHERE state != 'running';
CREATE INDEX IF NOT EXISTS cards_running ON cards (state, lease_until) WHERE state = 'running';
CREATE INDEX IF NOT EXISTS cards_escalating ON cards (escalate_at, id)
    WHERE state = 'pending' AND escalate_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS card_audience (
    card_id TEXT NOT NULL, workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, waiting_until INTEGER NOT NULL,
    PRIMARY KEY (card_id, person_id));
CREATE INDEX IF NOT EXISTS card_audience_waiting ON card_audience (workspace_id, person_id, waiting_until, card_id);
CREATE TABLE IF NOT EXISTS requests (
    key TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, card_id TEXT NOT NULL, live_until INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS spent_tickets (
    ticket_digest TEXT PRIMARY KEY, card_id TEXT NOT NULL, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS outbox (
    card_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, created_at INTEGER NOT NULL,
    state TEXT NOT NULL, due_at INTEGER NOT NULL, attempts INTEGER NOT NULL, lease_until INTEGER NOT NULL,
    outcome TEXT, done_at INTEGER, listed TEXT);
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (state, due_at) WHERE state != 'done';
CREATE TABLE IF NOT EXISTS signing_keys (key_id TEXT PRIMARY KEY, until INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, card_id TEXT NOT NULL, workspace_id TEXT NOT NULL, at INTEGER NOT NULL,
    event TEXT NOT NULL, actor TEXT NOT NULL, channel TEXT NOT NULL, connection_id TEXT, detail TEXT);
CREATE INDEX IF NOT EXISTS audit_by_card ON audit (workspace_id, card_id, at, seq);
CREATE TABLE IF NOT EXISTS codes (
    code_hash TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, fingerprint TEXT NOT NULL, expires_at INTEGER NOT NULL,
    arguments_digest TEXT NOT NULL DEFAULT '', issued_at INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS nonces (nonce TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS email_slots (person_id TEXT PRIMARY KEY, claimed_at INTEGER NOT NULL, claimer TEXT);
CREATE TABLE IF NOT EXISTS rate_hits (
    bucket TEXT NOT NULL, window_start INTEGER NOT NULL, hits INTEGER NOT NULL, PRIMARY KEY (bucket, window_start));
CREATE TABLE IF NOT EXISTS docs (
    workspace_id TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, version INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, kind, id));
CREATE TABLE IF NOT EXISTS passkeys (
    credential_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, user_handle TEXT NOT NULL,
    public_key TEXT NOT NULL, name TEXT NOT NULL, created_at INTEGER NOT NULL, sign_count INTEGER NOT NULL,
    last_used_at INTEGER, transports TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS passkeys_by_person ON passkeys (workspace_id, person_id, created_at, credential_id);
CREATE TABLE IF NOT EXISTS passkey_challenges (
    challenge_hash TEXT PRIMARY KEY, record TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS suppressions (
    email TEXT PRIMARY KEY, reason TEXT NOT NULL, at INTEGER NOT NULL, detail TEXT);
"""

# Columns added since version 1 (a database made by an earlier release gains them on open).
ADDED_COLUMNS = {
    "cards": (("version", "INTEGER NOT NULL DEFAULT 1"), ("run", "TEXT"), ("lease_until", "INTEGER"),
              ("passkey", "TEXT"), ("filed_by", "TEXT"), ("edited", "TEXT"), ("lifetime", "TEXT"), ("audience", "TEXT"),
              ("quorum", "TEXT"), ("votes", "TEXT"), ("escalation", "TEXT"), ("escalate_at", "INTEGER")),
    "codes": (("issued_at", "INTEGER NOT NULL DEFAULT 0"),),
    "email_slots": (("claimer", "TEXT"),),
    "persons": (("quiet_hours", "TEXT"), ("channels_off", "TEXT")),
    "outbox": (("listed", "TEXT"),),
    "slack_links": (("user_name", "TEXT"),),
    "push_subscriptions": (("signed_in_until", "INTEGER"),),
    "webhook_endpoints": (("events_exact", "INTEGER NOT NULL DEFAULT 0"),),
}


class _Connection(sqlite3.Connection):
    """A plain connection that can be weakly referenced (the store tracks them without keeping them alive)."""


def connect(path: str) -> sqlite3.Connection:
    """A connection in autocommit mode: every write opens its own ``BEGIN IMMEDIATE``.

    ``synchronous = FULL`` (per connection): a commit is on disk before anyone is told it ran,
    so not even a power cut takes back a card that completed.
    """
    db = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False, factory=_Connection
    )
    db.row_factory = sqlite3.Row
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA synchronous = FULL")
    return db


def create_tables(db: sqlite3.Connection, script: str) -> None:
    """Run a role's ``CREATE ... IF NOT EXISTS`` statements, ``;``-separated (safe on every open)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def add_missing_columns(db: sqlite3.Connection, added: Mapping[str, Sequence[tuple[str, str]]]) -> None:
    """Give each existing table of ``added`` the columns it lacks (a table not made yet is left to
    its ``CREATE TABLE``, which has them)."""
    for table, columns in added.items():
        present = {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}
        for name, declaration in columns:
            if present and name not in present:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {declaration}")


def create_schema(db: sqlite3.Connection) -> None:
    """Create the tables, or bring a database of an earlier release up to :data:`SCHEMA_VERSION`."""
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("BEGIN IMMEDIATE")
    try:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version < SCHEMA_VERSION:
            add_missing_columns(db, ADDED_COLUMNS)
        create_tables(db, SCHEMA)
        if version < SCHEMA_VERSION:
            _adopt_latest_cards(db)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _adopt_latest_cards(db: sqlite3.Connection) -> None:
    """Release 1 kept a ``latest_cards`` pointer per request; it becomes the ``requests`` table."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'latest_cards'").fetchone():
        return
    for row in db.execute(
        "SELECT l.workspace_id, l.person_id, l.tool, l.fingerprint, c.id, c.state, c.expires_at"
        " FROM latest_cards l JOIN cards c ON c.id = l.card_id"
    ).fetchall():
        live_until = {"pending": row[6], "running": LIVE_FOREVER}.get(row[5], 0)
        db.execute(
            "INSERT OR REPLACE INTO requests (key, workspace_id, card_id, live_until) VALUES (?, ?, ?, ?)",
            (request_key(row[0], row[1], row[2], row[3]), row[0], row[4], live_until),
        )
    db.execute("DROP TABLE latest_cards")


def to_json(value: Any) -> str:
    return canonical_json(value)


def from_json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


R = TypeVar("R")


def record_json(record: Any) -> str:
    """A record kept whole as one JSON column (the OAuth records)."""
    return to_json(data_fields(record))


def record_from_json(cls: type[R], text: str, **override: Any) -> R:
    """The record :func:`record_json` kept, with ``override`` (its values kept in other columns)."""
    values = json.loads(text)
    if "scopes" in values:
        values["scopes"] = tuple(values["scopes"])
    values.update(override)
    return cls(**known_fields(cls, values))


# -- cursors ------------------------------------------------------------------------------------


def encode_cursor(key: int, ident: str) -> str:
    """An opaque position after the row ``(key, ident)`` of a keyset-ordered listing."""
    return base64.urlsafe_b64encode(to_json([key, ident]).encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        key, ident = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
    except (binascii.Error, UnicodeError, ValueError, TypeError) as exc:
        raise BadInput("cursor", "is not a cursor this listing returned.") from exc
    if type(key) is not int or not -(2**63) <= key < 2**63 or not isinstance(ident, str):  # (SQLite's integers)
        raise BadInput("cursor", "is not a cursor this listing returned.")
    return key, ident


# -- rows to records ----------------------------------------------------------------------------


def workspace(row: sqlite3.Row) -> Workspace:
    return Workspace(id=row["id"], name=row["name"], settings=from_json(row["settings"]), created_at=row["created_at"])


def person(row: sqlite3.Row) -> Person:
    return Person(
        id=row["id"],
        workspace_id=row["workspace_id"],
        email=row["email"],
        role=row["role"],
        name=row["name"],
        agent_requests_email=bool(row["agent_requests_email"]),
        created_at=row["created_at"],
        quiet_hours=quiet_hours_from_text(row["quiet_hours"]),
        channels_off=channels_off_from_text(row["channels_off"]),
    )


def connection(row: sqlite3.Row) -> Connection:
    """(``grants_until`` when the row was read with it: ``connections.GRANTS_UNTIL``.)"""
    until = from_json(row["grants_until"]) if "grants_until" in row.keys() else None
    return Connection(
        **{k: row[k] for k in ("id", "workspace_id", "person_id", "name", "token_hash", "created_at", "revoked_at",
                               "revoked_reason")},
        grants_until=until if isinstance(until, dict) else None,
    )


def signin_token(row: sqlite3.Row) -> SignInToken:
    return SignInToken(**{k: row[k] for k in ("token_hash", "person_id", "workspace_id", "expires_at")})


def session(row: sqlite3.Row) -> Session:
    return Session(
        **{k: row[k] for k in ("session_hash", "person_id", "workspace_id", "csrf_token", "created_at", "expires_at")}
    )


def code(row: sqlite3.Row) -> CodeRecord:
    return CodeRecord(**{k: row[k] for k in CODE_FIELDS})


CODE_FIELDS = ("code_hash", "workspace_id", "fingerprint", "expires_at", "arguments_digest", "issued_at")


CARD_PLAIN = (
    "id", "workspace_id", "person_id", "connection_id", "tool", "title", "fingerprint", "ticket",
    "created_at", "expires_at", "updated_at", "decline_reason", "refusal", "channel", "version", "lease_until",
    "filed_by", "escalate_at",
)


def card_row(card: Card) -> dict[str, Any]:
    """The column values of ``card`` (its arguments already checked to be JSON)."""
    row = {k: getattr(card, k) for k in CARD_PLAIN}
    row.update(
        arguments=to_json(card.arguments),
        subject=to_json(card.subject),
        lines=to_json(stored_lines(card)),
        state=CardState(card.state).value,
        result=None if card.result is None else to_json(card.result),
        run=None if card.run is None else to_json(card.run),
        passkey=None if card.passkey is None else to_json(card.passkey),
        edited=None if card.edited is None else to_json(card.edited),
        lifetime=None if card.lifetime is None else to_json(card.lifetime),
        audience=to_json(list(card.audience)) if card.audience else None,
        quorum=None if card.quorum is None else to_json(card.quorum),
        votes=to_json(list(card.votes)) if card.votes else None,
        escalation=None if card.escalation is None else to_json(card.escalation),
    )
    return row


def card(row: sqlite3.Row) -> Card:
    lines, sections = lines_and_sections(from_json(row["lines"]))
    return Card(
        **{k: row[k] for k in CARD_PLAIN},
        arguments=from_json(row["arguments"]),
        subject=from_json(row["subject"]),
        lines=lines,
        sections=sections,
        state=CardState(row["state"]),
        result=from_json(row["result"]),
        run=from_json(row["run"]),
        passkey=from_json(row["passkey"]),
        edited=from_json(row["edited"]),
        lifetime=from_json(row["lifetime"]),
        audience=tuple(from_json(row["audience"]) or ()),
        quorum=from_json(row["quorum"]),
        votes=tuple(from_json(row["votes"]) or ()),
        escalation=from_json(row["escalation"]),
    )


AUDIT_FIELDS = ("card_id", "workspace_id", "at", "event", "actor", "channel", "connection_id", "detail")


def audit_entry(row: sqlite3.Row) -> AuditEntry:
    return AuditEntry(**{k: row[k] for k in AUDIT_FIELDS})


def doc(row: sqlite3.Row) -> Doc:
    return Doc(kind=row["kind"], id=row["id"], data=from_json(row["data"]), version=row["version"])


NOTIFICATION_FIELDS = (
    "card_id", "workspace_id", "person_id", "created_at", "state", "due_at", "attempts", "lease_until", "outcome",
    "done_at",
)


def notification(row: sqlite3.Row) -> Notification:
    return Notification(**{k: row[k] for k in NOTIFICATION_FIELDS}, listed=tuple(from_json(row["listed"]) or ()))


def notification_row(n: Notification) -> tuple[Any, ...]:
    """The values of :data:`NOTIFICATION_FIELDS` and ``listed`` (JSON), in that order."""
    return (*(getattr(n, k) for k in NOTIFICATION_FIELDS), to_json(list(n.listed)) if n.listed else None)
