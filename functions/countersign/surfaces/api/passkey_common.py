"""What the passkey routes share: the relying party, issuing and spending challenges, and
checking one assertion against a person's passkeys. Imports py_webauthn (through
:mod:`countersign.identity.passkeys.ceremony`): only the confirm API loads this, never the MCP function."""

from __future__ import annotations

import secrets
from typing import Any

from ...core.statement import b64u, challenge_hash, unb64u
from ...identity.passkeys.ceremony import PasskeyError, RelyingParty, client_data, credential_id_of, verify_assertion
from ...runtime import Runtime
from ...store.records import Passkey, PasskeyChallenge
from .errors import ApiError

CHALLENGE_TTL = 300  # registration, sign-in and removal; a confirmation's is shorter (statement.CONFIRM_TTL)
FAILED = ("Your passkey was not accepted: {why} Try again, or use another passkey or the email link.")


def relying_party(runtime: Runtime) -> RelyingParty:
    return RelyingParty.of(runtime.desk.settings.public_url)


def issue(runtime: Runtime, purpose: str, workspace_id: str = "", person_id: str = "", *,
          challenge: bytes | None = None, ttl: int = CHALLENGE_TTL, card_id: str = "", statement: str = "") -> bytes:
    """A fresh challenge, stored (by hash) for one use until ``now + ttl``."""
    raw = challenge if challenge is not None else secrets.token_bytes(32)
    runtime.store.put_passkey_challenge(PasskeyChallenge(
        challenge_hash=challenge_hash(raw), purpose=purpose, workspace_id=workspace_id, person_id=person_id,
        challenge=b64u(raw), expires_at=runtime.desk.now() + ttl, card_id=card_id, statement=statement))
    return raw


def refused(why: str, status: int = 400, code: str = "passkey_refused") -> ApiError:
    return ApiError(status, code, FAILED.format(why=why))


def spend(runtime: Runtime, credential: Any, purpose: str) -> tuple[PasskeyChallenge, bytes]:
    """The challenge this response answers, spent now (so a replay finds nothing)."""
    try:
        raw, data = client_data(credential)
        challenge = unb64u(data["challenge"])
    except (PasskeyError, KeyError, TypeError, ValueError):
        raise refused("its answer could not be read.") from None
    record = runtime.store.take_passkey_challenge(challenge_hash(challenge), runtime.desk.now())
    if record is None or record.purpose != purpose:
        raise refused("it answered a challenge that is unknown, used already or expired.")
    return record, challenge


def check(runtime: Runtime, credential: Any, challenge: bytes, person: tuple[str, str] | None) -> Passkey:
    """Verify an assertion; ``person`` (workspace, person): it must be one of theirs."""
    try:
        passkey = runtime.store.get_passkey(credential_id_of(credential))
    except PasskeyError as exc:
        raise refused(str(exc)) from None
    if passkey is None:
        raise refused("this passkey is not registered (it may have been removed).")
    if person is not None and (passkey.workspace_id, passkey.person_id) != person:
        raise refused("this passkey belongs to someone else.", 403, "passkey_not_yours")
    try:
        count = verify_assertion(relying_party(runtime), credential, challenge, passkey)
    except PasskeyError as exc:
        raise refused(str(exc)) from None
    runtime.store.note_passkey_use(passkey.credential_id, count, runtime.desk.now())
    return passkey
