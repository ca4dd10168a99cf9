"""Checks and conversions both stores share for passkeys (countersign.store.interface.PasskeyStore)."""

from __future__ import annotations

import unicodedata
from dataclasses import asdict
from typing import Any

from ..core.preview import one_line
from .errors import BadInput
from .records import Passkey, PasskeyChallenge

MAX_PASSKEY_NAME = 64


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
