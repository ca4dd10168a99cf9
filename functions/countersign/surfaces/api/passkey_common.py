"""What the passkey routes share: the relying party, and the challenges and assertions of
:mod:`countersign.identity.passkeys.challenges` said over HTTP (a refusal is a 400
``passkey_refused``, someone else's passkey a 403 ``passkey_not_yours``). Imports py_webauthn
(through :mod:`countersign.identity.passkeys.ceremony`): only the confirm API loads this, never
the MCP function."""

from __future__ import annotations

from typing import Any

from ...identity.passkeys import challenges
from ...identity.passkeys.ceremony import PasskeyError, RelyingParty
from ...identity.passkeys.challenges import CHALLENGE_TTL, NotYours
from ...runtime import Runtime
from ...store.passkeys import Passkey, PasskeyChallenge
from .errors import ApiError

FAILED = ("Your passkey was not accepted: {why} Try again, or use another passkey or the email link.")


def relying_party(runtime: Runtime) -> RelyingParty:
    return RelyingParty.of(runtime.desk.settings.public_url)


def issue(runtime: Runtime, purpose: str, workspace_id: str = "", person_id: str = "", *,
          challenge: bytes | None = None, ttl: int = CHALLENGE_TTL, card_id: str = "", statement: str = "") -> bytes:
    """A fresh challenge, stored (by hash) for one use until ``now + ttl``."""
    return challenges.issue(runtime.store.passkeys, purpose, runtime.desk.now(), workspace_id, person_id,
                            challenge=challenge, ttl=ttl, card_id=card_id, statement=statement)


def refused(why: str, status: int = 400, code: str = "passkey_refused") -> ApiError:
    return ApiError(status, code, FAILED.format(why=why))


def spend(runtime: Runtime, credential: Any, purpose: str) -> tuple[PasskeyChallenge, bytes]:
    """The challenge this response answers, spent now (so a replay finds nothing)."""
    try:
        return challenges.spend(runtime.store.passkeys, credential, purpose, runtime.desk.now())
    except PasskeyError as exc:
        raise refused(str(exc)) from None


def check(runtime: Runtime, credential: Any, challenge: bytes, person: tuple[str, str] | None) -> Passkey:
    """Verify an assertion; ``person`` (workspace, person): it must be one of theirs."""
    try:
        return challenges.check(runtime.store.passkeys, relying_party(runtime), credential, challenge, person,
                                runtime.desk.now())
    except NotYours as exc:
        raise refused(str(exc), 403, "passkey_not_yours") from None
    except PasskeyError as exc:
        raise refused(str(exc)) from None
