"""WebAuthn ceremonies with py_webauthn 3.x: options to send, responses to verify.

py_webauthn's defaults are weak for this use, so every call here sets them (docs/passkeys.md):
user verification required on both ceremonies, discoverable (resident) keys, ES256 and RS256 only
(each verified by :mod:`.receipts` too), and two checks py_webauthn 3.0.1 does not make itself:
``clientDataJSON.crossOrigin`` must not be true, and an assertion's ``userHandle`` must be the
one its passkey was registered with. Sign counts are recorded but never relied on: synced
passkeys report 0; replay is stopped by the single-use challenge.

py_webauthn (with pyOpenSSL and cryptography behind it) is imported by the ceremonies that use it,
not with this module: the confirm API imports this at cold start, and most of its requests are
clicks and page loads that make no ceremony.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ...core.statement import b64u, unb64u
from ...store.passkeys import Passkey

TIMEOUT_MS = 120_000


def algorithms() -> list[Any]:
    """ES256 and RS256, the only ones accepted (and the only ones :mod:`.receipts` verifies)."""
    # py_webauthn loads with the first ceremony, not at the confirm API's cold start (module docstring)
    from webauthn.helpers.cose import COSEAlgorithmIdentifier

    return [COSEAlgorithmIdentifier.ECDSA_SHA_256, COSEAlgorithmIdentifier.RSASSA_PKCS1_v1_5_SHA_256]


class PasskeyError(Exception):
    """A WebAuthn response that does not verify; the message is for the person (and the audit)."""


@dataclass(frozen=True)
class RelyingParty:
    """RP ID = the public host (``localhost`` locally); origin = the public origin with its port."""

    rp_id: str
    origin: str
    name: str = "countersign"

    @classmethod
    def of(cls, public_url: str) -> RelyingParty:
        parts = urlsplit(public_url)
        return cls(rp_id=(parts.hostname or "localhost").lower(), origin=f"{parts.scheme}://{parts.netloc}".lower())


@dataclass(frozen=True)
class Registered:
    credential_id: str
    public_key: str
    sign_count: int
    transports: tuple[str, ...]


def _json(options: Any) -> dict[str, Any]:
    # py_webauthn loads with the first ceremony, not at the confirm API's cold start (module docstring)
    from webauthn import options_to_json

    return json.loads(options_to_json(options))


def registration_options(rp: RelyingParty, challenge: bytes, user_handle: bytes, user_name: str,
                         display_name: str, existing: list[str]) -> dict[str, Any]:
    # py_webauthn loads with the first ceremony, not at the confirm API's cold start (module docstring)
    from webauthn import generate_registration_options
    from webauthn.helpers.structs import (
        AuthenticatorSelectionCriteria,
        PublicKeyCredentialDescriptor,
        ResidentKeyRequirement,
        UserVerificationRequirement,
    )

    return _json(generate_registration_options(
        rp_id=rp.rp_id, rp_name=rp.name, user_id=user_handle, user_name=user_name, user_display_name=display_name,
        challenge=challenge, timeout=TIMEOUT_MS, supported_pub_key_algs=algorithms(),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, require_resident_key=True,
            user_verification=UserVerificationRequirement.REQUIRED),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=unb64u(c)) for c in existing],
    ))


def authentication_options(rp: RelyingParty, challenge: bytes, allow: list[str] | None = None) -> dict[str, Any]:
    """``allow`` None: a discoverable sign-in (no credentials listed, no username asked)."""
    # py_webauthn loads with the first ceremony, not at the confirm API's cold start (module docstring)
    from webauthn import generate_authentication_options
    from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement

    return _json(generate_authentication_options(
        rp_id=rp.rp_id, challenge=challenge, timeout=TIMEOUT_MS,
        allow_credentials=[PublicKeyCredentialDescriptor(id=unb64u(c)) for c in (allow or [])],
        user_verification=UserVerificationRequirement.REQUIRED,
    ))


def client_data(credential: Any) -> tuple[bytes, dict[str, Any]]:
    """The clientDataJSON bytes exactly as received, and what they say. :class:`PasskeyError` if unreadable."""
    try:
        raw = unb64u(credential["response"]["clientDataJSON"])
        parsed = json.loads(raw)
        if not isinstance(parsed, dict):
            raise ValueError("not an object")
        return raw, parsed
    except Exception as exc:  # any shape of bad input (KeyError, TypeError, binascii.Error, ValueError...)
        raise PasskeyError("The passkey's answer could not be read.") from exc


def _not_cross_origin(credential: Any) -> None:
    if client_data(credential)[1].get("crossOrigin") is True:
        raise PasskeyError("The passkey answered for a page embedded in another site.")


def verify_registration(rp: RelyingParty, credential: Any, challenge: bytes) -> Registered:
    # py_webauthn loads with the first ceremony, not at the confirm API's cold start (module docstring)
    from webauthn import verify_registration_response

    _not_cross_origin(credential)
    try:
        verified = verify_registration_response(
            credential=credential, expected_challenge=challenge, expected_rp_id=rp.rp_id,
            expected_origin=rp.origin, require_user_verification=True, supported_pub_key_algs=algorithms())
    except Exception as exc:  # py_webauthn raises several types for bad bytes (pitfall 3)
        raise PasskeyError(f"The passkey could not be registered: {exc}") from exc
    transports = credential["response"].get("transports")  # (what a browser names: usb, internal, hybrid…)
    if not isinstance(transports, list):
        transports = []
    return Registered(b64u(verified.credential_id), b64u(verified.credential_public_key), verified.sign_count,
                      tuple(str(t) for t in transports if isinstance(t, str))[:8])


def credential_id_of(credential: Any) -> str:
    try:
        raw = credential["rawId"]
        unb64u(raw)
        if not isinstance(raw, str) or not raw or len(raw) > 1400:
            raise ValueError
        return raw
    except Exception as exc:
        raise PasskeyError("The passkey's answer could not be read.") from exc


def verify_assertion(rp: RelyingParty, credential: Any, challenge: bytes, passkey: Passkey) -> int:
    """Check an assertion made by ``passkey`` over ``challenge``: origin, RP ID, user presence and
    verification, signature, not cross-origin, the userHandle. Returns the new sign count."""
    # py_webauthn loads with the first ceremony, not at the confirm API's cold start (module docstring)
    from webauthn import verify_authentication_response

    _not_cross_origin(credential)
    handle = (credential.get("response") or {}).get("userHandle")
    if handle is not None and handle != passkey.user_handle:
        raise PasskeyError("This passkey belongs to someone else.")
    try:
        verified = verify_authentication_response(
            credential=credential, expected_challenge=challenge, expected_rp_id=rp.rp_id, expected_origin=rp.origin,
            credential_public_key=unb64u(passkey.public_key), credential_current_sign_count=passkey.sign_count,
            require_user_verification=True)
    except Exception as exc:
        raise PasskeyError(f"The passkey's signature was refused: {exc}") from exc
    return int(verified.new_sign_count)
