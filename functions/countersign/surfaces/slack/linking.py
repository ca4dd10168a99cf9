"""The one-time codes that link a person's Slack user: made in Settings, sent to the bot as
``/countersign link CODE``.

Eight characters from an alphabet without look-alikes (shown ``ABCD-EFGH``: about 40 bits), valid
for :data:`CODE_TTL` seconds, spent by their first use, stored only as their hash, never logged.
A Slack user may try :data:`TRIES` codes per :data:`TRIES_WINDOW` seconds.
"""

from __future__ import annotations

import secrets

from ...store.hashes import secret_hash

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
CODE_TTL = 600
TRIES, TRIES_WINDOW = 10, 600


def new_link_code() -> str:
    """A fresh code as the person reads it: ``ABCD-EFGH``."""
    raw = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
    return f"{raw[:4]}-{raw[4:]}"


def link_code_hash(code: str) -> str:
    """What the store keeps and looks a code up by: the hash of the code as typed, in capitals,
    without spaces or dashes (``abcd efgh`` is ``ABCD-EFGH``)."""
    normal = "".join(c for c in code.upper() if c not in " -")
    return secret_hash("slack-link:" + normal)
