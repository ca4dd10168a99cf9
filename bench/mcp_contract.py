"""The contract's minimum for a held call, as a tool of the bare ``mcp`` SDK server
(``bench/mcp_servers.py``): what any server that keeps countersign's contract must do when a
budget change is held, and nothing more, written as plainly as it can be.

``hold(category_id, month, amount)`` reads the documents its preview is drawn from (the category,
the month's budget, the budget's roll-up ledger that bounds the change's writes) in one query,
draws the preview, fingerprints the subject, signs a ticket (Ed25519 over canonical JSON, as a
card's), and files the card in one transaction committed with fsync: the request's claim (a retry
finds the card instead of filing a second), the card, its audit entry and its notification. It
replies with the held reply's fields. No authentication (a read pays it too, and the floor holds a
read), no request limits, no policy (passkeys, quorums, lifetimes, grants), no logging.

Measured as one more call of the bare way (``bench/mcp_floors.py``): its cost over the bare
server's ``ping`` is what the contract itself adds to a read, so ``read + (hold − ping)`` is the
least a held call can cost here; its ratio to the floor is the floor of the held call's ratio.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import secrets
import sqlite3
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from nacl.signing import SigningKey

from countersign.gate.replies import HELD_INSTRUCTIONS  # (the agent is told the same)

WORKSPACE, PERSON, CONNECTION = "ws_bench", "p_bench", "conn_bench"
CATEGORIES = [f"cat_{name}" for name in ("groceries", "restaurants", "household", "fun", "books", "tennis",
                                          "travel", "gifts", "health", "savings")]


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@functools.cache
def _store() -> sqlite3.Connection:
    """The process's one database for ``hold`` (the stateless shape builds a server per request):
    WAL, ``synchronous = FULL``, the budget's documents seeded, the card's tables indexed as a
    store that lists pending cards, expires them and finds a request's card must."""
    db = sqlite3.connect(str(Path(tempfile.mkdtemp(prefix="contract-")) / "contract.db"), check_same_thread=False,
                         isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.executescript("""
        CREATE TABLE docs (workspace_id TEXT, kind TEXT, id TEXT, version INTEGER, data TEXT,
                           PRIMARY KEY (workspace_id, kind, id)) WITHOUT ROWID;
        CREATE TABLE requests (key TEXT PRIMARY KEY, card_id TEXT, live_until INTEGER) WITHOUT ROWID;
        CREATE TABLE cards (id TEXT PRIMARY KEY, workspace_id TEXT, person_id TEXT, tool TEXT, arguments TEXT,
                            subject TEXT, title TEXT, fingerprint TEXT, ticket TEXT, state TEXT,
                            created_at INTEGER, expires_at INTEGER);
        CREATE INDEX cards_pending ON cards (workspace_id, person_id, state, created_at);
        CREATE INDEX cards_expiry ON cards (state, expires_at);
        CREATE TABLE audit (id INTEGER PRIMARY KEY, workspace_id TEXT, card_id TEXT, at INTEGER, actor TEXT,
                            channel TEXT, connection_id TEXT, event TEXT);
        CREATE TABLE notifications (card_id TEXT PRIMARY KEY, person_id TEXT, due_at INTEGER);
        CREATE INDEX notifications_due ON notifications (due_at);
    """)
    docs = [("budget_category", c, {"name": c[4:].title(), "group_id": "grp_everyday", "position": i,
                                    "hidden": False, "note": ""}) for i, c in enumerate(CATEGORIES)]
    year = time.gmtime().tm_year
    for month in (f"{y}-{m:02d}-01" for y in (year, year + 1) for m in range(1, 13)):  # (a run may cross a month)
        docs.append(("budget_month", month, {"budgeted": {c: 100_000 * (i + 1) for i, c in enumerate(CATEGORIES)}}))
    docs.append(("budget_total", "ledger", {"n": 120, "accounts": {"acc_checking": 80, "acc_savings": 40},
                                            "years": [str(y) for y in range(2019, 2027)], "v": 2}))
    db.executemany("INSERT INTO docs VALUES (?, ?, ?, 1, ?)",
                   [(WORKSPACE, kind, ident, _canonical(data).decode()) for kind, ident, data in docs])
    return db


@functools.cache
def _key() -> SigningKey:
    return SigningKey(b"s" * 32)


def hold(category_id: str, month: str, amount: str) -> dict:
    """A held ``set_category_budget``: its card filed, its held reply returned (module docstring)."""
    db, now = _store(), int(time.time())
    month = time.strftime("%Y-%m-01", time.gmtime(now)) if month == "current" else month
    found = {(kind, ident): json.loads(data) for kind, ident, data in db.execute(
        "SELECT kind, id, data FROM docs WHERE workspace_id = ? AND ((kind = ? AND id = ?) OR (kind = ? AND id = ?)"
        " OR (kind = ? AND id = ?))",
        (WORKSPACE, "budget_category", category_id, "budget_month", month, "budget_total", "ledger"))}
    category, budget = found[("budget_category", category_id)], found[("budget_month", month)]
    if len(found[("budget_total", "ledger")]["years"]) > 80:  # (the change's writes, bounded by its roll-ups)
        raise ValueError("too big for one commit")
    before, after = budget["budgeted"].get(category_id, 0), int(Decimal(amount) * 1000)
    title = f"Budget {category['name']} for {month}: {before / 1000:,.2f} → {after / 1000:,.2f}?"
    subject = {"category": category_id, "category_name": category["name"], "month": month, "before": before,
               "amount": after}
    fingerprint = hashlib.sha256(_canonical({"workspace": WORKSPACE, "tool": "set_category_budget",
                                             "subject": subject})).hexdigest()
    arguments = {"category_id": category_id, "month": month, "amount": amount}
    card_id, expires_at = "c_" + secrets.token_urlsafe(12), now + 86_400
    payload = _canonical({"v": 1, "key_id": "k1", "card_id": card_id, "workspace": WORKSPACE, "person": PERSON,
                          "connection": CONNECTION, "tool": "set_category_budget", "fingerprint": fingerprint,
                          "arguments_digest": hashlib.sha256(_canonical(arguments)).hexdigest(),
                          "preview_digest": hashlib.sha256(title.encode()).hexdigest(),
                          "issued_at": now, "expires_at": expires_at})
    ticket = f"{_b64(payload)}.{_b64(_key().sign(payload).signature)}"
    request = hashlib.sha256(_canonical([WORKSPACE, PERSON, "set_category_budget", fingerprint])).hexdigest()
    db.execute("BEGIN IMMEDIATE")
    try:
        claimed = db.execute(
            "INSERT INTO requests VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET card_id = excluded.card_id,"
            " live_until = excluded.live_until WHERE requests.live_until <= ? RETURNING card_id",
            (request, card_id, expires_at, now)).fetchall()
        if not claimed:  # a retry: the request's card, not a second one
            db.execute("ROLLBACK")
            return {"status": "pending", "confirmationId": db.execute(
                "SELECT card_id FROM requests WHERE key = ?", (request,)).fetchone()[0]}
        db.execute("INSERT INTO cards VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
                   (card_id, WORKSPACE, PERSON, "set_category_budget", _canonical(arguments).decode(),
                    _canonical(subject).decode(), title, fingerprint, ticket, now, expires_at))
        db.execute("INSERT INTO audit (workspace_id, card_id, at, actor, channel, connection_id, event)"
                   " VALUES (?, ?, ?, ?, 'mcp', ?, 'filed')", (WORKSPACE, card_id, now, CONNECTION, CONNECTION))
        db.execute("INSERT INTO notifications VALUES (?, ?, ?)", (card_id, PERSON, now))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    url = f"http://127.0.0.1/c/{card_id}"
    return {"status": "pending", "confirmationId": card_id, "confirmationUrl": url,
            "pendingUrl": "http://127.0.0.1/pending", "tool": "set_category_budget", "title": title, "lines": [],
            "expiresAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires_at)),
            "instructions": HELD_INSTRUCTIONS}
