"""Ed25519 tickets (docs/guarantees.md, "Tickets"): signing and verifying, the wire form, the key id,
and the claims sign refuses (missing, extra, wrongly typed)."""

from __future__ import annotations

import hashlib

import pytest

from countersign.core.canonical import canonical_bytes
from countersign.core.tickets import TICKET_VERSION, Keyring, TicketClaims, key_id_of
from tests.unit.tickets import CLAIMS, FIELDS, SECRET_B, split


def test_sign_verify_round_trip(ring):
    ticket = ring.sign(CLAIMS)
    claims = ring.verify(ticket)
    assert isinstance(claims, TicketClaims)
    assert claims.to_dict() == dict(CLAIMS, v=TICKET_VERSION, key_id=ring.key_id)
    assert set(claims.to_dict()) == {
        "v", "card_id", "workspace", "person", "connection", "tool", "fingerprint",
        "arguments_digest", "preview_digest", "issued_at", "expires_at", "key_id",
    }


def test_ticket_wire_form_is_canonical_claims_and_signature(ring):
    ticket = ring.sign(CLAIMS)
    body, payload, signature = split(ticket)
    assert payload == canonical_bytes(body)
    assert body["key_id"] == ring.key_id and body["v"] == TICKET_VERSION
    assert len(signature) == 64
    ring.public_key().verify(payload, signature)  # raises if not a genuine Ed25519 signature
    assert "=" not in ticket


def test_key_id_is_present_and_derived_from_the_public_key(ring):
    assert ring.key_id == hashlib.sha256(bytes(ring.public_key())).hexdigest()[:16]
    assert ring.key_id == key_id_of(ring.public_key())
    assert ring.verify(ring.sign(CLAIMS)).key_id == ring.key_id
    assert Keyring.from_secrets([SECRET_B]).key_id != ring.key_id


def test_sign_overrides_caller_v_and_key_id(ring):
    claims = ring.verify(ring.sign(dict(CLAIMS, v=99, key_id="forged")))
    assert claims.v == TICKET_VERSION and claims.key_id == ring.key_id


@pytest.mark.parametrize("missing", [f for f in FIELDS if f not in ("v", "key_id")])
def test_sign_refuses_missing_claim(ring, missing):
    claims = {k: v for k, v in CLAIMS.items() if k != missing}
    with pytest.raises(TypeError):
        ring.sign(claims)


def test_sign_refuses_extra_claim(ring):
    with pytest.raises(TypeError):
        ring.sign(dict(CLAIMS, role="owner"))


@pytest.mark.parametrize(
    "field, bad", [("issued_at", "1790000000"), ("expires_at", 1.5), ("card_id", 7), ("issued_at", True)]
)
def test_sign_refuses_wrong_claim_types(ring, field, bad):
    with pytest.raises(TypeError):
        ring.sign(dict(CLAIMS, **{field: bad}))


def test_keyring_needs_a_key():
    with pytest.raises(ValueError):
        Keyring([])
