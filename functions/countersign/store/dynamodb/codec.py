"""DynamoDB item keys, and the mapping between records and items.

Items are built as plain dicts and turned into attribute values with boto3's
``TypeSerializer`` (:func:`item`); read back with ``TypeDeserializer`` (:func:`plain`).
Free-form values (card arguments, subject, result, run; doc data) are stored as canonical JSON
text, so floats, ``None`` and key order round-trip exactly as they do in SQLite. The notifier and
the tests decode a stream ``NewImage`` with the same functions.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
import time
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, TypeVar

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from ...core.canonical import canonical_json
from ...core.card_states import CardState
from ...core.codes import CodeRecord
from ..cards import AuditEntry, Card, lines_and_sections, marked_lapse, stored_lines
from ..connections import Connection
from ..docs import Doc
from ..errors import BadInput
from ..json_records import data_fields, known_fields
from ..outbox import Notification
from ..sessions import Session, SignInToken
from ..workspaces import (
    Person,
    Workspace,
    channels_off_from_text,
    channels_off_text,
    quiet_hours_from_text,
    quiet_hours_text,
)

Item = dict[str, dict[str, Any]]

_SERIALIZER = TypeSerializer()
_DESERIALIZER = TypeDeserializer()


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def _unwrap(value: Any) -> Any:
    if isinstance(value, Decimal):
        return _number(value)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, (list, set)):
        return [_unwrap(v) for v in value]
    return value


def av(value: Any) -> dict[str, Any]:
    """One plain value as an attribute value."""
    return _SERIALIZER.serialize(value)


def item(values: dict[str, Any]) -> Item:
    """A plain dict as an item; ``None`` values are left out (an absent attribute)."""
    return {k: av(v) for k, v in values.items() if v is not None}


def plain(raw: Item) -> dict[str, Any]:
    """An item (low-level attribute values) as plain values, numbers as ``int``."""
    return {k: _unwrap(_DESERIALIZER.deserialize(v)) for k, v in raw.items()}


def pick(v: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """``v``'s values for ``names``, ``None`` where an attribute is absent."""
    return {k: v.get(k) for k in names}


