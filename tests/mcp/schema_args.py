"""Arguments drawn from a tool's published input schema (the JSON Schema subset the tools use:
objects, arrays, strings, numbers, booleans, null, ``anyOf``, ``enum`` and ``$ref``), and the ways
an agent gets them wrong. Used by tests/mcp/test_schema_fuzz.py.

Strings mix ordinary text with what agents and attackers send: control characters, zero-width and
bidi characters, quotes and markup. A field named ``*_id`` draws from the workspace's real ids half
the time, so calls get past the id checks into the plans.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

HOSTILE = ["\x00", "\x1b[31m", "\x7f", "\u200b", "\u200d", "\u202e", "\u2066", "\ufeff", "\u2060", "\u00ad",
           "\u2028", "\n", "\t", "'", '"', "<b>", "\\", "‘", "東京", "\U0001f468\u200d\U0001f469"]
DATES = ["2026-09", "2026-10-01", "2026-09-20", "current", "next", "1900-01", "9999-12", "2026-02-30", "2026-13"]
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.floats(allow_nan=False, allow_infinity=False, width=32), st.text(max_size=8))
JSON = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=6), inner, max_size=3), max_leaves=6)
WRONG_TYPES = ["true", "false", 1, 0, 1.5, -1, [], {}, "", "x" * 3, [1, 2], {"a": 1}]


def text(min_size: int = 0, max_size: int = 40) -> st.SearchStrategy[str]:
    piece = st.one_of(st.text(min_size=1, max_size=6), st.sampled_from(HOSTILE))
    return st.lists(piece, min_size=1 if min_size else 0, max_size=6).map("".join).filter(
        lambda s: min_size <= len(s) <= max_size) | st.just("x" * max(min_size, 1))


class Arguments:
    """Strategies for one tool's arguments, from its input schema."""

    def __init__(self, schema: dict[str, Any], ids: list[str]):
        self.schema = schema
        self.defs = schema.get("$defs", {})
        self.ids = ids

    def fits(self) -> st.SearchStrategy[dict[str, Any]]:
        return self._value(self.schema, "")

    def _resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.defs[schema["$ref"].rsplit("/", 1)[-1]]
        return schema

    def _value(self, schema: dict[str, Any], name: str) -> st.SearchStrategy[Any]:
        schema = self._resolve(schema)
        if "anyOf" in schema:
            return st.one_of([self._value(s, name) for s in schema["anyOf"]])
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        if "const" in schema:
            return st.just(schema["const"])
        kind = schema.get("type")
        if kind == "object":
            return self._object(schema)
        if kind == "array":
            items = self._value(schema.get("items", {}), name)
            low = schema.get("minItems", 0)
            return st.lists(items, min_size=low, max_size=max(low, min(schema.get("maxItems", 3), 3)))
        if kind == "string":
            return self._string(schema, name)
        if kind == "integer":
            return st.integers(schema.get("minimum", -10**6), schema.get("maximum", 10**6))
        if kind == "number":
            return st.integers(-10**4, 10**4) | st.floats(-1e6, 1e6, allow_nan=False, width=32)
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        return JSON  # unconstrained (e.g. an object's free-form values)

    def _string(self, schema: dict[str, Any], name: str) -> st.SearchStrategy[str]:
        plain = text(schema.get("minLength", 0), min(schema.get("maxLength", 40), 40))
        if (name.endswith("_id") or name.endswith("_ids")) and self.ids:
            return st.sampled_from(self.ids) | plain
        if name in ("month", "date", "since"):
            return st.sampled_from(DATES) | plain
        return plain

    def _object(self, schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        if not props:
            return st.dictionaries(text(1, 8), JSON, max_size=3) if schema.get("additionalProperties") else st.just({})
        return st.fixed_dictionaries(
            {k: self._value(v, k) for k, v in props.items() if k in required},
            optional={k: self._value(v, k) for k, v in props.items() if k not in required},
        )

    def breaks(self) -> st.SearchStrategy[tuple[str, str, dict[str, Any]]]:
        """(how, name, arguments): valid arguments with one thing wrong."""
        props = list(self.schema.get("properties", {}))
        required = list(self.schema.get("required", []))

        @st.composite
        def broken(draw) -> tuple[str, str, dict[str, Any]]:
            args = dict(draw(self.fits()))
            choices = ["unknown"] + (["wrong type"] if props else []) + (["missing"] if required else [])
            how = draw(st.sampled_from(choices))
            if how == "unknown":
                base = draw(st.sampled_from(props)) if props else "argument"
                name = draw(st.sampled_from([base + "x", base[:-1], "x" + base, "confirm_" + base]))
                if name in props:
                    name = name + "_extra"
                args[name] = draw(JSON_SCALARS.filter(lambda v: v is not None))
                return how, name, args
            if how == "missing":
                name = draw(st.sampled_from(required))
                args.pop(name, None)
                return how, name, args
            name = draw(st.sampled_from(props))
            args[name] = draw(st.sampled_from(WRONG_TYPES))
            return how, name, args

        return broken()
