"""Confirmation codes (docs/how-a-held-write-travels.md, "Confirmation codes"; docs/security.md).

A code is 11 URL-safe characters, valid for 600 s, spent on its first use even when it does not
match, and scoped to one fingerprint in one workspace (and to the tool and connection it was issued
to). The store keeps only its hash.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import TypeGuard

CODE_TTL_SECONDS = 600
CODE_PATTERN = re.compile(r"^[A-Za-z0-9_-]{11}$")
CODE_REFUSAL = (
    "This confirmation code is unknown, expired, already used, or was issued for different changes. "
    "Call again without confirmation to get a new preview."
)


def new_code() -> str:
    return secrets.token_urlsafe(8)


def code_hash(code: str) -> str:
    return hashlib.sha256(("countersign-code:" + code).encode("utf-8")).hexdigest()


def well_formed(code: object) -> TypeGuard[str]:
    return isinstance(code, str) and bool(CODE_PATTERN.fullmatch(code))  # `$` would accept a trailing newline


@dataclass(frozen=True)
class CodeRecord:
    """What is stored for a code: never the code itself."""

    code_hash: str
    workspace_id: str
    fingerprint: str
    expires_at: int
    arguments_digest: str = ""  # the call it was issued to: a digest of the tool and the connection
    issued_at: int = 0  # when the preview was shown: an answer never overrides a card decided since


def code_matches(record: CodeRecord | None, workspace_id: str, fingerprint: str, now: int) -> bool:
    """Whether a spent code record confirms ``fingerprint`` in ``workspace_id`` at ``now``."""
    return (
        record is not None
        and record.workspace_id == workspace_id
        and record.fingerprint == fingerprint
        and now < record.expires_at
    )
