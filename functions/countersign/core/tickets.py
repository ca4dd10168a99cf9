"""Ed25519 tickets (docs/guarantees.md, "Tickets").

A ticket is signed when a card is filed and stored with the card. Only the confirm API spends it,
after checking the signature with one of the accepted public keys (several key ids: rotation) and
checking that the card's stored fields still match what was signed.

Wire form: ``base64url(canonical JSON of the claims) "." base64url(signature)``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import asdict, dataclass, fields

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from .canonical import canonical_bytes

TICKET_VERSION = 2  # 2: the preview (title and lines) is bound too


class TicketError(Exception):
    """A ticket that is malformed, signed by an unknown key, forged or altered."""


def _b64e(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_id_of(verify_key: VerifyKey) -> str:
    return hashlib.sha256(bytes(verify_key)).hexdigest()[:16]


def seed_from_secret(secret: str) -> bytes:
    """A 32-byte Ed25519 seed from a configured secret.

    Base64 of exactly 32 bytes is used as is (what ``countersign keys`` prints); any other
    string (for example a secret Secrets Manager generated) is hashed into a seed.
    """
    secret = secret.strip()
    try:
        raw = _b64d(secret)
        if len(raw) == 32 and _b64e(raw) == secret.rstrip("="):
            return raw
    except (binascii.Error, ValueError):
        pass
    return hashlib.sha256(secret.encode("utf-8")).digest()


def is_signing_secret(secret: str) -> bool:
    """Whether ``secret`` is what ``countersign keys`` prints: base64url of exactly 32 bytes."""
    secret = secret.strip()
    try:
        raw = _b64d(secret)
    except (binascii.Error, ValueError):
        return False
    return len(raw) == 32 and _b64e(raw) == secret.rstrip("=")


def new_secret() -> str:
    return _b64e(bytes(SigningKey.generate()))


@dataclass(frozen=True)
class TicketClaims:
    v: int
    card_id: str
    workspace: str
    person: str
    connection: str
    tool: str
    fingerprint: str
    arguments_digest: str
    preview_digest: str
    issued_at: int
    expires_at: int
    key_id: str

    def to_dict(self) -> dict:
        return asdict(self)

    def check_types(self) -> None:
        """Raise :class:`TypeError` unless every claim has its declared type (int or str)."""
        for name, wanted in _CLAIM_TYPES:
            value = getattr(self, name)
            if not isinstance(value, wanted) or isinstance(value, bool):
                raise TypeError(f"claim {name} must be {wanted.__name__}")


# Each claim's name and type, in order (worked out once, not at every ticket).
_CLAIM_TYPES = tuple((f.name, int if f.type in (int, "int") else str) for f in fields(TicketClaims))


class Keyring:
    """One signing key and every public key accepted for verification."""

    def __init__(self, signing_seeds: list[bytes]):
        if not signing_seeds:
            raise ValueError("a keyring needs at least one signing key")
        self._signing = SigningKey(signing_seeds[0])
        self.key_id = key_id_of(self._signing.verify_key)
        self._verify: dict[str, VerifyKey] = {}
        for seed in signing_seeds:
            vk = SigningKey(seed).verify_key
            self._verify[key_id_of(vk)] = vk

    @classmethod
    def from_secrets(cls, secrets_: list[str]) -> Keyring:
        return cls([seed_from_secret(s) for s in secrets_])

    @property
    def accepted_key_ids(self) -> list[str]:
        return list(self._verify)

    def accept(self, verify_key: VerifyKey) -> None:
        """Also accept tickets signed by a key whose private half is elsewhere."""
        self._verify[key_id_of(verify_key)] = verify_key

    def public_key(self) -> VerifyKey:
        return self._signing.verify_key

    def sign(self, claims: dict) -> str:
        """Sign ``claims`` (everything but ``v`` and ``key_id``, which are added) into a ticket."""
        body = dict(claims, v=TICKET_VERSION, key_id=self.key_id)
        TicketClaims(**body).check_types()  # every field present, nothing extra, right types
        payload = canonical_bytes(body)
        signature = self._signing.sign(payload).signature
        return f"{_b64e(payload)}.{_b64e(signature)}"

    def seal(self, payload: bytes) -> str:
        """A detached Ed25519 signature (base64url) over ``payload`` with the signing key (receipts)."""
        return _b64e(self._signing.sign(payload).signature)

    def verify(self, ticket: str) -> TicketClaims:
        """The claims of a genuine ticket, or :class:`TicketError`."""
        try:
            payload_b64, sig_b64 = ticket.split(".")
            payload, signature = _b64d(payload_b64), _b64d(sig_b64)
            body = json.loads(payload.decode("utf-8"))
            claims = TicketClaims(**body)
            claims.check_types()
            canonical = canonical_bytes(body)
        except (ValueError, TypeError, AttributeError, binascii.Error, UnicodeDecodeError, RecursionError) as exc:
            raise TicketError("the ticket is malformed") from exc
        key = self._verify.get(claims.key_id)
        if key is None:
            raise TicketError("the ticket was signed by a key that is not accepted")
        if canonical != payload:
            raise TicketError("the ticket is not in canonical form")
        try:
            key.verify(payload, signature)
        except (BadSignatureError, ValueError) as exc:  # ValueError: a signature of the wrong length
            raise TicketError("the ticket's signature does not verify") from exc
        return claims


def ticket_matches(claims: TicketClaims, expected: dict) -> list[str]:
    """The names of the fields where a card's stored values differ from its ticket."""
    signed = claims.to_dict()
    return sorted(k for k, v in expected.items() if signed.get(k) != v)
