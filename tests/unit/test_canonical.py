"""Canonical JSON and the fingerprint of a subject (docs/guarantees.md, "The fingerprint")."""

from __future__ import annotations

import hashlib
import json
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from countersign.core.canonical import canonical_bytes, canonical_json, digest, fingerprint

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# JSON-ish values: what a subject is made of once it has been through JSON.
leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)
changes = st.lists(st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=4), max_size=6)
scopes = st.text(min_size=1, max_size=12)


# --- canonical JSON ---------------------------------------------------------------------------


def test_keys_sorted_at_every_depth_and_no_whitespace():
    value = {"b": 1, "a": {"z": [1, {"y": 2, "x": 3}], "m": None}, "c": True}
    assert canonical_json(value) == '{"a":{"m":null,"z":[1,{"x":3,"y":2}]},"b":1,"c":true}'


def test_canonical_json_keeps_list_order():
    assert canonical_json([3, 1, 2]) == "[3,1,2]"


def test_non_ascii_kept_as_utf8():
    assert canonical_json({"name": "Café"}) == '{"name":"Café"}'
    assert canonical_bytes({"name": "Café"}) == b'{"name":"Caf\xc3\xa9"}'
    assert canonical_bytes("→ 🐈") == '"→ 🐈"'.encode()
    assert b"\\u" not in canonical_bytes("Café → 🐈")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused(bad):
    with pytest.raises(ValueError):
        canonical_json({"amount": bad})
    with pytest.raises(ValueError):
        fingerprint("ws_1", [{"amount": bad}])
    with pytest.raises(ValueError):
        digest([bad])


@FAST
@given(json_values)
def test_canonical_json_is_valid_compact_json(value):
    text = canonical_json(value)
    assert json.loads(text) == value
    assert text == json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_bytes(value) == text.encode("utf-8")


# --- fingerprint: known answer ----------------------------------------------------------------


def test_fingerprint_known_answer():
    subject = {"month": "2026-09-01", "category": "Café", "amount": 150000, "changes": [2, 1]}
    # Written by hand: [scope_id, subject], keys sorted, lists sorted, no whitespace, UTF-8.
    by_hand = '["ws_1",{"amount":150000,"category":"Café","changes":[1,2],"month":"2026-09-01"}]'
    expected = hashlib.sha256(by_hand.encode("utf-8")).hexdigest()
    assert expected == "12f427f9493ebfc4c25619585f1d5d11816874dcd97276c63d0a94a12849baed"
    assert fingerprint("ws_1", subject) == expected


def test_fingerprint_is_sha256_hex():
    fp = fingerprint("ws_1", {"a": 1})
    assert len(fp) == 64 and all(c in "0123456789abcdef" for c in fp)


def test_digest_known_answer_keeps_order():
    assert digest({"b": [2, 1], "a": "é"}) == hashlib.sha256('{"a":"é","b":[2,1]}'.encode()).hexdigest()
    assert digest([1, 2]) != digest([2, 1])


# --- fingerprint: properties ------------------------------------------------------------------


@FAST
@given(st.data(), scopes, changes)
def test_permuting_changes_keeps_fingerprint(data, scope, items):
    shuffled = data.draw(st.permutations(items))
    assert fingerprint(scope, items) == fingerprint(scope, shuffled)
    assert fingerprint(scope, {"changes": items, "approved": True}) == fingerprint(
        scope, {"approved": True, "changes": shuffled}
    )


@FAST
@given(st.data(), scopes, json_values)
def test_permuting_any_nested_list_keeps_fingerprint(data, scope, value):
    def shuffle(v):
        if isinstance(v, list):
            return data.draw(st.permutations([shuffle(x) for x in v]))
        if isinstance(v, dict):
            return {k: shuffle(x) for k, x in reversed(list(v.items()))}
        return v

    assert fingerprint(scope, value) == fingerprint(scope, shuffle(value))


