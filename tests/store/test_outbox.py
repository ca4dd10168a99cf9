"""The transactional outbox: each filed card owes one notification, leased by its sender (both stores)."""

from __future__ import annotations

import dataclasses

import pytest

from countersign.store.errors import BadInput
from countersign.store.outbox import NOTIFY_DONE, NOTIFY_PENDING, NOTIFY_SENDING
from tests.store._factories import World, card, filed


def test_filing_records_the_notification_with_the_card(store):
    w = World(store)
    c = w.file(created_at=1000)
    n = store.outbox.get_notification(c.id)
    assert (n.card_id, n.workspace_id, n.person_id, n.state, n.due_at, n.attempts) == (
        c.id, w.ws.id, w.person.id, NOTIFY_PENDING, 1000, 0)
    assert [x.card_id for x in store.outbox.due_notifications(now=1000)] == [c.id]


def test_a_card_filed_without_notice_owes_none(store):
    w = World(store)
    c = card(w.ws, w.person, w.conn, created_at=1000)
    store.cards.file_card(c, filed(c), notify=False)
    assert store.outbox.get_notification(c.id) is None and store.outbox.due_notifications(now=5000) == []


def test_one_sender_leases_it_and_finishes_it(store):
    w = World(store)
    c = w.file(created_at=1000)
    leased = store.outbox.lease_notification(c.id, now=1001, lease_seconds=60)
    assert (leased.state, leased.lease_until) == (NOTIFY_SENDING, 1061)
    assert store.outbox.lease_notification(c.id, now=1002, lease_seconds=60) is None  # another sender
    assert store.outbox.due_notifications(now=1060) == []
    store.outbox.finish_notification(c.id, now=1003, outcome="email_sent")
    done = store.outbox.get_notification(c.id)
    assert (done.state, done.outcome, done.done_at) == (NOTIFY_DONE, "email_sent", 1003)
    assert store.outbox.lease_notification(c.id, now=9999, lease_seconds=60) is None
    assert store.outbox.due_notifications(now=9999) == []


def test_a_lapsed_lease_is_due_again_and_can_be_taken_over(store):
    w = World(store)
    c = w.file(created_at=1000)
    store.outbox.lease_notification(c.id, now=1001, lease_seconds=60)  # that sender dies
    assert [n.card_id for n in store.outbox.due_notifications(now=1061)] == [c.id]
    again = store.outbox.lease_notification(c.id, now=1061, lease_seconds=60)
    assert again is not None and again.lease_until == 1121


def test_a_failed_send_is_retried_later(store):
    w = World(store)
    c = w.file(created_at=1000)
    store.outbox.lease_notification(c.id, now=1001, lease_seconds=60)
    store.outbox.retry_notification(c.id, now=1002, due_at=1300)
    n = store.outbox.get_notification(c.id)
    assert (n.state, n.attempts, n.due_at) == (NOTIFY_PENDING, 1, 1300)
    assert (
        store.outbox.due_notifications(now=1299) == [] and store.outbox.lease_notification(c.id, now=1299,
                                                                                           lease_seconds=60) is None
    )
    assert [x.card_id for x in store.outbox.due_notifications(now=1300)] == [c.id]


def test_due_notifications_come_oldest_first_and_up_to_the_limit(store):
    w = World(store)
    ids = [w.file(created_at=1000 + i).id for i in range(5)]
    assert [n.card_id for n in store.outbox.due_notifications(now=2000, limit=3)] == ids[:3]
    assert [n.card_id for n in store.outbox.due_notifications(now=1002)] == ids[:3]


# -- digest checks: a notification of no card, added once per claim ----------------------------


def digest_check(w: World, claimed_at: int = 1000, interval: int = 900, listed: tuple[str, ...] = ()):
    from countersign.store.outbox import Notification, digest_id

    return Notification(digest_id(w.person.id, claimed_at), w.ws.id, w.person.id, claimed_at - 120,
                        due_at=claimed_at + interval, listed=listed)


def test_a_digest_check_is_added_once_and_due_when_the_interval_ends(store):
    w = World(store)
    told = w.file(created_at=1000)
    check = digest_check(w, listed=(told.id,))
    assert store.outbox.add_notification(check) is True
    assert store.outbox.add_notification(dataclasses.replace(check, listed=())) is False  # another process's
    assert store.outbox.get_notification(check.card_id) == check  # the first one, its list kept
    assert store.outbox.due_notifications(now=1899) == [store.outbox.get_notification(told.id)]
    assert [n.card_id for n in store.outbox.due_notifications(now=1900)] == [told.id, check.card_id]
    leased = store.outbox.lease_notification(check.card_id, now=1900, lease_seconds=60)
    assert (leased.state, leased.listed) == (NOTIFY_SENDING, (told.id,))


def test_a_deferred_notification_waits_without_an_attempt_counted(store):
    w = World(store)
    c = w.file(created_at=1000)
    store.outbox.lease_notification(c.id, now=1000, lease_seconds=60)
    store.outbox.defer_notification(c.id, due_at=5000)
    n = store.outbox.get_notification(c.id)
    assert (n.state, n.due_at, n.attempts, n.lease_until) == (NOTIFY_PENDING, 5000, 0, 0)
    assert store.outbox.due_notifications(now=4999) == []
    assert store.outbox.lease_notification(c.id, now=4999, lease_seconds=60) is None
    assert store.outbox.lease_notification(c.id, now=5000, lease_seconds=60) is not None
    store.outbox.finish_notification(c.id, now=5001, outcome="email_sent")
    store.outbox.defer_notification(c.id, due_at=9000)  # done stays done
    assert store.outbox.get_notification(c.id).state == NOTIFY_DONE


@pytest.mark.parametrize("change", [
    {"card_id": "card_01abc"},  # a card's notification is filed with its card
    {"state": NOTIFY_SENDING},
    {"attempts": 1},
    {"listed": tuple(f"card_{i}" for i in range(501))},
])
def test_a_digest_check_that_is_not_one_is_refused_and_nothing_written(store, change):
    w = World(store)
    bad = dataclasses.replace(digest_check(w), **change)
    with pytest.raises(BadInput):
        store.outbox.add_notification(bad)
    assert store.outbox.get_notification(bad.card_id) is None
    assert store.outbox.due_notifications(now=10_000) == []
