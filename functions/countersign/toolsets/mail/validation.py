"""What every mail action checks of its input before it plans: names, domains, and how many records
one step may write."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ...gate.actions import ActionError
from ...store.interface import MAX_DOC_WRITES

DOMAIN_RE = re.compile(r"^(?=.{3,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def validate_name(value: str | None, field_name: str, limit: int = 120) -> str:
    value = (value or "").strip()
    if not value:
        raise ActionError(f"{field_name}: must not be empty.", field=field_name)
    if len(value) > limit:
        raise ActionError(f"{field_name}: at most {limit} characters.", field=field_name)
    if any(ord(c) < 32 and c not in "\n\t" for c in value):
        raise ActionError(f"{field_name}: contains control characters.", field=field_name)
    return value


def check_https_url(value: str, field_name: str) -> None:
    """``value`` is an https:// URL with a host, and no space or control character anywhere in it."""
    parts = urlsplit(value) if value.isprintable() and not any(c.isspace() for c in value) else None
    if parts is None or parts.scheme != "https" or not parts.hostname or not value.startswith("https://"):
        raise ActionError(f"{field_name}: must be an https:// URL.", field=field_name)


def check_write_count(writes: int, what: str) -> None:
    if writes > MAX_DOC_WRITES:
        raise ActionError(f"{what} touches too many records at once ({writes}); split it into smaller steps.")
