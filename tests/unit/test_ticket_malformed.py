"""Ed25519 tickets (docs/guarantees.md, "Tickets"): malformed input (not a ticket, bad base64, claims
of the wrong shape, missing or NaN claims, any text, bytes or JSON) raises TicketError and nothing else."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from countersign.core.tickets import TICKET_VERSION, Keyring, TicketError
from tests.unit.tickets import CLAIMS, FAST, FIELDS, SECRET_A, b64d, b64e, reassemble


def _genuine_payload_with(ring, **changes) -> str:
    body = {**CLAIMS, "v": TICKET_VERSION, "key_id": ring.key_id, **changes}
    payload = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return b64e(payload)


@pytest.fixture
def genuine_signature(ring) -> str:
    return ring.sign(CLAIMS).split(".")[1]


MALFORMED = [
    "",
    ".",
    "garbage",
    "no-dot-in-here",
    "a.b.c",
    "!!!.???",
    "é.é",
    "%%%%.%%%%",
    b64e(b"not json") + "." + b64e(b"x" * 64),
    b64e(b"\xff\xfe") + "." + b64e(b"x" * 64),
    b64e(b"[1,2,3]") + "." + b64e(b"x" * 64),
    b64e(b"42") + "." + b64e(b"x" * 64),
    b64e(b"null") + "." + b64e(b"x" * 64),
    b64e(b'{"a":NaN}') + "." + b64e(b"x" * 64),
    b64e(b"[" * 100_000) + "." + b64e(b"x" * 64),
]


@pytest.mark.parametrize("ticket", MALFORMED)
def test_malformed_tickets_raise_ticket_error_only(ring, ticket):
    with pytest.raises(TicketError):
        ring.verify(ticket)


@pytest.mark.parametrize("ticket", [None, 123, b"abc.def", ["a", "b"]])
def test_non_string_tickets_raise_ticket_error(ring, ticket):
    with pytest.raises(TicketError):
        ring.verify(ticket)


def test_bad_base64_is_refused(ring):
    payload_b64, sig_b64 = ring.sign(CLAIMS).split(".")
    for bad in (payload_b64 + "A", payload_b64[:-1], "A"):
        with pytest.raises(TicketError):
            ring.verify(f"{bad}.{sig_b64}")
    for bad in (sig_b64[:-1], sig_b64 + "A", sig_b64[:20], ""):
        with pytest.raises(TicketError):
            ring.verify(f"{payload_b64}.{bad}")


@pytest.mark.parametrize(
    "changes",
    [
        {"role": "owner"},  # extra claim
        {"key_id": ["not", "hashable"]},
        {"key_id": {"k": 1}},
        {"key_id": None},
        {"issued_at": "soon"},
        {"expires_at": 1.5},
        {"v": "1"},
    ],
)
def test_wrongly_shaped_claims_raise_ticket_error(ring, genuine_signature, changes):
    with pytest.raises(TicketError):
        ring.verify(f"{_genuine_payload_with(ring, **changes)}.{genuine_signature}")


@pytest.mark.parametrize("missing", FIELDS)
def test_missing_claim_raises_ticket_error(ring, genuine_signature, missing):
    body = dict(CLAIMS, v=TICKET_VERSION, key_id=ring.key_id)
    del body[missing]
    with pytest.raises(TicketError):
        ring.verify(reassemble(body, b64d(genuine_signature)))


def test_nan_claim_raises_ticket_error(ring, genuine_signature):
    body = json.dumps(dict(CLAIMS, v=TICKET_VERSION, key_id=ring.key_id, issued_at=float("nan"))).encode()
    with pytest.raises(TicketError):
        ring.verify(f"{b64e(body)}.{genuine_signature}")


@FAST
@given(st.text(max_size=200))
def test_any_text_raises_ticket_error_only(text):
    ring = Keyring.from_secrets([SECRET_A])
    with pytest.raises(TicketError):
        ring.verify(text)


@FAST
@given(st.binary(max_size=300), st.binary(max_size=100))
def test_any_bytes_raise_ticket_error_only(payload, signature):
    ring = Keyring.from_secrets([SECRET_A])
    with pytest.raises(TicketError):
        ring.verify(reassemble(payload, signature))


json_ish = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
    max_leaves=8,
)


@FAST
@given(st.sampled_from(FIELDS), json_ish, st.binary(min_size=0, max_size=80))
def test_claims_of_any_json_shape_raise_ticket_error_only(field, value, signature):
    ring = Keyring.from_secrets([SECRET_A])
    body = dict(CLAIMS, v=TICKET_VERSION, key_id=ring.key_id)
    body[field] = value
    payload = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    with pytest.raises(TicketError):
        ring.verify(reassemble(payload, signature))
