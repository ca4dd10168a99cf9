"""How a person's edit of a card is put into words: for the audit trail, and for the agent
(docs/policy.md, "Edit, then approve"). Pure shaping, used by :mod:`.edits`, :mod:`.runner` and
:mod:`.replies`."""

from __future__ import annotations

from typing import Any


def describe(changes: list[dict[str, Any]]) -> str:
    """``credits to buy 120 → 80; …``: what an edit changed, for the audit trail."""
    return "; ".join(f"{c['label']} {c['from']} → {c['to']}" for c in changes) or "no value shown differently"


def edit_message(edited: dict[str, Any]) -> str:
    """What the agent is told of the edit behind a card: ``Ran with 80 instead of 120 (credits to
    buy), changed by Ana.``"""
    parts = [f"{c['to']} instead of {c['from']} ({c['label']})" for c in edited.get("changes", [])]
    what = "; ".join(parts) if parts else "the values the person set"
    return f"Ran with {what}, changed by {edited.get('byName') or 'the person'}."
