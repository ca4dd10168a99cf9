"""Canonical JSON and the fingerprint of a subject (docs/guarantees.md, "The fingerprint").

The fingerprint must not depend on the order in which an agent listed its changes, so every
list inside the subject is sorted by the canonical JSON of its elements before hashing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

# One encoder for the process: ``json.dumps`` with these options builds a new one at every call,
# and what it returns is this encoder's ``encode`` (it keeps no state between calls).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_json(value: Any) -> str:
    """Keys sorted, no insignificant whitespace, non-ASCII kept as UTF-8 text."""
    return _ENCODER.encode(value)


def canonical_bytes(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def _order_free(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _order_free(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_order_free(v) for v in value]
        return sorted(items, key=canonical_json)
    return value


def fingerprint(scope_id: str, subject: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``[scope_id, subject]`` with every list sorted."""
    return hashlib.sha256(canonical_bytes([scope_id, _order_free(subject)])).hexdigest()


def json_copy(value: Any) -> Any:
    """A copy of plain JSON data (dicts, lists and scalars) as deep as ``copy.deepcopy``'s, at a
    third of its cost: what a store reads is plain JSON, with no cycles or shared parts to keep."""
    if type(value) is dict:
        return {k: json_copy(v) for k, v in value.items()}
    if type(value) is list:
        return [json_copy(v) for v in value]
    return value


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """A copy of plain JSON data with ``fn`` applied to every string in it, keys included."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {fn(str(k)): map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    return value


def digest(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``value`` (order of lists kept)."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


# -- what a ticket, a passkey's statement and a receipt bind -----------------------------------------


def subject_fingerprint(workspace_id: str, tool: str, subject: Any) -> str:
    """The request's fingerprint (docs/guarantees.md); the subject names its tool so two actions never share one."""
    return fingerprint(workspace_id, {"tool": tool, "change": subject})


def arguments_digest(tool: str, arguments: dict) -> str:
    return digest({"tool": tool, "arguments": arguments})


def preview_digest(title: str, lines: tuple[str, ...] | list[str], sections: tuple | list = ()) -> str:
    """What a ticket binds of the preview: the title, every line and, when the card has any, its
    sections (:class:`~countersign.core.preview.Preview`), exactly as shown. A card without
    sections is bound as it always was (its digest does not name them)."""
    shown: dict[str, Any] = {"title": title, "lines": list(lines)}
    if sections:
        shown["sections"] = list(sections)
    return digest(shown)
