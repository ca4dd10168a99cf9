"""The push_subscriptions role on both stores: a person's devices listed oldest first, one
subscription per endpoint (a second person adding it takes it over), removal only by its person,
last use recorded, until when its browser is signed in kept and renewed only by its person, at
most MAX_SUBSCRIPTIONS a person, and endpoints that are not https refused with nothing written."""

from __future__ import annotations

import base64
import dataclasses
import os
import secrets
import sqlite3

import pytest

from countersign.identity.sessions import SESSION_TTL_SECONDS
from countersign.store.errors import BadInput
from countersign.store.push_subscriptions import MAX_SUBSCRIPTIONS, PushSubscription, subscription_id
from countersign.store.sessions import SESSION_LIFETIME
from countersign.store.sqlite import SQLiteStore
from tests.store._factories import as_released_before


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


P256DH = b64(b"\x04" + os.urandom(64))
AUTH = b64(os.urandom(16))


def ws() -> str:
    return "ws_" + secrets.token_hex(6)


def sub(w: str, person: str, endpoint: str | None = None, at: int = 100, **changes) -> PushSubscription:
    endpoint = endpoint or f"https://push.example.com/send/{secrets.token_urlsafe(12)}"
    values = dict(id=subscription_id(endpoint), workspace_id=w, person_id=person, endpoint=endpoint, p256dh=P256DH,
                  auth=AUTH, device="Chrome on Android", created_at=at)
    values.update(changes)
    return PushSubscription(**values)


def test_add_list_touch_remove(store):
    w = ws()
    roles = store.push_subscriptions
    assert roles.list_subscriptions(w, "p_a") == []
    first, second = sub(w, "p_a", at=200), sub(w, "p_a", at=100)
    assert roles.add_subscription(first) == first
    roles.add_subscription(second)
    assert roles.list_subscriptions(w, "p_a") == [second, first]  # oldest first
    assert roles.list_subscriptions(w, "p_b") == [] and roles.list_subscriptions(ws(), "p_a") == []
    roles.touch_subscription(w, "p_a", first.id, 300)
    assert [s.last_used_at for s in roles.list_subscriptions(w, "p_a")] == [None, 300]
    assert roles.remove_subscription(w, "p_b", first.id) is False  # not theirs: nothing removed
    assert roles.remove_subscription(w, "p_a", first.id) is True
    assert roles.remove_subscription(w, "p_a", first.id) is False
    assert roles.list_subscriptions(w, "p_a") == [second]
    roles.touch_subscription(w, "p_a", first.id, 400)  # gone: nothing comes back
    assert roles.list_subscriptions(w, "p_a") == [second]


def test_the_same_endpoint_again_replaces_it(store):
    w = ws()
    before = sub(w, "p_a", "https://push.example.com/x/1", at=100)
    store.push_subscriptions.add_subscription(before)
    again = sub(w, "p_a", "https://push.example.com/x/1", at=150, auth=b64(os.urandom(16)), device="Firefox on Linux")
    store.push_subscriptions.add_subscription(again)
    assert store.push_subscriptions.list_subscriptions(w, "p_a") == [again]


def test_an_endpoint_belongs_to_one_person_the_last_who_added_it(store):
    """A browser that a second person turns notifications on in moves to them: the first person's
    cards no longer show there."""
    w, other_ws = ws(), ws()
    endpoint = "https://push.example.com/shared/device"
    store.push_subscriptions.add_subscription(sub(w, "p_a", endpoint))
    taken = sub(other_ws, "p_b", endpoint, at=200)
    store.push_subscriptions.add_subscription(taken)
    assert store.push_subscriptions.list_subscriptions(w, "p_a") == []
    assert store.push_subscriptions.list_subscriptions(other_ws, "p_b") == [taken]
    # the first person removing "their" old id removes nothing of the second's
    assert store.push_subscriptions.remove_subscription(w, "p_a", taken.id) is False
    assert store.push_subscriptions.list_subscriptions(other_ws, "p_b") == [taken]
    # and it can move back
    store.push_subscriptions.add_subscription(sub(w, "p_a", endpoint, at=300))
    assert store.push_subscriptions.list_subscriptions(other_ws, "p_b") == []
    assert [s.created_at for s in store.push_subscriptions.list_subscriptions(w, "p_a")] == [300]


def test_at_most_max_subscriptions_a_person(store):
    w = ws()
    for i in range(MAX_SUBSCRIPTIONS):
        store.push_subscriptions.add_subscription(sub(w, "p_a", at=i))
    with pytest.raises(BadInput) as refused:
        store.push_subscriptions.add_subscription(sub(w, "p_a", at=99))
    assert refused.value.field == "endpoint"
    assert len(store.push_subscriptions.list_subscriptions(w, "p_a")) == MAX_SUBSCRIPTIONS
    # one already there may still be renewed
    kept = store.push_subscriptions.list_subscriptions(w, "p_a")[0]
    store.push_subscriptions.add_subscription(sub(w, "p_a", kept.endpoint, at=500))
    assert store.push_subscriptions.add_subscription(sub(w, "p_b")) is not None


@pytest.mark.parametrize("endpoint", [
    "http://push.example.com/send/1",  # plain http (a push service never takes it)
    "http://10.0.0.5/send/1",
    "ftp://push.example.com/send/1",
    "https:///no-host",
    "https://user:pw@push.example.com/send/1",
    "https://push.example.com/" + "x" * 1100,
    "not a url",
])
def test_an_endpoint_that_is_not_https_is_refused_and_nothing_written(store, endpoint):
    w = ws()
    with pytest.raises(BadInput) as refused:
        store.push_subscriptions.add_subscription(sub(w, "p_a", endpoint))
    assert refused.value.field == "endpoint"
    assert store.push_subscriptions.list_subscriptions(w, "p_a") == []


