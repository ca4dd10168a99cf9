"""The digest stays one email per person per interval when deliveries race: two sweeps (two
processes, or the local sweep and AWS's scheduled function) and a card filed at the end of the
interval, all at once; and two invocations delivering the same digest check. Both stores."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from countersign.notify import CardNotifier, Email
from countersign.store.outbox import digest_id
from tests.store._factories import World
from tests.support.serial_moto import serialized_writes_and_reads

from ._helpers import file_card

INTERVAL = 900
PERSONS = 4


@pytest.fixture(autouse=True)
def atomic_writes():
    """On DynamoDB each conditional write is atomic; moto's are not under threads (its check and its
    write are two steps), and a query walking a partition while another thread writes it fails in
    moto (never on DynamoDB, whose reads see one committed state): serialize each write and read so
    the store's conditions, not moto, decide the races."""
    with serialized_writes_and_reads():
        yield


class Inbox:
    """A sender several threads share: keeps every email it is given."""

    from_address = "countersign@localhost"

    def __init__(self):
        self.lock = threading.Lock()
        self.emails: list[Email] = []

    def send(self, email: Email) -> None:
        with self.lock:
            self.emails.append(email)

    def to(self, address: str) -> list[Email]:
        with self.lock:
            return [e for e in self.emails if e.to == address]


def run_together(*calls):
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return [f.result() for f in [pool.submit(run, c) for c in calls]]


def test_two_sweeps_and_a_filing_at_the_end_of_the_interval_send_one_email(store, settings, clock):
    inbox = Inbox()
    processes = [CardNotifier(store, inbox, settings, clock) for _ in range(3)]
    world = World(store)
    persons = [world.person] + [world.add_person() for _ in range(PERSONS - 1)]
    start = int(clock.now)
    for person in persons:
        assert processes[0](file_card(world, start, title="First", who=person)) == "email_sent"
    clock.now = start + 60
    for person in persons:
        assert processes[1](file_card(world, clock.now, title="Meanwhile", who=person)) == "email_rate_limited"

    clock.now = start + INTERVAL
    arriving = [file_card(world, clock.now, title="Arriving", who=person) for person in persons]

    def deliver_arriving():
        return [processes[2](card) for card in arriving]

    run_together(processes[0].sweep, processes[1].sweep, deliver_arriving)
    for person in persons:
        emails = inbox.to(person.email)
        assert len(emails) == 2, [e.subject for e in emails]
        assert "  - Meanwhile\n" in emails[1].text  # whichever won, it told of the card that waited

    clock.now = start + 2 * INTERVAL + 60  # every follow-up: the cards were all told of
    run_together(processes[0].sweep, processes[1].sweep)
    for person in persons:
        assert len(inbox.to(person.email)) == 2


def test_two_invocations_delivering_one_digest_check_send_one_email(store, settings, clock):
    inbox = Inbox()
    first, second = CardNotifier(store, inbox, settings, clock), CardNotifier(store, inbox, settings, clock)
    world = World(store)
    start = int(clock.now)
    assert first(file_card(world, start, title="First")) == "email_sent"
    clock.now = start + 60
    assert first(file_card(world, clock.now, title="Meanwhile")) == "email_rate_limited"
    clock.now = start + INTERVAL
    check = digest_id(world.person.id, start)
    outcomes = run_together(lambda: first.deliver(check), lambda: second.deliver(check))
    assert sorted(outcomes, key=str) == sorted(["email_sent", None], key=str)  # the other found it leased
    assert [e.subject for e in inbox.to(world.person.email)] == [
        "1 request waits for your confirmation", "1 more request is waiting for your confirmation"]
