"""Ed25519 ticket keys (docs/guarantees.md, "Tickets"): rotation (sign with the new key, accept the
old until it is dropped), accepting a public key, the signing seed made from a secret, and
new_secret's fresh secrets."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, strategies as st
from nacl.signing import SigningKey

from countersign.core.tickets import Keyring, TicketError, key_id_of, new_secret, seed_from_secret
from tests.unit.tickets import CLAIMS, FAST, SECRET_B, b64d, b64e

# --- rotation ---------------------------------------------------------------------------------


def test_rotation_signs_with_new_and_accepts_old():
    new, old = new_secret(), new_secret()
    old_ring = Keyring.from_secrets([old])
    old_ticket = old_ring.sign(CLAIMS)

    rotated = Keyring.from_secrets([new, old])
    assert rotated.key_id == Keyring.from_secrets([new]).key_id != old_ring.key_id
    assert set(rotated.accepted_key_ids) == {rotated.key_id, old_ring.key_id}
    assert rotated.verify(old_ticket).key_id == old_ring.key_id

    new_ticket = rotated.sign(CLAIMS)
    assert rotated.verify(new_ticket).key_id == rotated.key_id
    with pytest.raises(TicketError):
        old_ring.verify(new_ticket)
    # once the old key is dropped its tickets stop verifying
    with pytest.raises(TicketError):
        Keyring.from_secrets([new]).verify(old_ticket)


def test_accept_adds_a_public_key(ring):
    other = Keyring.from_secrets([SECRET_B])
    ticket = other.sign(CLAIMS)
    with pytest.raises(TicketError):
        ring.verify(ticket)
    ring.accept(other.public_key())
    assert ring.verify(ticket).key_id == other.key_id
    assert ring.key_id == key_id_of(ring.public_key())  # still signs with its own key


# --- seed_from_secret -------------------------------------------------------------------------


def test_seed_from_new_secret_is_used_as_is():
    secret = new_secret()
    assert len(secret) == 43
    raw = b64d(secret)
    assert len(raw) == 32
    assert seed_from_secret(secret) == raw
    assert seed_from_secret(secret + "=") == raw
    assert seed_from_secret(f"  {secret}\n") == raw
    ring = Keyring.from_secrets([secret])
    assert bytes(ring.public_key()) == bytes(SigningKey(raw).verify_key)


@pytest.mark.parametrize(
    "secret",
    [
        "hello",
        "",
        "correct horse battery staple",
        b64e(b"x" * 31),
        b64e(b"x" * 33),
        "arn:aws:secretsmanager:eu-west-1:1:secret:k",
    ],
)
def test_seed_from_other_strings_is_hashed(secret):
    assert seed_from_secret(secret) == hashlib.sha256(secret.strip().encode("utf-8")).digest()


@FAST
@given(st.text())
def test_seed_from_any_string_is_32_bytes_and_deterministic(secret):
    seed = seed_from_secret(secret)
    assert len(seed) == 32
    assert seed == seed_from_secret(secret)
    if seed != b64d_or_none(secret.strip()):
        assert seed == hashlib.sha256(secret.strip().encode("utf-8")).digest()


def b64d_or_none(text):
    try:
        return b64d(text)
    except ValueError:  # binascii.Error, or a non-ASCII string
        return None


def test_new_secret_is_fresh():
    assert len({new_secret() for _ in range(50)}) == 50