def test_http_to_loopback_is_stored_for_tests(store):
    """The store takes http only to a loopback address (the API and the sender refuse it unless
    COUNTERSIGN_UPSTREAM_PRIVATE allows it)."""
    w = ws()
    local = sub(w, "p_a", "http://127.0.0.1:8123/push/1")
    store.push_subscriptions.add_subscription(local)
    assert store.push_subscriptions.list_subscriptions(w, "p_a") == [local]


@pytest.mark.parametrize("field,changes", [
    ("keys.p256dh", {"p256dh": b64(os.urandom(32))}),
    ("keys.p256dh", {"p256dh": b64(b"\x02" + os.urandom(64))}),
    ("keys.p256dh", {"p256dh": "not base64 !"}),
    ("keys.auth", {"auth": b64(os.urandom(8))}),
    ("keys.auth", {"auth": ""}),
    ("device", {"device": "x" * 81}),
    ("id", {"id": "ps_other"}),
])
def test_bad_keys_are_refused_and_nothing_written(store, field, changes):
    w = ws()
    with pytest.raises(BadInput) as refused:
        store.push_subscriptions.add_subscription(sub(w, "p_a", **changes))
    assert refused.value.field == field
    assert store.push_subscriptions.list_subscriptions(w, "p_a") == []


def test_signed_in_until_is_kept_and_renewed_only_for_the_persons_own(store):
    """The page says until when its browser is signed in (turning notifications on, then each time
    it loads signed in): renewing changes only that person's record, and nothing else of it."""
    w = ws()
    roles = store.push_subscriptions
    mine = roles.add_subscription(sub(w, "p_a", at=100, signed_in_until=700))
    theirs = roles.add_subscription(sub(w, "p_b", at=100, signed_in_until=700))
    assert roles.list_subscriptions(w, "p_a") == [mine]
    assert roles.renew_subscription(w, "p_a", mine.id, 9_000) is True
    assert roles.list_subscriptions(w, "p_a") == [dataclasses.replace(mine, signed_in_until=9_000)]
    # someone else's id, an unknown id, another workspace: False, nothing written
    assert roles.renew_subscription(w, "p_a", theirs.id, 9_999) is False
    assert roles.renew_subscription(w, "p_b", mine.id, 9_999) is False
    assert roles.renew_subscription(ws(), "p_a", mine.id, 9_999) is False
    assert roles.renew_subscription(w, "p_a", subscription_id("https://push.example.com/nobody"), 9_999) is False
    assert roles.list_subscriptions(w, "p_a") == [dataclasses.replace(mine, signed_in_until=9_000)]
    assert roles.list_subscriptions(w, "p_b") == [theirs]
    assert roles.list_subscriptions(ws(), "p_a") == []
    roles.remove_subscription(w, "p_a", mine.id)
    assert roles.renew_subscription(w, "p_a", mine.id, 10_000) is False  # gone: nothing comes back
    assert roles.list_subscriptions(w, "p_a") == []


def test_a_device_is_signed_in_until_its_session_ends(store):
    """Before ``signed_in_until`` the device is signed in, from it on not; a record an earlier
    release kept without it (None) counts as signed in until the session it was added with ended,
    at most a session's lifetime after ``created_at``."""
    w = ws()
    known = store.push_subscriptions.add_subscription(sub(w, "p_a", at=100, signed_in_until=500))
    earlier = store.push_subscriptions.add_subscription(sub(w, "p_a", at=200))
    [known, earlier] = store.push_subscriptions.list_subscriptions(w, "p_a")
    assert (known.signed_in_until, earlier.signed_in_until) == (500, None)
    assert known.signed_in(499) and not known.signed_in(500)
    assert earlier.signed_in(200 + SESSION_LIFETIME - 1) and not earlier.signed_in(200 + SESSION_LIFETIME)
    assert SESSION_LIFETIME == SESSION_TTL_SECONDS == 7 * 24 * 3600


@pytest.mark.parametrize("until", [-1, 2**53, "9000", 1.5, True])
def test_a_signed_in_time_that_is_no_time_is_refused_and_nothing_written(store, until):
    w = ws()
    with pytest.raises(BadInput) as refused:
        store.push_subscriptions.add_subscription(sub(w, "p_a", signed_in_until=until))
    assert refused.value.field == "signed_in_until"
    assert store.push_subscriptions.list_subscriptions(w, "p_a") == []


def test_a_database_of_an_earlier_release_gains_signed_in_until(tmp_path):
    """Schema 11: a push_subscriptions table made before it gains the column; its records read
    None (signed in until their session could have ended) and can be renewed."""
    path = str(tmp_path / "old.db")
    w = ws()
    first = SQLiteStore(path)
    kept = first.push_subscriptions.add_subscription(sub(w, "p_a", at=100))
    first.close()
    as_released_before(path, "push_subscriptions", "signed_in_until", 10)

    reopened = SQLiteStore(path)
    try:
        assert reopened.push_subscriptions.list_subscriptions(w, "p_a") == [kept]
        assert reopened.push_subscriptions.renew_subscription(w, "p_a", kept.id, 5_000) is True
        assert reopened.push_subscriptions.list_subscriptions(w, "p_a")[0].signed_in_until == 5_000
    finally:
        reopened.close()
    (version,) = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()
    assert version == 12
