"""Identifiers that sort by creation time and cannot be guessed."""

from __future__ import annotations

import time

from hypothesis import given, settings, strategies as st

from countersign.core.ids import new_id, new_secret_token

ALPHABET = set("0123456789abcdefghjkmnpqrstvwxyz")


def test_shape_and_prefix():
    card = new_id("card_")
    assert card.startswith("card_")
    body = card[len("card_") :]
    assert len(body) == 26 and set(body) <= ALPHABET
    assert len(new_id()) == 26


def test_time_part_encodes_ms():
    assert new_id(now_ms=0)[:10] == "0000000000"
    assert new_id(now_ms=31)[:10] == "000000000z"
    assert new_id(now_ms=32)[:10] == "0000000010"
    assert new_id("x_", now_ms=1)[:12] == "x_0000000001"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**50 - 1), min_size=2, max_size=20, unique=True))
def test_ids_sort_by_time(times):
    times.sort()
    ids = [new_id("card_", now_ms=t) for t in times]
    assert sorted(ids) == ids


def _base32(value: int, width: int) -> str:
    """Base32 in the ids' alphabet, most significant first, one character at a time."""
    chars = []
    for _ in range(width):
        chars.append("0123456789abcdefghjkmnpqrstvwxyz"[value & 31])
        value >>= 5
    return "".join(reversed(chars))


@settings(max_examples=300, deadline=None)
@given(st.integers(-(2**60), 2**60))
def test_time_part_is_the_low_50_bits_of_the_ms_in_base32(ms):
    made = new_id("op_", now_ms=ms)
    assert made[:13] == "op_" + _base32(ms, 10)
    assert len(made) == 29 and set(made[13:]) <= ALPHABET


def test_consecutive_ms_sort():
    base = 1_790_000_000_000
    ids = [new_id("op_", now_ms=base + i) for i in range(2000)]
    assert sorted(ids) == ids


def test_default_time_is_now():
    before = new_id(now_ms=int(time.time() * 1000) - 1)
    made = new_id()
    after = new_id(now_ms=int(time.time() * 1000) + 1000)
    assert before < made < after


def test_unique_over_10k():
    ids = {new_id("card_", now_ms=1_790_000_000_000) for _ in range(10_000)}  # same ms: randomness alone
    assert len(ids) == 10_000
    assert len({new_id() for _ in range(10_000)}) == 10_000


def test_secret_token():
    token = new_secret_token("cs_")
    assert token.startswith("cs_") and len(token) == 3 + 43
    assert len({new_secret_token() for _ in range(1000)}) == 1000
