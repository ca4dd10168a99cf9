"""The statement a passkey signs to confirm one card, and the challenge derived from it.

The statement is canonical JSON (keys sorted, no spaces) committing to the relying party, the
card id, its fingerprint, the SHA-256 of the preview the person is shown (title, lines and sections,
as the ticket binds them) and a single-use server nonce with its expiry; the WebAuthn challenge is
SHA-256 of those exact bytes. Canonical JSON, not concatenation: ``"12"+"3ab"`` and ``"123"+"ab"``
must not sign the same. Pure: no py_webauthn here (the gate imports it to check a passkey's yes).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from typing import Any

from .canonical import canonical_json, preview_digest

PURPOSE = "confirm-change"
VERSION = 1
CONFIRM_TTL = 120  # seconds a confirm challenge may be answered


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_fingerprint(public_key_cose: str) -> str:
    """A passkey's public key (base64url COSE, as registered and as a receipt carries it) as a
    person compares it: the first 128 bits of its SHA-256, in eight groups of four hex digits
    (``3f0c 9a1e …``). Settings lists each passkey with it and ``countersign verify-receipt``
    prints it, so a receipt's passkey is checked against the person's by eye. (A prefix of the key
    itself would not do: every ES256 key's COSE encoding begins with the same bytes.)"""
    digest = hashlib.sha256(unb64u(public_key_cose)).hexdigest()[:32]
    return " ".join(digest[i:i + 4] for i in range(0, 32, 4))


def challenge_hash(challenge: bytes) -> str:
    """How a challenge is stored and looked up (never the challenge itself)."""
    return hashlib.sha256(b"countersign-passkey-challenge:" + challenge).hexdigest()


def confirm_statement(rp_id: str, card: Any, now: int, ttl: int = CONFIRM_TTL) -> str:
    return canonical_json({
        "v": VERSION, "purpose": PURPOSE, "rp": rp_id, "card": card.id, "fp": card.fingerprint,
        "preview": preview_digest(card.title, card.lines, card.sections), "nonce": secrets.token_urlsafe(16),
        "exp": now + ttl,
    })


def statement_challenge(statement: str) -> bytes:
    return hashlib.sha256(statement.encode("utf-8")).digest()


def parse_statement(statement: str) -> dict[str, Any]:
    value = json.loads(statement)
    if not isinstance(value, dict) or canonical_json(value) != statement:
        raise ValueError("the statement is not canonical JSON")
    if value.get("purpose") != PURPOSE or value.get("v") != VERSION:
        raise ValueError("the statement is not a confirmation statement")
    return value


def statement_mismatch(statement: str, card: Any) -> str | None:
    """Why ``statement`` does not describe ``card`` as it stands (None: it does)."""
    try:
        value = parse_statement(statement)
    except ValueError as exc:
        return str(exc)
    if value.get("card") != card.id:
        return "the passkey signed a different card"
    if value.get("fp") != card.fingerprint:
        return "the passkey signed a different change"
    if value.get("preview") != preview_digest(card.title, card.lines, card.sections):
        return "the passkey signed a different preview"
    return None
