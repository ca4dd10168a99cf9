"""How a secret is kept: never in the clear, only as its SHA-256 hash.

Connection tokens, sign-in tokens, sessions, confirmation codes, OAuth codes and tokens and
WebAuthn challenges are all stored and looked up by :func:`secret_hash` of themselves.
"""

from __future__ import annotations

import hashlib


def secret_hash(secret: str) -> str:
    """The only form in which a token, session id or code is stored."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()
