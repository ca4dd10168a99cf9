"""What a person reviews of an upstream's tools on the card that adds it or approves them again.

Pure functions over tool definitions. The card's lines say it in short (where the server is, then
how many tools changed, were added, were removed, with their names) — what an in-client question
and a receipt show; its sections hold every tool, drawn on the page: changed tools first, each
with a word-level before/after of its description and of each argument (type, required,
description, the rest of its schema) and of anything else in its definition that moved; then
added tools, removed tools, and the unchanged ones last. A tool's input schema is shown as its
list of arguments, never as raw JSON, and nothing of what agents read is left out: whatever a
property or the schema holds beyond a type and a description is shown too, as JSON.

A text field is a list of segments ``[mark, text]``: ``""`` the same before and after, ``"-"``
removed, ``"+"`` added. A field that did not change is one ``""`` segment.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from ...core.preview import one_line
from .config import Pin

WHAT = {"read": "runs at once (a read)", "held": "waits for a person on the page",
        "client": "waits for a yes (in the client when allowed)"}
# The classes, as a heading of the tools that run under each (the add card's lines).
GROUPED = (("held", "Wait for a person on the page"), ("client", "Wait for a yes (in the client when allowed)"),
           ("read", "Run at once (reads)"))
SHOWN_ELSEWHERE = ("name", "title", "description", "inputSchema")  # the rest of a definition is "other"
SAME, REMOVED, ADDED = "", "-", "+"
# A changed tool whose every shown field reads the same (its definition's digest moved all the same).
SPACING_ONLY = "Only spacing or the order of its definition changed: every part of it reads as before."
# Below this likeness a changed text reads better as the old one struck out and the new one whole.
WORD_DIFF_MIN_RATIO = 0.4
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def segments(before: str | None, after: str | None) -> list[list[str]]:
    """``before`` → ``after`` as segments, word by word (``None``: the text is not there)."""
    if before == after:
        return [[SAME, after]] if after else []
    if not before:
        return [[ADDED, after or ""]]
    if not after:
        return [[REMOVED, before]]
    a, b = _TOKEN.findall(before), _TOKEN.findall(after)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < WORD_DIFF_MIN_RATIO:
        return [[REMOVED, before], [ADDED, after]]
    out: list[list[str]] = []

    def put(mark: str, tokens: list[str]) -> None:
        text = "".join(tokens)
        if not text:
            return
        if out and out[-1][0] == mark:
            out[-1][1] += text
        else:
            out.append([mark, text])

    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            put(SAME, a[i1:i2])
        else:
            put(REMOVED, a[i1:i2])
            put(ADDED, b[j1:j2])
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _description(definition: dict[str, Any]) -> str | None:
    return one_line(str(definition.get("description") or "")) or None


def _title(definition: dict[str, Any]) -> str | None:
    """A title agents read beside the name (none when it is only the name again)."""
    hints = definition.get("annotations") or {}
    title = definition.get("title") or hints.get("title")
    return one_line(str(title)) if title and title != definition.get("name") else None


# -- arguments ----------------------------------------------------------------------------------------


def _argument(prop: Any, required: bool) -> dict[str, str | None]:
    """One property of an input schema as its type, whether it is required, its description, and
    the rest of its schema (enum, items, default …) as JSON (``None`` where there is nothing)."""
    prop = prop if isinstance(prop, dict) else {"schema": prop}
    rest = {k: v for k, v in prop.items() if k not in ("type", "description")}
    kind = prop.get("type")
    if kind == "array" and isinstance(rest.get("items"), dict) and set(rest["items"]) == {"type"} \
            and isinstance(rest["items"]["type"], str):
        kind = f"array of {rest.pop('items')['type']}"
    elif isinstance(kind, list):
        kind = " or ".join(str(k) for k in kind)
    return {"type": str(kind) if kind else "any", "required": "required" if required else "optional",
            "description": one_line(str(prop.get("description") or "")) or None, "more": _json(rest) if rest else None}


def arguments_of(definition: dict[str, Any] | None) -> dict[str, dict[str, str | None]]:
    """A tool's arguments in the order its schema lists them."""
    schema = (definition or {}).get("inputSchema") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    required = schema.get("required") if isinstance(schema, dict) else None
    required = set(required) if isinstance(required, list) else set()
    if not isinstance(props, dict):
        return {}
    return {str(name): _argument(prop, name in required) for name, prop in props.items()}


def _schema_rest(definition: dict[str, Any] | None) -> str | None:
    """What an input schema holds besides its properties and which are required (as JSON)."""
    schema = (definition or {}).get("inputSchema")
    if not isinstance(schema, dict):
        return None if schema is None else _json(schema)
    rest = {k: v for k, v in schema.items() if k not in ("properties", "required")}
    if not isinstance(schema.get("properties", {}), dict):
        rest["properties"] = schema["properties"]
    if rest == {"type": "object"}:
        return None
    return _json(rest)


