"""The passkeys role: persons' passkeys and the single-use WebAuthn challenges issued to them.

:class:`PasskeyStore` is the interface both stores implement; :class:`Passkey` and
:class:`PasskeyChallenge` its records; below them the checks and conversions both stores share.
The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
import unicodedata
from dataclasses import asdict, dataclass
from typing import Any

from ..core.preview import one_line
from .errors import BadInput

MAX_PASSKEY_NAME = 64


@dataclass(frozen=True)
class Passkey:
    """A person's registered WebAuthn credential (countersign.identity.passkeys). Ids and keys are
    base64url."""

    credential_id: str
    workspace_id: str
    person_id: str
    user_handle: str  # the user.id given at registration; an assertion's userHandle must equal it
    public_key: str  # COSE_Key, as verified at registration
    name: str
    created_at: int
    sign_count: int = 0
    last_used_at: int | None = None
    transports: tuple[str, ...] = ()


@dataclass(frozen=True)
class PasskeyChallenge:
    """A WebAuthn challenge the server issued: single use, short-lived, kept only by its hash.

    ``purpose`` is register, signin, remove or confirm; ``statement`` (confirm only) is the exact
    canonical JSON whose SHA-256 is the challenge. ``person_id`` is empty for a sign-in."""

    challenge_hash: str
    purpose: str
    workspace_id: str
    person_id: str
    challenge: str  # base64url of the challenge bytes
    expires_at: int
    card_id: str = ""
    statement: str = ""


class PasskeyStore(abc.ABC):
    """Passkeys (one record per credential, found by its id across workspaces for a discoverable
    sign-in) and the WebAuthn challenges the server issued (kept by hash, spent once)."""

    @abc.abstractmethod
    def put_passkey(self, passkey: Passkey) -> None:
        """Register; :class:`Conflict` if the credential id is registered already (to anyone)."""

    @abc.abstractmethod
    def get_passkey(self, credential_id: str) -> Passkey | None:
        """The passkey with this credential id, in any workspace; None if unknown or removed."""

    @abc.abstractmethod
    def list_passkeys(self, workspace_id: str, person_id: str) -> list[Passkey]:
        """The person's passkeys, oldest first."""

    @abc.abstractmethod
    def rename_passkey(self, workspace_id: str, person_id: str, credential_id: str, name: str) -> Passkey:
        """:class:`NotFound` unless it is this person's; :class:`BadInput` for an empty or long name."""

    @abc.abstractmethod
    def remove_passkey(self, workspace_id: str, person_id: str, credential_id: str) -> None:
        """:class:`NotFound` unless it is this person's. Its assertions are refused from then on."""

    @abc.abstractmethod
    def note_passkey_use(self, credential_id: str, sign_count: int, now: int) -> None:
        """Record the last use and the authenticator's counter (a removed passkey: no-op)."""

    @abc.abstractmethod
    def put_passkey_challenge(self, challenge: PasskeyChallenge) -> None: ...

    @abc.abstractmethod
    def take_passkey_challenge(self, challenge_hash: str, now: int) -> PasskeyChallenge | None:
        """Delete and return the challenge: the first call before expiry gets it, every later call
        (and any call after expiry) None. One conditional write."""


# -- checks and conversions ---------------------------------------------------------------------


def check_passkey_name(name: Any) -> str:
    """``name`` as it is kept: one line (each run of spaces and line breaks one space). Refused: an
    empty name, one over :data:`MAX_PASSKEY_NAME` characters, and control or formatting characters
    (escape sequences, bidi overrides: a name another reader would see rearranged), but for the
    joiners emoji and some scripts need."""
    if not isinstance(name, str) or not name.strip():
        raise BadInput("name", "a passkey needs a name; it must not be empty.")
    name = one_line(name)
    if len(name) > MAX_PASSKEY_NAME:
        raise BadInput("name", f"{len(name)} characters; a passkey name has at most {MAX_PASSKEY_NAME}.")
    if any(unicodedata.category(c) in ("Cc", "Cf") and c not in "\u200c\u200d" for c in name):
        raise BadInput("name", "a passkey name has no control or formatting characters (such as escapes or "
                               "right-to-left overrides).")
    return name


def passkey_fields(p: Passkey) -> dict[str, Any]:
    fields = asdict(p)
    fields["transports"] = list(p.transports)
    return fields


def passkey_from(v: dict[str, Any]) -> Passkey:
    names = ("credential_id", "workspace_id", "person_id", "user_handle", "public_key", "name", "created_at",
             "sign_count", "last_used_at")
    values: dict[str, Any] = {k: v.get(k) for k in names}
    return Passkey(**values, transports=tuple(v.get("transports") or ()))


def challenge_fields(c: PasskeyChallenge) -> dict[str, Any]:
    return asdict(c)


def challenge_from(v: dict[str, Any]) -> PasskeyChallenge:
    return PasskeyChallenge(**{k: v[k] for k in PasskeyChallenge.__dataclass_fields__ if k in v})
