"""The end-of-run secret scan (tests/support/secret_scan.py) finds exactly what a substring search
of every secret would: whole, inside longer tokens, split by punctuation, near misses left out."""

from __future__ import annotations

import random
import string

from tests.support.secret_scan import occurring

ALPHABET = string.ascii_letters + string.digits + "-_.~"


def test_finds_exactly_what_a_substring_search_finds():
    rng = random.Random(13)
    secrets = {"".join(rng.choice(ALPHABET) for _ in range(rng.randint(16, 60))) for _ in range(300)}
    secrets |= {"upstream-token-3f9a1c0d5e7b2468", "a" * 16, "a" * 17}
    chosen = rng.sample(sorted(secrets), 40)
    pieces = []
    for i, s in enumerate(chosen):
        pieces.append(("x" * (i % 3)) + s + ("Y" * (i % 2)))  # alone, or inside a longer token
        pieces.append(s[:-1])  # a near miss
        pieces.append(s[1:] + " " + s[:5])
    pieces.append("aaaaaaaaaaaaaaaa")  # exactly one of the two overlapping secrets
    text = "\n".join(f'{{"result": "{p}", "n": {n}}}' for n, p in enumerate(pieces))
    logs = "INFO sent " + chosen[0]
    expected = {s for s in secrets if s in text or s in logs}
    assert expected
    assert occurring(secrets, text, logs) == expected


def test_nothing_to_find():
    assert occurring([], "anything") == set()
    assert occurring(["s" * 16], "", "t" * 40) == set()
