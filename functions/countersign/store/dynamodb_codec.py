"""DynamoDB item keys and the mapping between records and low-level items (``{"S": ...}`` form).

Kept apart from :mod:`countersign.store.dynamodb` so the notifier can decode a stream
``NewImage`` (same attribute-value form) with :func:`card_from_item` without the store class.

Free-form values (card arguments, subject, result; doc data) are stored as canonical JSON text,
so floats, ``None`` and key order round-trip exactly as they do in SQLite.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
import time
from typing import Any

from ..core.canonical import canonical_json
from ..core.cards import CardState
from ..core.codes import CodeRecord
from .errors import BadInput
from .records import AuditEntry, Card, Connection, Doc, Person, Session, SignInToken, Workspace

Item = dict[str, dict[str, Any]]

# -- keys -------------------------------------------------------------------------------------


def workspace_key(ws: str) -> Item:
    return {"pk": {"S": f"WS#{ws}"}, "sk": {"S": "WS"}}


def person_key(ws: str, person_id: str) -> Item:
    return {"pk": {"S": f"WS#{ws}"}, "sk": {"S": f"PERSON#{person_id}"}}


def email_key(email: str) -> Item:
    return {"pk": {"S": f"EMAIL#{email.lower()}"}, "sk": {"S": "EMAIL"}}  # as checks.email_key


def connection_key(ws: str, connection_id: str) -> Item:
    return {"pk": {"S": f"WS#{ws}"}, "sk": {"S": f"CONN#{connection_id}"}}


def token_key(token_hash: str) -> Item:
    return {"pk": {"S": f"TOKEN#{token_hash}"}, "sk": {"S": "TOKEN"}}


def card_key(card_id: str) -> Item:
    return {"pk": {"S": f"CARD#{card_id}"}, "sk": {"S": "CARD"}}


def latest_key(ws: str, person_id: str, tool: str, fingerprint: str) -> Item:
    return {"pk": {"S": f"LATEST#{ws}#{person_id}#{tool}#{fingerprint}"}, "sk": {"S": "LATEST"}}


def single_key(kind: str, ident: str) -> Item:
    """Items of one record each: ``SIGNIN``, ``SESSION``, ``CODE``, ``NONCE``."""
    return {"pk": {"S": f"{kind}#{ident}"}, "sk": {"S": kind}}


def email_slot_key(person_id: str) -> Item:
    return {"pk": {"S": f"RATE#{person_id}"}, "sk": {"S": "EMAIL"}}


def limit_key(key: str, window_start: int) -> Item:
    return {"pk": {"S": f"LIMIT#{key}"}, "sk": {"S": f"{window_start:012d}"}}


def doc_partition(ws: str, kind: str) -> str:
    return f"DOC#{ws}#{kind}"


def doc_key(ws: str, kind: str, doc_id: str) -> Item:
    return {"pk": {"S": doc_partition(ws, kind)}, "sk": {"S": doc_id}}


def pending_partition(ws: str, person_id: str) -> str:
    return f"PENDING#{ws}#{person_id}"


def history_partition(ws: str, person_id: str) -> str:
    return f"DONE#{ws}#{person_id}"


def time_key(t: int, card_id: str) -> str:
    """The GSI sort key: time first (12 digits), then the id to break ties."""
    return f"{t:012d}#{card_id}"


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
    if not _TIME_KEY.match(raw) or encode_cursor(raw) != cursor:
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


# -- attribute values -------------------------------------------------------------------------


def S(value: str) -> dict[str, str]:
    return {"S": value}


def N(value: int) -> dict[str, str]:
    return {"N": str(int(value))}


def J(value: Any) -> dict[str, str]:
    return {"S": canonical_json(value)}


def av(value: Any) -> dict[str, Any]:
    """A plain JSON-like value as an attribute value (settings maps)."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, float):
        return {"N": repr(value)}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, (list, tuple)):
        return {"L": [av(v) for v in value]}
    if isinstance(value, dict):
        return {"M": {str(k): av(v) for k, v in value.items()}}
    raise TypeError(f"cannot store {type(value).__name__}")


def py(value: dict[str, Any]) -> Any:
    (kind, raw), = value.items()
    if kind == "S":
        return raw
    if kind == "N":
        return int(raw) if re.fullmatch(r"-?\d+", raw) else float(raw)
    if kind == "BOOL":
        return bool(raw)
    if kind == "NULL":
        return None
    if kind == "L":
        return [py(v) for v in raw]
    if kind == "M":
        return {k: py(v) for k, v in raw.items()}
    raise TypeError(f"unexpected attribute type {kind}")


