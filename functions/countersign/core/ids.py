"""Identifiers that sort by creation time (so "oldest first" is well defined) and cannot be guessed."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def _base32(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id(prefix: str = "", now_ms: int | None = None) -> str:
    """``prefix`` + 10 time characters (ms) + 16 random characters (80 bits)."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    return prefix + _base32(ms, 10) + _base32(secrets.randbits(80), 16)


def new_secret_token(prefix: str = "") -> str:
    """A bearer secret (connection token, sign-in token, session id): 256 bits."""
    return prefix + secrets.token_urlsafe(32)
