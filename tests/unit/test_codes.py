"""Confirmation codes (docs/how-a-held-write-travels.md, "Confirmation codes"; docs/security.md).

The rules the codes keep are written down in ``fixtures/confirmation_codes.txt``; the tests below
check the code against them.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from countersign.core.codes import (
    CODE_PATTERN,
    CODE_REFUSAL,
    CODE_TTL_SECONDS,
    CodeRecord,
    code_hash,
    code_matches,
    new_code,
    well_formed,
)

RULES = Path(__file__).parent / "fixtures" / "confirmation_codes.txt"
REFUSAL_SENTENCE = (
    "This confirmation code is unknown, expired, already used, or was issued for different changes. "
    "Call again without confirmation to get a new preview."
)


def test_new_code_is_11_url_safe_characters():
    codes = [new_code() for _ in range(200)]
    for code in codes:
        assert len(code) == 11
        assert re.fullmatch(r"[A-Za-z0-9_-]{11}", code)
        assert well_formed(code)
    assert len(set(codes)) == 200


def test_ttl_is_600_seconds():
    assert CODE_TTL_SECONDS == 600


@pytest.mark.parametrize(
    "code, ok",
    [
        ("abcdefghijk", True),
        ("ABC-_012xyz", True),
        ("abcdefghij", False),  # 10
        ("abcdefghijkl", False),  # 12
        ("abcdefghij=", False),
        ("abcde fghij", False),
        ("abcdefghij+", False),
        ("abcdefghij/", False),
        ("abcdéfghijk", False),
        ("abcdefghijk\n", False),
        ("", False),
        (None, False),
        (12345678901, False),
        (b"abcdefghijk", False),
    ],
)
def test_well_formed(code, ok):
    assert well_formed(code) is ok


def test_code_hash_is_stable_and_not_the_code():
    code = new_code()
    assert code_hash(code) == code_hash(code)
    assert code_hash(code) != code
    assert code not in code_hash(code)
    assert re.fullmatch(r"[0-9a-f]{64}", code_hash(code))
    assert code_hash("abcdefghijk") == hashlib.sha256(b"countersign-code:abcdefghijk").hexdigest()
    assert code_hash("abcdefghijk") != hashlib.sha256(b"abcdefghijk").hexdigest()  # domain-separated


def test_code_hash_differs_between_codes():
    codes = {new_code() for _ in range(200)}
    assert len({code_hash(c) for c in codes}) == len(codes)


RECORD = CodeRecord(code_hash=code_hash("abcdefghijk"), workspace_id="ws_1", fingerprint="f" * 64, expires_at=1000)


def test_code_matches_its_own_scope_before_expiry():
    assert code_matches(RECORD, "ws_1", "f" * 64, now=0) is True
    assert code_matches(RECORD, "ws_1", "f" * 64, now=999) is True


@pytest.mark.parametrize(
    "record, workspace, fp, now",
    [
        (None, "ws_1", "f" * 64, 0),
        (RECORD, "ws_2", "f" * 64, 0),  # another workspace
        (RECORD, "ws_1", "e" * 64, 0),  # other changes
        (RECORD, "ws_1", "f" * 64, 1000),  # at expiry
        (RECORD, "ws_1", "f" * 64, 1001),  # after expiry
        (RECORD, "", "f" * 64, 0),
        (RECORD, "ws_1", "", 0),
    ],
)
def test_code_does_not_match(record, workspace, fp, now):
    assert code_matches(record, workspace, fp, now) is False


def test_record_never_holds_the_code():
    code = new_code()
    record = CodeRecord(code_hash=code_hash(code), workspace_id="ws_1", fingerprint="f" * 64, expires_at=1)
    assert code not in repr(record)


def test_refusal_is_the_sentence_exactly():
    assert CODE_REFUSAL == REFUSAL_SENTENCE


def test_refusal_sentence_is_the_one_the_rules_quote():
    text = RULES.read_text(encoding="utf-8")
    quoted = re.search(r"is refused with: “(.+?)”", text)
    assert quoted, "the rules no longer quote the refusal"
    assert quoted.group(1) == CODE_REFUSAL


def test_format_and_lifetime_are_the_ones_the_rules_give():
    text = RULES.read_text(encoding="utf-8")
    length = re.search(r"^Format\s+(\d+) URL-safe characters$", text, re.M)
    lifetime = re.search(r"^Lifetime\s+(\d+) seconds$", text, re.M)
    assert length and lifetime, "the rules no longer give the format and lifetime"
    assert all(len(new_code()) == int(length.group(1)) for _ in range(20))
    assert CODE_TTL_SECONDS == int(lifetime.group(1))


def test_code_pattern_is_anchored():
    assert CODE_PATTERN.match("abcdefghijk")
    assert not CODE_PATTERN.match("xabcdefghijk")
