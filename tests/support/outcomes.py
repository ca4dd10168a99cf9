"""How a test holds an action's outcome lines to a person's words (tests/unit/test_outcome_lines.py,
tests/gateway/test_outcomes.py)."""

from __future__ import annotations

import re
from typing import Any

from countersign.toolkit import Action


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _ids(value: Any, key: str = "") -> set[str]:
    """The ids a result carries (the values of its ``…_id``/``…_ids`` fields, ``undid``)."""
    if isinstance(value, dict):
        return {i for k, v in value.items() for i in _ids(v, k)}
    if isinstance(value, list):
        return {i for v in value for i in _ids(v, key)}
    if isinstance(value, str) and (key.endswith(("_id", "_ids")) or key in ("id", "undid")):
        return {value}
    return set()


def _numbers(value: Any) -> set[int]:
    if isinstance(value, dict):
        return {n for v in value.values() for n in _numbers(v)}
    if isinstance(value, list):
        return {n for v in value for n in _numbers(v)}
    return {value} if isinstance(value, int) and not isinstance(value, bool) else set()


def assert_reads_to_a_person(action: Action, result: dict) -> list[str]:
    """``action``'s outcome of ``result``: non-empty lines, no field name (snake_case or
    camelCase), no id, no amount in thousandths; an action whose result has fields words it itself."""
    if result:
        assert type(action).outcome_lines is not Action.outcome_lines, \
            f"{action.name}: its result has fields; give it an outcome_lines beside it"
    lines = action.outcome_lines(result)
    assert isinstance(lines, list) and lines, action.name
    assert all(isinstance(line, str) and line.strip() for line in lines), (action.name, lines)
    text = "\n".join(lines)
    for key in _keys(result):
        if "_" in key or re.search(r"[a-z][A-Z]", key):
            assert not re.search(rf"\b{re.escape(key)}\b", text), (action.name, key, lines)
    assert "milli" not in text, (action.name, lines)
    for ident in _ids(result):
        assert ident not in text, (action.name, ident, lines)
    for n in _numbers(result):
        if abs(n) >= 1000:  # an amount in thousandths (no count in these runs reaches 1,000)
            assert not re.search(rf"(?<![\d.,]){n}(?![\d.,])", text), (action.name, n, lines)
    return lines
