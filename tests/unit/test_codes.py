"""Confirmation codes (SPEC §7, seed 000)."""

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

SEED_000 = Path("/work/shared/seeds/000_32c8fe3d942f7c0c.txt")
SEED_SENTENCE = (
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


def test_refusal_is_seed_000_sentence_exactly():
    assert CODE_REFUSAL == SEED_SENTENCE


@pytest.mark.skipif(not SEED_000.exists(), reason="shared seeds not mounted")
def test_refusal_sentence_is_in_seed_000():
    text = SEED_000.read_text(encoding="utf-8")
    quoted = re.search(r"is refused with: “(.+?)”", text)
    assert quoted, "seed 000 no longer quotes the refusal"
    assert quoted.group(1) == CODE_REFUSAL


def test_code_pattern_is_anchored():
    assert CODE_PATTERN.match("abcdefghijk")
    assert not CODE_PATTERN.match("xabcdefghijk")
