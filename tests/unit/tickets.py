"""Shared by the ticket tests (test_ticket_*.py): example claims, two secrets, and the wire form
taken apart and put back together (unpadded URL-safe base64 of the canonical claims, a dot, the
signature). The ``ring`` fixture, a keyring of SECRET_A, is in conftest.py."""

from __future__ import annotations

import base64
import dataclasses
import json

from hypothesis import HealthCheck, settings

from countersign.core.canonical import canonical_bytes
from countersign.core.tickets import TicketClaims, new_secret

FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CLAIMS = dict(
    card_id="card_01",
    workspace="ws_1",
    person="person_1",
    connection="conn_1",
    tool="send_campaign",
    fingerprint="f" * 64,
    arguments_digest="a" * 64,
    preview_digest="p" * 64,
    issued_at=1_790_000_000,
    expires_at=1_790_086_400,
)
FIELDS = [f.name for f in dataclasses.fields(TicketClaims)]
SECRET_A = new_secret()
SECRET_B = new_secret()


def b64e(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def split(ticket: str) -> tuple[dict, bytes, bytes]:
    payload_b64, sig_b64 = ticket.split(".")
    payload = b64d(payload_b64)
    return json.loads(payload), payload, b64d(sig_b64)


def reassemble(body_or_payload, signature: bytes) -> str:
    payload = body_or_payload if isinstance(body_or_payload, bytes) else canonical_bytes(body_or_payload)
    return f"{b64e(payload)}.{b64e(signature)}"


def altered(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    return value + "x"
