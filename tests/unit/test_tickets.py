"""Ed25519 tickets (docs/guarantees.md, "Tickets"): sign, verify, rotation, tampering, malformed input."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from nacl.signing import SigningKey

from countersign.core.canonical import canonical_bytes
from countersign.core.tickets import (
    TICKET_VERSION,
    Keyring,
    TicketClaims,
    TicketError,
    key_id_of,
    new_secret,
    seed_from_secret,
    ticket_matches,
)

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


@pytest.fixture
def ring() -> Keyring:
    return Keyring.from_secrets([SECRET_A])


def altered(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    return value + "x"


# --- round trip -------------------------------------------------------------------------------


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


# --- tampering --------------------------------------------------------------------------------


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


# --- malformed tickets ------------------------------------------------------------------------


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


# --- ticket_matches ---------------------------------------------------------------------------


def test_ticket_matches_no_difference(ring):
    claims = ring.verify(ring.sign(CLAIMS))
    assert ticket_matches(claims, dict(CLAIMS)) == []
    assert ticket_matches(claims, {}) == []


@pytest.mark.parametrize("field", FIELDS)
def test_ticket_matches_names_each_differing_field(ring, field):
    claims = ring.verify(ring.sign(CLAIMS))
    expected = dict(claims.to_dict())
    expected[field] = altered(expected[field])
    assert ticket_matches(claims, expected) == [field]


def test_ticket_matches_names_several_fields_sorted(ring):
    claims = ring.verify(ring.sign(CLAIMS))
    stored = dict(CLAIMS, tool="delete_everything", fingerprint="0" * 64, workspace="ws_2")
    assert ticket_matches(claims, stored) == ["fingerprint", "tool", "workspace"]


def test_ticket_matches_is_type_strict(ring):
    claims = ring.verify(ring.sign(CLAIMS))
    assert ticket_matches(claims, {"issued_at": str(CLAIMS["issued_at"])}) == ["issued_at"]
