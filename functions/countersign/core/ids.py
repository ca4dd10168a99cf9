"""Identifiers that sort by creation time (so "oldest first" is well defined) and cannot be guessed."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]  # every 10 bits as their two characters
_SHIFTS = tuple(range(120, -1, -10))  # the 130 bits of an id (50 of time, 80 random), 10 at a time
_TIME_MASK = (1 << 50) - 1


def new_id(prefix: str = "", now_ms: int | None = None) -> str:
    """``prefix`` + 10 time characters (ms) + 16 random characters (80 bits), each character 5 bits,
    most significant first (written two characters at a time)."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms & _TIME_MASK) << 80 | secrets.randbits(80)
    return prefix + "".join([_PAIRS[value >> shift & 1023] for shift in _SHIFTS])


def new_secret_token(prefix: str = "") -> str:
    """A bearer secret (connection token, sign-in token, session id): 256 bits."""
    return prefix + secrets.token_urlsafe(32)
