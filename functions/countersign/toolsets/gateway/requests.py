"""What the CLI and the Settings page need of the gateway to file an upstream change: headers
parsed from the lines a person typed, and the view of an upstream that may be shown — never a
credential, sealed or not. Filing the change, through the gate's desk, is
:mod:`countersign.surfaces.upstream_requests`."""

from __future__ import annotations

from typing import Any

from ...core.preview import plain_line
from .config import Upstream


def parse_headers(lines: list[str]) -> dict[str, str]:
    """``Name: value`` lines as headers. A line that is not one is refused without its text, which
    may be a credential typed without its colon (``Authorization Bearer sk-…``)."""
    headers = {}
    for number, line in enumerate(lines, 1):
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"header {number} is not 'Name: value' (no name before a ':'); it is not shown here, "
                             "as it may hold a credential")
        headers[name.strip()] = value.strip()
    return headers


def view(upstream: Upstream) -> dict[str, Any]:
    return {
        "name": upstream.name, "transport": upstream.transport, "where": upstream.where,
        "credential": bool(upstream.sealed),
        "tools": [{"name": plain_line(f"{upstream.name}__{n}"), "class": p.cls, "title": plain_line(p.title),
                   "witness": [w.to_dict() for w in p.witness]} for n, p in sorted(upstream.tools.items())],
    }
