"""Quiet-hours waits in the outbox (both stores): the cards Slack and push held for a person while
their quiet hours ran, one wait per channel, person and quiet hours; each card listed once; the
wait due when the quiet hours end; taken by exactly one sweep, in one conditional write that marks
it done before anything is shown; a wait taken holds no more cards; bad input writes nothing."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from countersign.store.errors import BadInput
from countersign.store.outbox import MAX_LISTED, NOTIFY_DONE, NOTIFY_PENDING, Notification, quiet_wait_id
from countersign.store.sqlite import SQLiteStore
from tests.store._factories import World
from tests.support.serial_moto import serialized_writes_and_reads

ENDS = 30_000  # when the person's quiet hours end


def wait_for(w: World, channel: str = "push", until: int = ENDS, at: int = 1000) -> Notification:
    return Notification(quiet_wait_id(channel, w.person.id, until), w.ws.id, w.person.id, at, due_at=until)


def test_cards_held_for_quiet_hours_join_one_wait_due_when_they_end(store):
    w = World(store)
    first, second = w.file(created_at=1000), w.file(created_at=1100)
    wait = wait_for(w)
    assert store.outbox.hold_for_quiet_hours(wait, first.id) is True
    assert store.outbox.hold_for_quiet_hours(dataclasses.replace(wait, created_at=1100), second.id) is True
    assert store.outbox.hold_for_quiet_hours(wait, first.id) is True  # a stream record delivered twice
    held = store.outbox.get_notification(wait.card_id)
    assert (held.state, held.due_at, held.created_at, held.attempts, held.listed) == (
        NOTIFY_PENDING, ENDS, 1000, 0, (first.id, second.id))
    assert wait.card_id not in {n.card_id for n in store.outbox.due_notifications(now=ENDS - 1, limit=50)}
    assert wait.card_id in {n.card_id for n in store.outbox.due_notifications(now=ENDS, limit=50)}


def test_each_channel_and_each_quiet_hours_have_their_own_wait(store):
    w = World(store)
    c = w.file(created_at=1000)
    for wait in (wait_for(w, "slack"), wait_for(w, "push"), wait_for(w, "push", until=ENDS + 86_400)):
        assert store.outbox.hold_for_quiet_hours(wait, c.id) is True
        assert store.outbox.get_notification(wait.card_id).listed == (c.id,)


def test_a_wait_is_taken_once_when_due_and_done_before_anything_is_shown(store):
    w = World(store)
    c = w.file(created_at=1000)
    wait = wait_for(w)
    store.outbox.hold_for_quiet_hours(wait, c.id)
    assert store.outbox.take_notification(wait.card_id, now=ENDS - 1, outcome="quiet_hours_ended") is None
    taken = store.outbox.take_notification(wait.card_id, now=ENDS, outcome="quiet_hours_ended")
    assert (taken.card_id, taken.person_id, taken.workspace_id, taken.listed) == (
        wait.card_id, w.person.id, w.ws.id, (c.id,))
    done = store.outbox.get_notification(wait.card_id)
    assert (done.state, done.outcome, done.done_at) == (NOTIFY_DONE, "quiet_hours_ended", ENDS)
    assert store.outbox.take_notification(wait.card_id, now=ENDS + 60, outcome="quiet_hours_ended") is None
    assert wait.card_id not in {n.card_id for n in store.outbox.due_notifications(now=ENDS + 60, limit=50)}
    # a card held after its wait was taken is refused (its holder shows it another way), nothing written
    later = w.file(created_at=1200)
    assert store.outbox.hold_for_quiet_hours(wait, later.id) is False
    assert store.outbox.get_notification(wait.card_id).listed == (c.id,)


def test_a_card_notification_is_never_taken_while_leased(store):
    w = World(store)
    c = w.file(created_at=1000)
    store.outbox.lease_notification(c.id, now=1000, lease_seconds=60)
    assert store.outbox.take_notification(c.id, now=1001, outcome="x") is None
    assert store.outbox.take_notification("quiet.push.nobody.1", now=1001, outcome="x") is None  # none such


def test_a_full_wait_holds_no_more(store):
    w = World(store)
    wait = wait_for(w)
    for i in range(MAX_LISTED):
        assert store.outbox.hold_for_quiet_hours(wait, f"card{i:04d}") is True
    assert store.outbox.hold_for_quiet_hours(wait, "card9999") is False
    assert store.outbox.hold_for_quiet_hours(wait, "card0007") is True  # listed already
    assert len(store.outbox.get_notification(wait.card_id).listed) == MAX_LISTED


@pytest.mark.parametrize("change, card_id", [
    ({"card_id": "digest.p1.5"}, "card1"),
    ({"card_id": "quiet.fax.p1.5"}, "card1"),
    ({"card_id": "card_01abc"}, "card1"),
    ({"state": NOTIFY_DONE}, "card1"),
    ({"attempts": 1}, "card1"),
    ({"listed": ("card0",)}, "card1"),
    ({}, ""),
    ({}, "quiet.push.p1.5"),
])
def test_a_wait_that_is_not_one_is_refused_and_nothing_written(store, change, card_id):
    w = World(store)
    bad = dataclasses.replace(wait_for(w), **change)
    with pytest.raises(BadInput):
        store.outbox.hold_for_quiet_hours(bad, card_id)
    assert store.outbox.get_notification(bad.card_id) is None
    assert store.outbox.due_notifications(now=10 * ENDS) == []


# -- two sweeps at the same instant: one takes the wait --------------------------------------------


@pytest.fixture(params=["sqlite", "dynamodb"])
def racing_store(request, tmp_path) -> Iterator[Any]:
    if request.param == "sqlite":
        s = SQLiteStore(str(tmp_path / "quiet-races.db"))
        yield s
        s.close()
        return
    from tests.support.aws import moto_dynamodb_store

    with moto_dynamodb_store() as s, serialized_writes_and_reads():
        yield s


def test_of_sweeps_racing_for_a_wait_exactly_one_takes_it(racing_store):
    w = World(racing_store)
    for round_ in range(3):
        wait = wait_for(w, until=ENDS + round_)
        racing_store.outbox.hold_for_quiet_hours(wait, w.file(created_at=1000 + round_).id)
        barrier = threading.Barrier(4)

        def take(barrier: threading.Barrier = barrier, wait_id: str = wait.card_id) -> Notification | None:
            barrier.wait()
            return racing_store.outbox.take_notification(wait_id, now=ENDS + 10, outcome="quiet_hours_ended")

        with ThreadPoolExecutor(4) as pool:
            taken = [f.result() for f in [pool.submit(take) for _ in range(4)]]
        assert sum(t is not None for t in taken) == 1
