"""Notifications survive crashes: the notification is recorded with the card, and whoever sweeps
delivers what is owed — at least once, and still at most one email per person per interval
(both stores; the outbox-folder sender, whose files are what a person would receive)."""

from __future__ import annotations

from countersign.notify import CardNotifier, OutboxSender
from countersign.notify.card_emails import MAX_ATTEMPTS
from countersign.store.outbox import NOTIFY_DONE, NOTIFY_PENDING
from tests.store._factories import World
from tests.support.stores import with_roles

from ._helpers import file_card

LEASE_SECONDS = 120  # the default COUNTERSIGN_RUN_LEASE


def notifier(store, sender, settings, clock, events=None):
    return CardNotifier(store, sender, settings, clock, on_event=None if events is None else events.append)


def test_a_card_whose_process_died_before_emailing_is_emailed_by_the_sweep(store, settings, clock, tmp_path):
    world = World(store)
    outbox = OutboxSender(tmp_path / "outbox")
    card = file_card(world, clock.now, title="Filed, then the process died")  # nothing sent inline
    assert list(outbox.files()) == []
    sweeper = notifier(store, outbox, settings, clock)
    assert sweeper.sweep() == 1
    assert len(list(outbox.files())) == 1
    assert store.outbox.get_notification(card.id).state == NOTIFY_DONE
    assert sweeper.sweep() == 0 and len(list(outbox.files())) == 1


def test_a_sender_that_died_mid_delivery_is_taken_over_when_its_lease_lapses(store, settings, clock, tmp_path):
    world = World(store)
    outbox = OutboxSender(tmp_path / "outbox")
    card = file_card(world, clock.now)
    store.outbox.lease_notification(card.id, int(clock.now), LEASE_SECONDS)  # a sender took it, then died
    sweeper = notifier(store, outbox, settings, clock)
    assert sweeper.sweep() == 0 and list(outbox.files()) == []
    clock.now += LEASE_SECONDS
    assert sweeper.sweep() == 1 and len(list(outbox.files())) == 1


def test_a_failed_send_is_tried_again_later_and_then_given_up(store, settings, clock, tmp_path):
    world = World(store)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where a folder should be")
    failing, working = OutboxSender(blocked / "outbox"), OutboxSender(tmp_path / "outbox")
    card = file_card(world, clock.now)
    events: list[str] = []
    assert notifier(store, failing, settings, clock, events)(card) == "email_failed"
    owed = store.outbox.get_notification(card.id)
    assert (owed.state, owed.attempts) == (NOTIFY_PENDING, 1) and owed.due_at > clock.now
    assert notifier(store, working, settings, clock).sweep() == 0  # not due yet
    clock.now = owed.due_at
    assert notifier(store, working, settings, clock).sweep() == 1
    assert len(list(working.files())) == 1 and store.outbox.get_notification(card.id).outcome == "email_sent"
    # a send that keeps failing stops after MAX_ATTEMPTS, recorded as failed
    other = file_card(world, clock.now + 1000, title="Never delivered")
    clock.now += 1000
    for _ in range(MAX_ATTEMPTS):
        notifier(store, failing, settings, clock).deliver(other.id)
        clock.now += 3600
    gone = store.outbox.get_notification(other.id)
    assert (gone.state, gone.outcome) == (NOTIFY_DONE, "email_failed")


def test_a_burst_owed_after_a_crash_still_sends_one_email(store, settings, clock, tmp_path):
    world = World(store)
    outbox = OutboxSender(tmp_path / "outbox")
    for i in range(5):
        file_card(world, clock.now + i, title=f"Request {i}")
    clock.now += 10
    events: list[str] = []
    assert notifier(store, outbox, settings, clock, events).sweep() == 5
    assert sorted(events) == ["email_rate_limited"] * 4 + ["email_sent"]
    assert len(list(outbox.files())) == 1


class _FinishRefusedOnce:
    """The outbox, refusing the first record of a delivery's outcome (as DynamoDB does when it
    throttles past botocore's own retries)."""

    def __init__(self, outbox):
        self._outbox, self.refused = outbox, 0

    def finish_notification(self, *args, **kwargs):
        if not self.refused:
            self.refused += 1
            from countersign.store.errors import StoreUnavailable

            raise StoreUnavailable("throttled")
        return self._outbox.finish_notification(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._outbox, name)


def test_an_outcome_the_store_refused_once_is_recorded_and_the_email_never_sent_twice(store, settings, clock,
                                                                                      tmp_path):
    world = World(store)
    outbox = OutboxSender(tmp_path / "outbox")
    card = file_card(world, clock.now)
    flaky = _FinishRefusedOnce(store.outbox)
    pauses: list[float] = []
    sender = CardNotifier(with_roles(store, outbox=flaky), outbox, settings, clock, pause=pauses.append)
    assert sender(card) == "email_sent" and flaky.refused == 1 and len(pauses) == 1
    assert store.outbox.get_notification(card.id).state == NOTIFY_DONE
    clock.now += LEASE_SECONDS + 1  # a sweep after the lease would have taken an unfinished one again
    assert notifier(store, outbox, settings, clock).sweep() == 0
    assert len(list(outbox.files())) == 1
