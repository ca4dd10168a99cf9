"""Rate limits: the per-person email slot and fixed-window hit counters."""

from __future__ import annotations

import pytest

from countersign.core.ids import new_id

INTERVAL = 900


def test_email_slot_holds_for_the_interval(store):
    pid = new_id("p_")
    assert store.limits.claim_email_slot(pid, now=0, interval=INTERVAL) is True
    assert store.limits.claim_email_slot(pid, now=60, interval=INTERVAL) is False
    assert store.limits.claim_email_slot(pid, now=899, interval=INTERVAL) is False
    assert store.limits.claim_email_slot(pid, now=900, interval=INTERVAL) is True
    assert store.limits.claim_email_slot(pid, now=1799, interval=INTERVAL) is False
    assert store.limits.claim_email_slot(pid, now=1800, interval=INTERVAL) is True


def test_refused_claims_do_not_extend_the_slot(store):
    pid = new_id("p_")
    store.limits.claim_email_slot(pid, now=0, interval=INTERVAL)
    for t in range(100, 900, 100):
        assert store.limits.claim_email_slot(pid, now=t, interval=INTERVAL) is False
    assert store.limits.claim_email_slot(pid, now=900, interval=INTERVAL) is True


def test_email_slots_are_per_person(store):
    a, b = new_id("p_"), new_id("p_")
    assert store.limits.claim_email_slot(a, now=0, interval=INTERVAL) is True
    assert store.limits.claim_email_slot(b, now=60, interval=INTERVAL) is True
    assert store.limits.claim_email_slot(a, now=60, interval=INTERVAL) is False


def test_released_slot_lets_the_next_claim_through(store):
    pid = new_id("p_")
    assert store.limits.claim_email_slot(pid, now=0, interval=INTERVAL) is True
    store.limits.release_email_slot(pid, claimed_at=0)
    assert store.limits.claim_email_slot(pid, now=60, interval=INTERVAL) is True
    assert store.limits.claim_email_slot(pid, now=120, interval=INTERVAL) is False


def test_release_does_not_undo_a_later_claim(store):
    pid = new_id("p_")
    assert store.limits.claim_email_slot(pid, now=0, interval=INTERVAL) is True
    assert store.limits.claim_email_slot(pid, now=900, interval=INTERVAL) is True
    store.limits.release_email_slot(pid, claimed_at=0)  # a stale release: the claim at 900 stands
    assert store.limits.claim_email_slot(pid, now=960, interval=INTERVAL) is False


def test_releasing_an_unclaimed_slot_is_harmless(store):
    pid = new_id("p_")
    store.limits.release_email_slot(pid, claimed_at=0)
    assert store.limits.claim_email_slot(pid, now=0, interval=INTERVAL) is True


@pytest.mark.parametrize("window, limit", [(60, 3), (3600, 1)])
def test_hit_rate_limit_allows_limit_hits_per_fixed_window(store, window, limit):
    key = "signin:" + new_id()
    start = 10 * window  # the first second of a window
    assert [store.limits.hit_rate_limit(key, start + i, window, limit) for i in range(limit)] == [True] * limit
    assert store.limits.hit_rate_limit(key, start + window - 1, window, limit) is False
    assert store.limits.hit_rate_limit(key, start + window, window, limit) is True


def test_hit_rate_limit_windows_are_fixed_not_sliding(store):
    key = "ip:" + new_id()
    assert store.limits.hit_rate_limit(key, 59, 60, 1) is True  # last second of window [0, 60)
    assert store.limits.hit_rate_limit(key, 60, 60, 1) is True  # first second of window [60, 120)
    assert store.limits.hit_rate_limit(key, 61, 60, 1) is False


def test_hit_rate_limit_keys_are_independent(store):
    a, b = "k:" + new_id(), "k:" + new_id()
    assert store.limits.hit_rate_limit(a, 0, 60, 1) is True
    assert store.limits.hit_rate_limit(a, 1, 60, 1) is False
    assert store.limits.hit_rate_limit(b, 1, 60, 1) is True


def test_a_claim_is_taken_again_by_its_own_claimer_only(store):
    assert store.limits.claim_email_slot("p1", now=1000, interval=900, claimer="card-a")
    assert not store.limits.claim_email_slot("p1", now=1010, interval=900, claimer="card-b")
    assert not store.limits.claim_email_slot("p1", now=1010, interval=900)
    assert store.limits.claim_email_slot("p1", now=1020, interval=900, claimer="card-a")  # its sender died: retry
    store.limits.release_email_slot("p1", claimed_at=1000)  # the stale claim time releases nothing
    assert not store.limits.claim_email_slot("p1", now=1030, interval=900, claimer="card-b")
    store.limits.release_email_slot("p1", claimed_at=1020)
    assert store.limits.claim_email_slot("p1", now=1040, interval=900, claimer="card-b")