def _s(item: Item, name: str) -> str | None:
    value = item.get(name)
    return None if value is None or "NULL" in value else value["S"]


def _n(item: Item, name: str) -> int | None:
    value = item.get(name)
    return None if value is None or "NULL" in value else int(value["N"])


def _j(item: Item, name: str) -> Any:
    value = item.get(name)
    return None if value is None or "NULL" in value else json.loads(value["S"])


def put_optional(item: Item, name: str, value: str | int | None) -> None:
    if value is not None:
        item[name] = N(value) if isinstance(value, int) and not isinstance(value, bool) else S(str(value))


# -- records ----------------------------------------------------------------------------------


def workspace_item(ws: Workspace) -> Item:
    return {
        **workspace_key(ws.id),
        "id": S(ws.id),
        "name": S(ws.name),
        "settings": {"M": {k: av(v) for k, v in ws.settings.items()}},
        "created_at": N(ws.created_at),
    }


def workspace_from_item(item: Item) -> Workspace:
    return Workspace(id=item["id"]["S"], name=item["name"]["S"], settings=py(item["settings"]), created_at=_n(item, "created_at") or 0)


def person_item(p: Person) -> Item:
    return {
        **person_key(p.workspace_id, p.id),
        "id": S(p.id),
        "workspace_id": S(p.workspace_id),
        "email": S(p.email),
        "role": S(p.role),
        "name": S(p.name),
        "agent_requests_email": {"BOOL": bool(p.agent_requests_email)},
        "created_at": N(p.created_at),
    }


def person_from_item(item: Item) -> Person:
    return Person(
        id=item["id"]["S"],
        workspace_id=item["workspace_id"]["S"],
        email=item["email"]["S"],
        role=item["role"]["S"],
        name=item["name"]["S"],
        agent_requests_email=item["agent_requests_email"]["BOOL"],
        created_at=_n(item, "created_at") or 0,
    )


def connection_item(c: Connection) -> Item:
    item = {
        **connection_key(c.workspace_id, c.id),
        "id": S(c.id),
        "workspace_id": S(c.workspace_id),
        "person_id": S(c.person_id),
        "name": S(c.name),
        "token_hash": S(c.token_hash),
        "created_at": N(c.created_at),
    }
    put_optional(item, "revoked_at", c.revoked_at)
    return item


def connection_from_item(item: Item) -> Connection:
    return Connection(
        id=item["id"]["S"],
        workspace_id=item["workspace_id"]["S"],
        person_id=item["person_id"]["S"],
        name=item["name"]["S"],
        token_hash=item["token_hash"]["S"],
        created_at=_n(item, "created_at") or 0,
        revoked_at=_n(item, "revoked_at"),
    )


def signin_item(t: SignInToken) -> Item:
    return {
        **single_key("SIGNIN", t.token_hash),
        "token_hash": S(t.token_hash),
        "person_id": S(t.person_id),
        "workspace_id": S(t.workspace_id),
        "expires_at": N(t.expires_at),
    }


def signin_from_item(item: Item) -> SignInToken:
    return SignInToken(
        token_hash=item["token_hash"]["S"],
        person_id=item["person_id"]["S"],
        workspace_id=item["workspace_id"]["S"],
        expires_at=int(item["expires_at"]["N"]),
    )


def session_item(s: Session) -> Item:
    return {
        **single_key("SESSION", s.session_hash),
        "session_hash": S(s.session_hash),
        "person_id": S(s.person_id),
        "workspace_id": S(s.workspace_id),
        "csrf_token": S(s.csrf_token),
        "created_at": N(s.created_at),
        "expires_at": N(s.expires_at),
    }


def session_from_item(item: Item) -> Session:
    return Session(
        session_hash=item["session_hash"]["S"],
        person_id=item["person_id"]["S"],
        workspace_id=item["workspace_id"]["S"],
        csrf_token=item["csrf_token"]["S"],
        created_at=int(item["created_at"]["N"]),
        expires_at=int(item["expires_at"]["N"]),
    )


def code_item(r: CodeRecord) -> Item:
    return {
        **single_key("CODE", r.code_hash),
        "code_hash": S(r.code_hash),
        "workspace_id": S(r.workspace_id),
        "fingerprint": S(r.fingerprint),
        "expires_at": N(r.expires_at),
        "arguments_digest": S(r.arguments_digest),
    }


