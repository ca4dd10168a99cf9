"""At most one email per person per interval, end to end: each store × each sender (outbox, SMTP, SES)."""

from __future__ import annotations

import logging

from countersign.core.card_states import CardState
from countersign.notify import CardNotifier
from tests.store._factories import World

from ._helpers import file_card, parts

INTERVAL = 900


def notifier_for(store, channel, settings, clock, events=None):
    return CardNotifier(store, channel.sender, settings, clock, on_event=None if events is None else events.append)


def test_a_burst_sends_one_email_and_the_next_interval_another(store, channel, settings, clock):
    world = World(store)
    events: list[str] = []
    notify = notifier_for(store, channel, settings, clock, events)
    start = clock.now
    for i in range(20):  # 20 cards within 15 minutes
        clock.now = start + i * 45
        notify(file_card(world, clock.now, title=f"Request {i:02d}"))
    assert clock.now - start < INTERVAL
    sent = channel.sent()
    assert len(sent) == 1
    assert sent[0]["To"] == world.person.email
    assert sent[0]["Subject"] == "1 request waits for your confirmation"
    assert events == ["email_sent"] + ["email_rate_limited"] * 19

    clock.now = start + INTERVAL
    notify(file_card(world, clock.now, title="Request 20"))
    sent = channel.sent()
    assert len(sent) == 2
    assert sent[1]["Subject"] == "21 requests wait for your confirmation"
    text, html = parts(sent[1])
    assert "Request 00" in text and "Request 09" in text and "… and 11 more" in text
    assert "Request 00" in html
    assert notify.counts == {"email_sent": 2, "email_rate_limited": 19}


def test_persons_are_rate_limited_independently(store, channel, settings, clock):
    world = World(store)
    other = world.add_person()
    notify = notifier_for(store, channel, settings, clock)
    notify(file_card(world, clock.now, title="For Pat"))
    clock.now += 60
    notify(file_card(world, clock.now, title="For the other", who=other))
    clock.now += 60
    notify(file_card(world, clock.now, title="For Pat again"))
    notify(file_card(world, clock.now, title="For the other again", who=other))
    sent = channel.sent()
    assert sorted(m["To"] for m in sent) == sorted([world.person.email, other.email])


def test_the_setting_off_sends_nothing_and_claims_nothing(store, channel, settings, clock):
    world = World(store)
    store.workspaces.update_person(world.ws.id, world.person.id, agent_requests_email=False)
    notify = notifier_for(store, channel, settings, clock)
    for i in range(3):
        clock.now += 10
        assert notify(file_card(world, clock.now, title=f"Quiet {i}")) == "email_disabled"
    assert channel.sent() == []
    # turning it back on emails at once: nothing was claimed while it was off
    store.workspaces.update_person(world.ws.id, world.person.id, agent_requests_email=True)
    clock.now += 10
    assert notify(file_card(world, clock.now, title="Loud")) == "email_sent"
    assert len(channel.sent()) == 1


def test_a_failed_send_releases_the_slot(store, channel, settings, clock, caplog):
    world = World(store)
    events: list[str] = []
    notify = CardNotifier(store, channel.failing, settings, clock, on_event=events.append)
    with caplog.at_level(logging.WARNING, logger="countersign.notify"):
        assert notify(file_card(world, clock.now, title="Lost TITLE-MARKER")) == "email_failed"  # never raised
    assert channel.sent() == []
    (record,) = [r for r in caplog.records if r.name == "countersign.notify"]
    assert record.getMessage().startswith(f"email to {world.person.email} failed: ")
    assert "TITLE-MARKER" not in record.getMessage() and record.exc_info is None

    notify.sender = channel.sender
    clock.now += 60
    assert notify(file_card(world, clock.now, title="Found")) == "email_sent"
    clock.now += 60
    assert notify(file_card(world, clock.now, title="Quiet")) == "email_rate_limited"
    sent = channel.sent()
    assert len(sent) == 1 and sent[0]["Subject"] == "2 requests wait for your confirmation"
    assert events == ["email_failed", "email_sent", "email_rate_limited"]


def test_a_card_answered_before_the_email_releases_the_slot(store, channel, settings, clock):
    world = World(store)
    notify = notifier_for(store, channel, settings, clock)
    card = file_card(world, clock.now, title="Answered in the client")
    world.move(card, CardState.WITHDRAWN, int(clock.now))
    assert notify(card) == "email_nothing_pending"
    clock.now += 30
    assert notify(file_card(world, clock.now, title="Still waiting")) == "email_sent"
    assert len(channel.sent()) == 1
