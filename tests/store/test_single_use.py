"""Single-use values: confirmation codes and nonces."""

from __future__ import annotations

from countersign.core.codes import CodeRecord, code_hash, code_matches, new_code
from countersign.core.ids import new_id


def _code(expires_at: int = 600, fingerprint: str = "fp-1") -> CodeRecord:
    return CodeRecord(code_hash=code_hash(new_code()), workspace_id=new_id("ws_"), fingerprint=fingerprint,
                      expires_at=expires_at, arguments_digest="args-digest-1")


def test_code_is_returned_once_then_spent(store):
    record = _code()
    store.limits.put_code(record)
    assert store.limits.take_code(record.code_hash, now=10) == record
    assert store.limits.take_code(record.code_hash, now=11) is None


def test_code_is_spent_even_when_it_does_not_match(store):
    record = _code(fingerprint="fp-previewed")
    store.limits.put_code(record)
    taken = store.limits.take_code(record.code_hash, now=10)
    assert taken == record and not code_matches(taken, record.workspace_id, "fp-something-else", now=10)
    assert store.limits.take_code(record.code_hash, now=12) is None


def test_expired_code_is_still_returned_for_the_caller_to_refuse(store):
    record = _code(expires_at=600)
    store.limits.put_code(record)
    assert store.limits.take_code(record.code_hash, now=600) == record
    assert store.limits.take_code(record.code_hash, now=601) is None


def test_unknown_code_is_none(store):
    assert store.limits.take_code(code_hash("AAAAAAAAAAA"), now=0) is None


def test_codes_are_independent(store):
    a, b = _code(), _code()
    store.limits.put_code(a)
    store.limits.put_code(b)
    assert store.limits.take_code(a.code_hash, now=1) == a
    assert store.limits.take_code(b.code_hash, now=1) == b


def test_nonce_is_used_once(store):
    nonce = new_id("n_")
    assert store.limits.use_nonce(nonce, expires_at=100, now=0) is True
    assert store.limits.use_nonce(nonce, expires_at=100, now=1) is False
    assert store.limits.use_nonce(nonce, expires_at=200, now=99) is False


def test_nonces_are_independent(store):
    assert store.limits.use_nonce(new_id("n_"), expires_at=100, now=0) is True
    assert store.limits.use_nonce(new_id("n_"), expires_at=100, now=0) is True


def test_expired_nonce_reads_as_absent(store):
    """Past its ``expires_at`` a nonce record is gone (DynamoDB's TTL would delete it too)."""
    nonce = new_id("n_")
    assert store.limits.use_nonce(nonce, expires_at=100, now=0) is True
    assert store.limits.use_nonce(nonce, expires_at=300, now=100) is True
    assert store.limits.use_nonce(nonce, expires_at=300, now=299) is False
