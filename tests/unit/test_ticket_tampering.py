"""Ed25519 tickets (docs/guarantees.md, "Tickets"): a genuine ticket altered in any way is refused:
a claim or its type, the key id, the signature (another key's, another ticket's, one bit), a key
not in the keyring, and genuinely signed payloads that are not canonical or carry an extra claim."""

from __future__ import annotations

import json

import pytest
from nacl.signing import SigningKey

from countersign.core.canonical import canonical_bytes
from countersign.core.tickets import TICKET_VERSION, Keyring, TicketError, seed_from_secret
from tests.unit.tickets import CLAIMS, FIELDS, SECRET_A, SECRET_B, altered, reassemble, split


@pytest.mark.parametrize("field", FIELDS)
def test_altering_any_single_claim_is_refused(ring, field):
    body, _, signature = split(ring.sign(CLAIMS))
    body[field] = altered(body[field])
    with pytest.raises(TicketError):
        ring.verify(reassemble(body, signature))


@pytest.mark.parametrize("field", FIELDS)
def test_altering_any_claim_type_is_refused(ring, field):
    body, _, signature = split(ring.sign(CLAIMS))
    body[field] = str(body[field]) if isinstance(body[field], int) else 12345
    with pytest.raises(TicketError):
        ring.verify(reassemble(body, signature))


def test_switching_key_id_to_another_accepted_key_is_refused():
    ring = Keyring.from_secrets([SECRET_A, SECRET_B])
    body, _, signature = split(ring.sign(CLAIMS))
    other = [k for k in ring.accepted_key_ids if k != ring.key_id]
    assert len(other) == 1
    body["key_id"] = other[0]
    with pytest.raises(TicketError):
        ring.verify(reassemble(body, signature))


def test_signature_from_another_key_is_refused(ring):
    _, payload, _ = split(ring.sign(CLAIMS))  # claims carry ring's key_id
    forged = SigningKey(seed_from_secret(SECRET_B)).sign(payload).signature
    with pytest.raises(TicketError, match="signature"):
        ring.verify(reassemble(payload, forged))


def test_signature_of_other_claims_is_refused(ring):
    _, payload_a, _ = split(ring.sign(CLAIMS))
    _, _, signature_b = split(ring.sign(dict(CLAIMS, card_id="card_02")))
    with pytest.raises(TicketError):
        ring.verify(reassemble(payload_a, signature_b))


def test_flipping_a_signature_bit_is_refused(ring):
    _, payload, signature = split(ring.sign(CLAIMS))
    for i in (0, 31, 63):
        bad = bytearray(signature)
        bad[i] ^= 1
        with pytest.raises(TicketError):
            ring.verify(reassemble(payload, bytes(bad)))


def test_ticket_from_a_key_not_in_the_keyring_is_refused(ring):
    stranger = Keyring.from_secrets([SECRET_B])
    ticket = stranger.sign(CLAIMS)
    assert stranger.verify(ticket).key_id == stranger.key_id
    with pytest.raises(TicketError, match="not accepted"):
        ring.verify(ticket)


def test_non_canonical_payload_is_refused_even_when_genuinely_signed(ring):
    body = dict(CLAIMS, v=TICKET_VERSION, key_id=ring.key_id)
    loose = json.dumps(body, indent=1).encode("utf-8")
    assert loose != canonical_bytes(body)
    signature = SigningKey(seed_from_secret(SECRET_A)).sign(loose).signature
    with pytest.raises(TicketError, match="canonical"):
        ring.verify(reassemble(loose, signature))


def test_extra_claim_is_refused_even_when_genuinely_signed(ring):
    body = dict(CLAIMS, v=TICKET_VERSION, key_id=ring.key_id, role="owner")
    payload = canonical_bytes(body)
    signature = SigningKey(seed_from_secret(SECRET_A)).sign(payload).signature
    with pytest.raises(TicketError):
        ring.verify(reassemble(payload, signature))
