"""How mail previews and errors word things: quoted names, credits, counts, addresses, and which
document a moved version names."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from ...core.preview import money
from .kinds import (
    KIND_CAMPAIGN,
    KIND_CONTACT,
    KIND_DESIGN,
    KIND_JOB,
    KIND_LEDGER,
    KIND_LIST,
    KIND_PROFILE,
    KIND_SENDER,
    KIND_SUPPRESSION,
    NOUN,
    PIECES_PREFIX,
)


def q(name: Any) -> str:
    """A name as previews quote it: ‘Q4 outreach’."""
    return f"‘{name}’"

def credits(milli: int) -> str:
    return f"{money(milli)} credits"

def published_lines(published: list[dict] | None) -> list[str]:
    """An outcome's line per draft design a write published first (its ``published`` result)."""
    return [f"Published design {q(p['name'])} version {p['version']}" for p in published or []]

def count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"

def digest(values: Iterable[str]) -> str:
    h = hashlib.sha256()
    for v in sorted(values):
        h.update(v.encode("utf-8") + b"\0")
    return h.hexdigest()[:32]

def format_counts(by_format: dict[str, int]) -> str:
    parts = [count(n, NOUN[fmt]) for fmt, n in sorted(by_format.items()) if n]
    return ", ".join(parts) if parts else "no pieces"

def address_line(address: dict | None) -> str:
    if not address:
        return "(none)"
    region_postal = " ".join(p for p in (address.get("region"), address.get("postal_code")) if p)
    parts = [address.get("name"), address.get("line1"), address.get("line2"), address.get("city"), region_postal,
             address.get("country")]
    return ", ".join(p for p in parts if p)

def email_domain(email: str | None) -> str:
    return (email or "").rpartition("@")[2].strip().lower()

def first_name(name: str) -> str:
    return (name or "").strip().split(" ")[0] if name else ""

def recipients_line(pieces: list[dict], limit: int = 3) -> str:
    names = sorted({p.get("name", "") for p in pieces})
    shown = ", ".join(names[:limit])
    more = len(names) - limit
    return shown + (f" and {more} more" if more > 0 else "")

def label(kind: str, data: dict) -> str:
    name = data.get("name")
    return {
        KIND_CAMPAIGN: f"the campaign {q(name)}",
        KIND_DESIGN: f"the design {q(name)}",
        KIND_CONTACT: f"the contact {q(name)}",
        KIND_LIST: f"the list {q(name)}",
        KIND_SENDER: f"the sender {q(name)}",
        KIND_LEDGER: "the credit balance",
        KIND_PROFILE: "the workspace profile",
        KIND_SUPPRESSION: "the suppression list",
        KIND_JOB: "the print queue",
    }.get(kind, "the pieces of a campaign" if kind.startswith(PIECES_PREFIX) else kind)