def _leaf_paths(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaf_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaf_paths(v, path + (i,))
    else:
        yield path


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _get(value, path):
    for step in path:
        value = value[step]
    return value


@FAST
@given(st.data(), scopes, changes)
def test_changing_any_single_value_changes_fingerprint(data, scope, items):
    subject = {"account": "Checking", "changes": items}
    paths = list(_leaf_paths(subject))
    path = data.draw(st.sampled_from(paths))
    old = _get(subject, path)
    new = data.draw(leaves)
    assume(canonical_json(new) != canonical_json(old))
    assert fingerprint(scope, subject) != fingerprint(scope, _replace(subject, path, new))


@FAST
@given(st.data(), scopes, json_values)
def test_changing_a_deep_value_changes_fingerprint(data, scope, value):
    subject = {"outer": [{"inner": value}]}
    paths = list(_leaf_paths(subject))
    assume(paths)
    path = data.draw(st.sampled_from(paths))
    new = data.draw(leaves)
    assume(canonical_json(new) != canonical_json(_get(subject, path)))
    assert fingerprint(scope, subject) != fingerprint(scope, _replace(subject, path, new))


@pytest.mark.parametrize(
    "a, b",
    [
        (1, 1.0),
        (1, True),
        (0, False),
        (None, "null"),
        ("1", 1),
        (0.0, -0.0),
        ([1, 1, 2], [1, 2, 2]),  # same set, different multiset
        ([1, 2], [1, 2, 2]),
        ({"a": 1}, {"a": 1, "b": None}),
    ],
)
def test_values_that_differ_in_json_give_different_fingerprints(a, b):
    assert fingerprint("ws_1", {"v": a}) != fingerprint("ws_1", {"v": b})


@FAST
@given(scopes, scopes, json_values)
def test_scope_is_part_of_the_fingerprint(scope_a, scope_b, subject):
    assume(scope_a != scope_b)
    assert fingerprint(scope_a, subject) != fingerprint(scope_b, subject)


def test_another_workspace_gives_another_fingerprint():
    subject = [{"transaction": "t1", "category": "Food"}]
    assert fingerprint("ws_a", subject) != fingerprint("ws_b", subject)
    assert fingerprint("ws_a", subject) == fingerprint("ws_a", [dict(subject[0])])


@FAST
@given(scopes, json_values)
def test_fingerprint_is_deterministic_and_tuple_equals_list(scope, subject):
    assert fingerprint(scope, subject) == fingerprint(scope, json.loads(json.dumps(subject)))
    if isinstance(subject, list):
        assert fingerprint(scope, tuple(subject)) == fingerprint(scope, subject)


def test_dict_insertion_order_does_not_matter():
    assert fingerprint("w", {"a": 1, "b": 2}) == fingerprint("w", {"b": 2, "a": 1})


def test_the_fingerprint_example_in_the_guarantees_is_what_the_code_computes():
    """docs/guarantees.md documents the formula with a worked example: it must stay true."""
    import re
    from pathlib import Path

    from countersign.core.canonical import subject_fingerprint

    text = (Path(__file__).resolve().parents[2] / "docs" / "guarantees.md").read_text(encoding="utf-8")
    section = text[text.index("### The fingerprint"):text.index("### One request has at most one live card")]
    hashed = re.search(r"hashes the text\n\n```\n(.+?)\n```", section).group(1)
    expected = re.search(r"giving `([0-9a-f]{64})`", section).group(1)
    subject = {"note": "n1", "before": "text 1", "after": "hello", "version": 1}
    assert canonical_json(["w_123", {"tool": "edit_note", "change": subject}]) == hashed
    assert subject_fingerprint("w_123", "edit_note", subject) == expected
    assert "SHA-256( canonical_json( [workspace_id, order_free({\"tool\": tool, \"change\": subject})] ) )" in section


def _containers(value) -> list:
    """Every dict and list inside ``value``, itself included."""
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in _containers(v))]
    return []


@FAST
@given(json_values)
def test_json_copy_is_equal_and_shares_no_container(value):
    from countersign.core.canonical import json_copy

    copied = json_copy(value)
    assert copied == value and canonical_json(copied) == canonical_json(value)
    originals = {id(c) for c in _containers(value)}
    assert not originals & {id(c) for c in _containers(copied)}  # changing the copy never changes the original