def code_from_item(item: Item) -> CodeRecord:
    return CodeRecord(
        code_hash=item["code_hash"]["S"],
        workspace_id=item["workspace_id"]["S"],
        fingerprint=item["fingerprint"]["S"],
        expires_at=int(item["expires_at"]["N"]),
        arguments_digest=item.get("arguments_digest", {}).get("S", ""),
    )


# Cards keep their answer deadline in ``card_expires_at``. The table's TTL attribute
# ``expires_at`` is the purge time (deadline + retention), so a decided card and its audit
# trail stay readable after the deadline instead of being deleted by TTL with it.

def card_item(c: Card, purge_at: int | None) -> Item:
    item: Item = {
        **card_key(c.id),
        "id": S(c.id),
        "workspace_id": S(c.workspace_id),
        "person_id": S(c.person_id),
        "connection_id": S(c.connection_id),
        "tool": S(c.tool),
        "arguments": J(c.arguments),
        "subject": J(c.subject),
        "title": S(c.title),
        "lines": {"L": [S(line) for line in c.lines]},
        "fingerprint": S(c.fingerprint),
        "ticket": S(c.ticket),
        "status": S(CardState(c.state).value),
        "created_at": N(c.created_at),
        "card_expires_at": N(c.expires_at),
        "updated_at": N(c.updated_at),
    }
    if c.result is not None:
        item["result"] = J(c.result)
    put_optional(item, "decline_reason", c.decline_reason)
    put_optional(item, "refusal", c.refusal)
    put_optional(item, "channel", c.channel)
    put_optional(item, "expires_at", purge_at)
    if CardState(c.state) is CardState.PENDING:
        item["gsi1pk"] = S(pending_partition(c.workspace_id, c.person_id))
        item["gsi1sk"] = S(time_key(c.expires_at, c.id))
    else:
        item["gsi1pk"] = S(history_partition(c.workspace_id, c.person_id))
        item["gsi1sk"] = S(time_key(c.updated_at, c.id))
    return item


def card_from_item(item: Item) -> Card:
    """The stored card (no expiry applied): from a GetItem, a Query, or a stream ``NewImage``."""
    return Card(
        id=item["id"]["S"],
        workspace_id=item["workspace_id"]["S"],
        person_id=item["person_id"]["S"],
        connection_id=item["connection_id"]["S"],
        tool=item["tool"]["S"],
        arguments=json.loads(item["arguments"]["S"]),
        subject=json.loads(item["subject"]["S"]),
        title=item["title"]["S"],
        lines=tuple(v["S"] for v in item["lines"]["L"]),
        fingerprint=item["fingerprint"]["S"],
        ticket=item["ticket"]["S"],
        state=CardState(item["status"]["S"]),
        created_at=int(item["created_at"]["N"]),
        expires_at=int(item["card_expires_at"]["N"]),
        updated_at=int(item["updated_at"]["N"]),
        result=_j(item, "result"),
        decline_reason=_s(item, "decline_reason"),
        refusal=_s(item, "refusal"),
        channel=_s(item, "channel"),
    )


AUDIT_FIELDS = ("workspace_id", "at", "event", "actor", "channel", "connection_id", "detail")


def audit_item(e: AuditEntry, seq: int, purge_at: int | None) -> Item:
    item: Item = {
        "pk": S(f"CARD#{e.card_id}"),
        "sk": S(f"AUDIT#{e.at:012d}#{seq:020d}"),
        "card_id": S(e.card_id),
        "workspace_id": S(e.workspace_id),
        "at": N(e.at),
        "event": S(e.event),
        "actor": S(e.actor),
        "channel": S(e.channel),
    }
    put_optional(item, "connection_id", e.connection_id)
    put_optional(item, "detail", e.detail)
    put_optional(item, "expires_at", purge_at)
    return item


def audit_from_item(item: Item) -> AuditEntry:
    return AuditEntry(
        card_id=item["card_id"]["S"],
        workspace_id=item["workspace_id"]["S"],
        at=int(item["at"]["N"]),
        event=item["event"]["S"],
        actor=item["actor"]["S"],
        channel=item["channel"]["S"],
        connection_id=_s(item, "connection_id"),
        detail=_s(item, "detail"),
    )


def doc_item(ws: str, kind: str, doc_id: str, data: dict[str, Any], version: int) -> Item:
    return {
        **doc_key(ws, kind, doc_id),
        "kind": S(kind),
        "id": S(doc_id),
        "data": J(data),
        "version": N(version),
    }


def doc_from_item(item: Item) -> Doc:
    return Doc(kind=item["kind"]["S"], id=item["id"]["S"], data=json.loads(item["data"]["S"]), version=int(item["version"]["N"]))
