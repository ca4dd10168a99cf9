"""Times as the agent, the API and the CLI read them."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(ts: int) -> str:
    """``ts`` (seconds since the epoch) as ISO 8601 in UTC, to the second: ``2026-12-05T09:30:00Z``."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
