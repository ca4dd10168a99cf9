"""Passkey challenges and assertions against a person's passkeys: a challenge is issued for one
purpose, stored by its hash for one use, and spent by the response that answers it (so a replay
finds nothing); an assertion is verified against the registered passkey it names, which must be
the person's when a person is named. Every refusal is a :class:`PasskeyError` whose message is for
the person (:class:`NotYours` when the passkey is someone else's); the confirm API's routes say it
over HTTP (:mod:`countersign.surfaces.api.passkey_common`).
"""

from __future__ import annotations

import secrets
from typing import Any

from ...core.statement import b64u, challenge_hash, unb64u
from ...store.passkeys import Passkey, PasskeyChallenge, PasskeyStore
from .ceremony import PasskeyError, RelyingParty, client_data, credential_id_of, verify_assertion

CHALLENGE_TTL = 300  # registration, sign-in and removal; a confirmation's is shorter (statement.CONFIRM_TTL)


class NotYours(PasskeyError):
    """The assertion was made by a passkey of someone else than the person named."""


def issue(passkeys: PasskeyStore, purpose: str, now: int, workspace_id: str = "", person_id: str = "", *,
          challenge: bytes | None = None, ttl: int = CHALLENGE_TTL, card_id: str = "", statement: str = "") -> bytes:
    """A fresh challenge, stored (by hash) for one use until ``now + ttl``."""
    raw = challenge if challenge is not None else secrets.token_bytes(32)
    passkeys.put_passkey_challenge(PasskeyChallenge(
        challenge_hash=challenge_hash(raw), purpose=purpose, workspace_id=workspace_id, person_id=person_id,
        challenge=b64u(raw), expires_at=now + ttl, card_id=card_id, statement=statement))
    return raw


def spend(passkeys: PasskeyStore, credential: Any, purpose: str, now: int) -> tuple[PasskeyChallenge, bytes]:
    """The challenge this response answers, spent now (so a replay finds nothing)."""
    try:
        raw, data = client_data(credential)
        challenge = unb64u(data["challenge"])
    except (PasskeyError, KeyError, TypeError, ValueError):
        raise PasskeyError("its answer could not be read.") from None
    record = passkeys.take_passkey_challenge(challenge_hash(challenge), now)
    if record is None or record.purpose != purpose:
        raise PasskeyError("it answered a challenge that is unknown, used already or expired.")
    return record, challenge


def check(passkeys: PasskeyStore, rp: RelyingParty, credential: Any, challenge: bytes, person: tuple[str, str] | None,
          now: int) -> Passkey:
    """Verify an assertion and note its passkey's use; ``person`` (workspace, person): it must be
    one of theirs."""
    passkey = passkeys.get_passkey(credential_id_of(credential))
    if passkey is None:
        raise PasskeyError("this passkey is not registered (it may have been removed).")
    if person is not None and (passkey.workspace_id, passkey.person_id) != person:
        raise NotYours("this passkey belongs to someone else.")
    count = verify_assertion(rp, credential, challenge, passkey)
    passkeys.note_passkey_use(passkey.credential_id, count, now)
    return passkey