ARGUMENT_FIELDS = ("type", "required", "description", "more")


def argument_rows(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each argument of ``after`` (then each one only ``before`` had), each field as segments, and
    ``change``: ``added``, ``removed``, ``changed``, or ``""`` when it is as it was. A tool shown
    as it is (nothing to compare) passes the same definition twice."""
    old, new = arguments_of(before), arguments_of(after)
    rows = []
    for name in [*new, *(n for n in old if n not in new)]:
        was, now = old.get(name), new.get(name)
        change = "added" if was is None else "removed" if now is None else "changed" if was != now else ""
        row: dict[str, Any] = {"name": name, "change": change}
        for f in ARGUMENT_FIELDS:
            row[f] = segments((was or {}).get(f), (now or {}).get(f))
        rows.append(row)
    return rows


# -- tools --------------------------------------------------------------------------------------------


def tool_entry(name: str, change: str, after: Pin | None, before: Pin | None = None) -> dict[str, Any]:
    """One tool as the card shows it. ``change``: ``new`` (on an add), ``added``, ``removed``,
    ``changed`` or ``unchanged``. Only a changed tool compares ``before`` with ``after``; a removed
    one is shown as it was, the others as they are."""
    shown = after or before
    assert shown is not None
    new = shown.definition
    old = before.definition if change == "changed" and before is not None else new
    entry: dict[str, Any] = {"name": name, "change": change, "runs": WHAT[shown.cls]}
    if before is not None and after is not None and before.cls != after.cls:
        entry["was"] = WHAT[before.cls]
    title = segments(_title(old), _title(new))
    if title:
        entry["title"] = title
    entry["description"] = segments(_description(old), _description(new))
    entry["arguments"] = argument_rows(old, new)
    rest = segments(_schema_rest(old), _schema_rest(new))
    if rest:
        entry["schema"] = rest
    if old is not new:
        keys = sorted({*old, *new} - set(SHOWN_ELSEWHERE))
        entry["other"] = [{"name": k, "value": segments(_json(old[k]) if k in old else None,
                                                        _json(new[k]) if k in new else None)}
                          for k in keys if old.get(k) != new.get(k)]
        if not any(_marked(v) for v in (entry.get("title"), entry["description"], entry.get("schema"))) \
                and not any(r["change"] for r in entry["arguments"]) and not entry["other"] and "was" not in entry:
            entry["note"] = SPACING_ONLY
    return entry


def _marked(field: list[list[str]] | None) -> bool:
    return any(mark != SAME for mark, _ in field or ())


def _names(names: list[str]) -> str:
    return ", ".join(names)


def _tools(count: int) -> str:
    return f"{count} tool" if count == 1 else f"{count} tools"


def add_review(upstream_name: str, pins: dict[str, Pin]) -> tuple[list[str], list[dict[str, Any]]]:
    """The lines and sections of a card that adds an upstream with these tools."""
    lines = [f"Its {_tools(len(pins))}, as {upstream_name}__<tool>:"]
    for cls, heading in GROUPED:
        names = sorted(n for n, p in pins.items() if p.cls == cls)
        if names:
            lines.append(f"{heading} ({len(names)}): {_names(names)}.")
    tools = [tool_entry(n, "new", p) for n, p in sorted(pins.items())]
    return lines, [{"group": "new", "heading": f"Tools ({len(tools)})", "tools": tools}] if tools else []


def refresh_review(pins: dict[str, Pin], before: dict[str, Pin]) -> tuple[list[str], list[dict[str, Any]]]:
    """The lines and sections of a card that approves ``pins`` in place of ``before``: changed
    tools first, then added, removed, and unchanged last."""
    groups = {
        "changed": sorted(n for n in pins if n in before and before[n].digest != pins[n].digest),
        "added": sorted(n for n in pins if n not in before),
        "removed": sorted(n for n in before if n not in pins),
        "unchanged": sorted(n for n in pins if n in before and before[n].digest == pins[n].digest),
    }
    headings = {"changed": "Changed", "added": "Added", "removed": "Removed", "unchanged": "Unchanged"}
    lines = [f"{headings[g]} ({len(names)}): {_names(names)}." for g, names in groups.items()
             if names and g != "unchanged"]
    if groups["unchanged"]:
        lines.append(f"Unchanged: {_tools(len(groups['unchanged']))}.")
    sections = [{"group": g, "heading": f"{headings[g]} ({len(names)})",
                 "tools": [tool_entry(n, g, pins.get(n), before.get(n)) for n in names]}
                for g, names in groups.items() if names]
    return lines, sections