def values(mapping: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``ExpressionAttributeValues`` from plain values."""
    return {k: av(v) for k, v in mapping.items()}


def J(value: Any) -> str:
    return canonical_json(value)


def unJ(text: str | None) -> Any:
    return None if text is None else json.loads(text)


R = TypeVar("R")


def record_data(record: Any) -> str:
    """A record kept whole as one JSON attribute, ``data`` (the OAuth records)."""
    return J(data_fields(record))


def record_from(cls: type[R], found: dict[str, Any], **override: Any) -> R:
    """The record :func:`record_data` kept in ``found``, with ``override`` (values kept in other attributes)."""
    values = unJ(found["data"])
    if "scopes" in values:
        values["scopes"] = tuple(values["scopes"])
    values.update(override)
    return cls(**known_fields(cls, values))


def live(found: dict[str, Any] | None, now: int) -> bool:
    """Whether an item read is there and not past its ``expires_at`` (TTL deletes lazily)."""
    return found is not None and found.get("expires_at", now + 1) > now


# -- keys -------------------------------------------------------------------------------------


def key(pk: str, sk: str) -> Item:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def workspace_key(ws: str) -> Item:
    return key(f"WS#{ws}", "WS")


def person_key(ws: str, person_id: str) -> Item:
    return key(f"WS#{ws}", f"PERSON#{person_id}")


def email_key(email: str) -> Item:
    return key(f"EMAIL#{email.lower()}", "EMAIL")  # as workspaces.email_key


def connection_key(ws: str, connection_id: str) -> Item:
    return key(f"WS#{ws}", f"CONN#{connection_id}")


def token_key(token_hash: str) -> Item:
    return key(f"TOKEN#{token_hash}", "TOKEN")


def card_key(card_id: str) -> Item:
    return key(f"CARD#{card_id}", "CARD")


def request_key_item(request_key: str) -> Item:
    return key(f"REQ#{request_key}", "REQ")


def spent_key(ticket_digest: str) -> Item:
    return key(f"SPENT#{ticket_digest}", "SPENT")


def outbox_key(card_id: str) -> Item:
    return key(f"OUTBOX#{card_id}", "OUTBOX")


def signing_key_key(key_id: str) -> Item:
    return key("KEYS", key_id)


def single_key(kind: str, ident: str) -> Item:
    """Items of one record each: ``SIGNIN``, ``SESSION``, ``CODE``, ``NONCE``."""
    return key(f"{kind}#{ident}", kind)


def email_slot_key(person_id: str) -> Item:
    return key(f"RATE#{person_id}", "EMAIL")


def suppression_key(email: str) -> Item:
    return key(f"SUPPRESSED#{email}", "SUPPRESSED")  # email lower-cased (checks.email_key)


def limit_key(name: str, window_start: int) -> Item:
    return key(f"LIMIT#{name}", f"{window_start:012d}")


def doc_partition(ws: str, kind: str) -> str:
    return f"DOC#{ws}#{kind}"


def doc_key(ws: str, kind: str, doc_id: str) -> Item:
    return key(doc_partition(ws, kind), doc_id)


# -- the sparse index gsi1 ----------------------------------------------------------------------

RUNNING_PARTITION = "RUNNING"
OUTBOX_PARTITION = "OUTBOX"


def pending_partition(ws: str, person_id: str) -> str:
    return f"PENDING#{ws}#{person_id}"


def history_partition(ws: str, person_id: str) -> str:
    return f"DONE#{ws}#{person_id}"


def time_key(t: int, ident: str) -> str:
    """The GSI sort key: time first (12 digits), then the id to break ties."""
    return f"{t:012d}#{ident}"


def after_second(now: int) -> str:
    """Every ``time_key(t, id)`` with ``t > now`` sorts above this, every one with ``t <= now`` below."""
    return f"{now:012d}~"


_TIME_KEY = re.compile(r"^\d{12}#[!-~]{1,1024}$")


def encode_cursor(sort_key: str) -> str:
    return base64.urlsafe_b64encode(sort_key.encode("ascii")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The sort key a cursor stands for; :class:`BadInput` (field ``cursor``) if it is not one of ours."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raw = ""
    if not _TIME_KEY.fullmatch(raw) or encode_cursor(raw) != cursor:
        raise BadInput("cursor", "is not a cursor this listing returned.")
    return raw


class Sequence:
    """Strictly increasing integers (nanosecond clock based) that order records created in the same second."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            self._last = max(self._last + 1, time.time_ns())
            return self._last


# -- records ----------------------------------------------------------------------------------


def workspace_item(ws: Workspace) -> Item:
    return {**workspace_key(ws.id), **item({"id": ws.id, "name": ws.name, "settings": dict(ws.settings),
                                            "created_at": ws.created_at})}


def workspace_from(v: dict[str, Any]) -> Workspace:
    return Workspace(id=v["id"], name=v["name"], settings=v["settings"], created_at=v.get("created_at", 0),
                     webhooks=int(v.get("webhook_endpoints") or 0) > 0)


PERSON_FIELDS = ("id", "workspace_id", "email", "role", "name", "agent_requests_email", "created_at")


def person_item(p: Person) -> Item:
    return {**person_key(p.workspace_id, p.id),
            **item({**{k: getattr(p, k) for k in PERSON_FIELDS}, "quiet_hours": quiet_hours_text(p.quiet_hours),
                    "channels_off": channels_off_text(p.channels_off)})}


def person_from(v: dict[str, Any]) -> Person:
    return Person(**{k: v[k] for k in PERSON_FIELDS}, quiet_hours=quiet_hours_from_text(v.get("quiet_hours")),
                  channels_off=channels_off_from_text(v.get("channels_off")))


GRANTS_UNTIL = "grants_until"  # on both copies of a connection (its item and its token's): Connection.grants_until
CONNECTION_FIELDS = ("id", "workspace_id", "person_id", "name", "token_hash", "created_at", "revoked_at",
                     "revoked_reason")


def connection_item(c: Connection) -> Item:
    """A new connection's item: it has no standing grant yet, and says so (``grants_until``)."""
    fields = {k: getattr(c, k) for k in CONNECTION_FIELDS}
    return {**connection_key(c.workspace_id, c.id), **item({**fields, GRANTS_UNTIL: c.grants_until or {}})}


def connection_from(v: dict[str, Any]) -> Connection:
    """(An item without ``grants_until`` was made before the hint was kept: None, read the grants.)"""
    until = v.get(GRANTS_UNTIL)
    return Connection(**pick(v, CONNECTION_FIELDS), grants_until=dict(until) if isinstance(until, dict) else None)


def signin_item(t: SignInToken) -> Item:
    fields = {"token_hash": t.token_hash, "person_id": t.person_id, "workspace_id": t.workspace_id,
              "expires_at": t.expires_at}
    return {**single_key("SIGNIN", t.token_hash), **item(fields)}


def signin_from(v: dict[str, Any]) -> SignInToken:
    return SignInToken(v["token_hash"], v["person_id"], v["workspace_id"], v["expires_at"])


SESSION_FIELDS = ("session_hash", "person_id", "workspace_id", "csrf_token", "created_at", "expires_at")


def session_item(s: Session) -> Item:
    return {**single_key("SESSION", s.session_hash), **item({k: getattr(s, k) for k in SESSION_FIELDS})}


def session_from(v: dict[str, Any]) -> Session:
    return Session(**{k: v[k] for k in SESSION_FIELDS})


CODE_FIELDS = ("code_hash", "workspace_id", "fingerprint", "expires_at", "arguments_digest", "issued_at")


def code_item(r: CodeRecord) -> Item:
    return {**single_key("CODE", r.code_hash), **item({k: getattr(r, k) for k in CODE_FIELDS})}


def code_from(v: dict[str, Any]) -> CodeRecord:
    return CodeRecord(**{k: v[k] for k in CODE_FIELDS if k in v})


# Cards keep their answer deadline in ``card_expires_at``. The table's TTL attribute
# ``expires_at`` is the purge time (deadline + retention), so a decided card and its audit
# trail stay readable after the deadline instead of being deleted by TTL with it.

CARD_PLAIN = ("id", "workspace_id", "person_id", "connection_id", "tool", "title", "fingerprint", "ticket",
              "created_at", "updated_at", "decline_reason", "refusal", "channel", "version", "lease_until",
              "filed_by")


def card_index(c: Card) -> tuple[str, str]:
    """Where a card sits in gsi1: waiting, running (by lease), or decided (by its time)."""
    state = CardState(c.state)
    if state is CardState.PENDING:
        return pending_partition(c.workspace_id, c.person_id), time_key(c.expires_at, c.id)
    if state is CardState.RUNNING:
        return RUNNING_PARTITION, time_key(c.lease_until or 0, c.id)
    return history_partition(c.workspace_id, c.person_id), time_key(c.updated_at, c.id)


def card_item(c: Card, purge_at: int | None, txn_id: str | None = None) -> Item:
    gsi1pk, gsi1sk = card_index(c)
    values_ = {k: getattr(c, k) for k in CARD_PLAIN}
    values_.update(
        arguments=J(c.arguments), subject=J(c.subject), lines=stored_lines(c), status=CardState(c.state).value,
        card_expires_at=c.expires_at, result=None if c.result is None else J(c.result),
        run=None if c.run is None else J(c.run), passkey=None if c.passkey is None else J(c.passkey),
        edited=None if c.edited is None else J(c.edited), expires_at=purge_at, gsi1pk=gsi1pk, gsi1sk=gsi1sk,
        lifetime=None if c.lifetime is None else J(c.lifetime),
        txn_id=txn_id, webhooks=c.webhooks, audience=list(c.audience) or None,
        quorum=None if c.quorum is None else J(c.quorum), votes=J(list(c.votes)) if c.votes else None,
        escalation=None if c.escalation is None else J(c.escalation), escalate_at=c.escalate_at,
    )
    return {**card_key(c.id), **item(values_)}


# A card that others may answer too (Card.audience): for each of them an item beside the card,
# CARD#<id> / SEE#<person>, in that person's waiting partition at the card's deadline while it waits
# (deleted with the move out of pending). A card with an escalation due: CARD#<id> / ESCALATE, in
# the ESCALATE partition at the time it is due.
AUDIENCE_PREFIX = "SEE#"
ESCALATE_PARTITION = "ESCALATE"


def audience_key(card_id: str, person_id: str) -> Item:
    return key(f"CARD#{card_id}", AUDIENCE_PREFIX + person_id)


def audience_item(c: Card, person_id: str, purge_at: int | None) -> Item:
    values_ = {"id": c.id, "workspace_id": c.workspace_id, "gsi1pk": pending_partition(c.workspace_id, person_id),
               "gsi1sk": time_key(c.expires_at, c.id), "expires_at": purge_at}
    return {**audience_key(c.id, person_id), **item(values_)}


def escalate_key(card_id: str) -> Item:
    return key(f"CARD#{card_id}", "ESCALATE")


def escalate_item(c: Card, purge_at: int | None) -> Item:
    assert c.escalate_at is not None
    values_ = {"id": c.id, "workspace_id": c.workspace_id, "gsi1pk": ESCALATE_PARTITION,
               "gsi1sk": time_key(c.escalate_at, c.id), "expires_at": purge_at}
    return {**escalate_key(c.id), **item(values_)}


def is_card_item(v: dict[str, Any]) -> bool:
    """Whether an index entry is a card itself (not an audience or escalation item beside it)."""
    return v.get("sk") == "CARD"


def card_from(v: dict[str, Any]) -> Card:
    """The stored card (no expiry applied), from plain values (:func:`plain` of a GetItem, a
    Query, a cancellation's ``ALL_OLD`` or a stream ``NewImage``)."""
    lines, sections = lines_and_sections(v.get("lines"))
    return Card(
        **pick(v, (k for k in CARD_PLAIN if k != "version")),
        version=v.get("version", 1),
        arguments=unJ(v["arguments"]),
        subject=unJ(v["subject"]),
        lines=lines,
        sections=sections,
        state=CardState(v["status"]),
        expires_at=v["card_expires_at"],
        result=unJ(v.get("result")),
        run=unJ(v.get("run")),
        passkey=unJ(v.get("passkey")),
        webhooks=v.get("webhooks"),
        edited=unJ(v.get("edited")),
        lifetime=unJ(v.get("lifetime")),
        audience=tuple(v.get("audience") or ()),
        quorum=unJ(v.get("quorum")),
        votes=tuple(unJ(v.get("votes")) or ()),
        escalation=unJ(v.get("escalation")),
        escalate_at=v.get("escalate_at"),
    )


def listed_card_from(v: dict[str, Any]) -> Card:
    """A card from its gsi1 entry, which projects only what a listing shows (store/table.py
    ``GSI1_ATTRIBUTES``): :func:`countersign.store.cards.listed`'s shape."""
    lines, sections = lines_and_sections(v.get("lines"))
    return Card(
        # who filed it is not projected: a listing leaves it out (countersign.store.cards.listed)
        **pick(v, (k for k in CARD_PLAIN if k not in ("version", "fingerprint", "ticket", "filed_by"))),
        fingerprint="", ticket="", arguments={}, subject=None, run=None,
        version=v.get("version", 1),
        lines=lines,
        sections=sections,
        state=CardState(v["status"]),
        expires_at=v["card_expires_at"],
        result=unJ(v.get("result")),
        lifetime=marked_lapse(v.get("lines")),
    )


AUDIT_FIELDS = ("workspace_id", "at", "event", "actor", "channel", "connection_id", "detail")


def audit_item(e: AuditEntry, seq: int, purge_at: int | None) -> Item:
    fields = {k: getattr(e, k) for k in AUDIT_FIELDS}
    fields.update(card_id=e.card_id, expires_at=purge_at)
    return {**key(f"CARD#{e.card_id}", f"AUDIT#{e.at:012d}#{seq:020d}"), **item(fields)}


def audit_from(v: dict[str, Any]) -> AuditEntry:
    return AuditEntry(card_id=v["card_id"], **pick(v, AUDIT_FIELDS))


NOTIFICATION_FIELDS = ("card_id", "workspace_id", "person_id", "created_at", "state", "due_at", "attempts",
                       "lease_until", "outcome", "done_at")


def notification_item(n: Notification, purge_at: int | None) -> Item:
    fields: dict[str, Any] = {k: getattr(n, k) for k in NOTIFICATION_FIELDS}
    fields.update(gsi1pk=OUTBOX_PARTITION, gsi1sk=time_key(n.due_at, n.card_id), expires_at=purge_at,
                  listed=list(n.listed) or None)
    return {**outbox_key(n.card_id), **item(fields)}


def notification_from(v: dict[str, Any]) -> Notification:
    return Notification(**pick(v, NOTIFICATION_FIELDS), listed=tuple(v.get("listed") or ()))


def doc_item(ws: str, kind: str, doc_id: str, data: dict[str, Any], version: int) -> Item:
    return {**doc_key(ws, kind, doc_id), **item({"kind": kind, "id": doc_id, "data": J(data), "version": version})}


def doc_from(v: dict[str, Any]) -> Doc:
    return Doc(kind=v["kind"], id=v["id"], data=json.loads(v["data"]), version=v["version"])
