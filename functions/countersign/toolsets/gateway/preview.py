"""What a person reads on the card of an upstream tool countersign does not understand: the
server, the tool and its title, then every argument, one per line, as plain text.

Values are shown as JSON (a string in quotes, so ``"5"`` and ``5`` differ), never as markup. A
long value is folded: its first characters, then how many more there are and a short digest, so
two values that differ only far down still read differently on the card. Witness reads are
shown the same way, under their own heading.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

FOLD = 240
MAX_LINES = 60  # arguments of a held call, each on a line of its own


def shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) <= FOLD:
        return text
    tail = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{text[:FOLD]}… ({len(text) - FOLD} more characters, sha256 {tail})"


def argument_lines(arguments: dict[str, Any]) -> list[str]:
    """A line per argument, every one (a held call carries at most :data:`MAX_LINES`)."""
    if not arguments:
        return ["No arguments."]
    return [f"{name}: {shown(value)}" for name, value in sorted(arguments.items())]


MAX_OUTCOME = 4000  # characters of an upstream's answer a card's outcome shows


def answer_lines(upstream: str, result: dict[str, Any]) -> list[str]:
    """A card's outcome for an upstream call: who answered, then its text, line breaks kept (the
    page shows them), cut after :data:`MAX_OUTCOME` characters."""
    text = result_text(result) if result.get("content") or "structuredContent" in result else ""
    if not text.strip():
        return [f"{upstream} ran it and answered nothing to show"]
    if len(text) > MAX_OUTCOME:
        text = f"{text[:MAX_OUTCOME]}… ({len(text) - MAX_OUTCOME} more characters)"
    return [f"{upstream} answered:", text]


def result_text(result: dict[str, Any]) -> str:
    """The text parts of an upstream result, joined (what an error or a witness said)."""
    parts = [c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"]
    if parts:
        return "\n".join(parts)
    if "structuredContent" in result:
        return json.dumps(result["structuredContent"], ensure_ascii=False, sort_keys=True)
    return json.dumps(result.get("content", []), ensure_ascii=False, sort_keys=True)
