"""What every mail action checks of its input before it plans: names, domains, and how many records
one step may write."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ...core.preview import one_line
from ...toolkit import MAX_DOC_WRITES, ActionError

DOMAIN_RE = re.compile(r"^(?=.{3,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def validate_name(value: str | None, field_name: str, limit: int = 120, *, multiline: bool = False) -> str:
    """``value`` as stored: a name (a contact's, a list's, a sender's...) is one line, its runs of
    spaces, tabs and line breaks made one space, as the budget toolset does with its names; a
    ``multiline`` text (a prompt, instructions) keeps its line breaks and tabs."""
    if any(ord(c) < 32 and c not in "\n\r\t" for c in value or ""):
        raise ActionError(f"{field_name}: contains control characters.", field=field_name)
    value = (value or "").strip() if multiline else one_line(value)
    if not value:
        raise ActionError(f"{field_name}: must not be empty.", field=field_name)
    if len(value) > limit:
        raise ActionError(f"{field_name}: at most {limit} characters.", field=field_name)
    return value


def check_https_url(value: str, field_name: str) -> None:
    """``value`` is an https:// URL with a host, and no space or control character anywhere in it."""
    parts = urlsplit(value) if value.isprintable() and not any(c.isspace() for c in value) else None
    if parts is None or parts.scheme != "https" or not parts.hostname or not value.startswith("https://"):
        raise ActionError(f"{field_name}: must be an https:// URL.", field=field_name)


def check_write_count(writes: int, what: str) -> None:
    if writes > MAX_DOC_WRITES:
        raise ActionError(f"{what} touches too many records at once ({writes}); split it into smaller steps.")
