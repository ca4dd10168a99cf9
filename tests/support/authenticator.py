"""A software passkey for API tests: an EC P-256 key that builds WebAuthn registration and
assertion responses byte for byte (authenticatorData, clientDataJSON, DER signature), so the
server's real py_webauthn verification runs on them. Knobs make it misbehave on purpose."""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, field

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from countersign.core.statement import b64u, unb64u

UP, UV, AT = 0x01, 0x04, 0x40


@dataclass
class SoftPasskey:
    rp_id: str
    origin: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    credential_id: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    user_handle: bytes | None = None
    sign_count: int = 0

    @property
    def id(self) -> str:
        return b64u(self.credential_id)

    def cose(self) -> bytes:
        n = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: n.x.to_bytes(32, "big"), -3: n.y.to_bytes(32, "big")})

    def _client_data(self, kind: str, challenge: str, origin: str | None, cross_origin: bool) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin or self.origin,
                           "crossOrigin": cross_origin}).encode()

    def register(self, options: dict, *, origin: str | None = None) -> dict:
        self.user_handle = unb64u(options["user"]["id"])
        auth_data = (hashlib.sha256(self.rp_id.encode()).digest() + bytes([UP | UV | AT]) + (0).to_bytes(4, "big")
                     + bytes(16) + len(self.credential_id).to_bytes(2, "big") + self.credential_id + self.cose())
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        cdj = self._client_data("webauthn.create", options["challenge"], origin, False)
        return {"id": self.id, "rawId": self.id, "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64u(cdj), "attestationObject": b64u(attestation),
                             "transports": ["internal"]}}

    def assert_(self, options: dict, *, origin: str | None = None, rp_id: str | None = None, uv: bool = True,
                cross_origin: bool = False, user_handle: bytes | None = None, challenge: str | None = None) -> dict:
        self.sign_count += 1
        flags = UP | (UV if uv else 0)
        auth_data = (hashlib.sha256((rp_id or self.rp_id).encode()).digest() + bytes([flags])
                     + self.sign_count.to_bytes(4, "big"))
        cdj = self._client_data("webauthn.get", challenge or options["challenge"], origin, cross_origin)
        signature = self.key.sign(auth_data + hashlib.sha256(cdj).digest(), ec.ECDSA(hashes.SHA256()))
        handle = user_handle if user_handle is not None else self.user_handle
        return {"id": self.id, "rawId": self.id, "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64u(cdj), "authenticatorData": b64u(auth_data),
                             "signature": b64u(signature), "userHandle": b64u(handle) if handle else None}}
