"""A card's reminder, word for word, as each sender delivers it (the local outbox, SMTP, SES on moto),
on both stores, with the clock the test moves: sent once when due and only while the card waits;
put back for quiet hours and for another email's interval; never twice, even with two sweepers."""

from __future__ import annotations

import dataclasses
import re
from zoneinfo import ZoneInfo

from countersign.core.card_states import CardState
from countersign.notify import CardNotifier
from countersign.store.outbox import NOTIFY_DONE, reminder_id
from countersign.store.workspaces import QuietHours
from tests.store._factories import World, card, filed

from ._helpers import file_card
from .conftest import PUBLIC_URL
from .test_card_email_words import WHY, delivered
from .test_quiet_hours import at

WAIT, BEFORE = 7200, 1800
UTC = ZoneInfo("UTC")


def file_with_reminder(world: World, now: int, title: str = "Pay invoice 7", declined: bool = False,
                       notify: bool = True):
    """A card filed at ``now`` whose lifetime has a reminder :data:`BEFORE` its deadline."""
    lifetime = {"wait": WAIT, "lapse": "declined" if declined else "expired", "remind_at": now + WAIT - BEFORE}
    c = dataclasses.replace(card(world.ws, world.person, world.conn, created_at=now, ttl=WAIT), title=title,
                            lifetime=lifetime)
    world.store.cards.file_card(c, filed(c), notify=notify)
    return c


def notifier(store, channel, settings, clock, events=None) -> CardNotifier:
    return CardNotifier(store, channel.sender, settings, clock, on_event=None if events is None else events.append)


def test_the_reminder_goes_out_once_when_due_word_for_word(store, channel, settings, clock):
    world = World(store, name="Acme Mail")
    events: list[str] = []
    notify = notifier(store, channel, settings, clock, events)
    start = clock.now = at("2026-03-02 10:00")
    card = file_with_reminder(world, start)
    assert notify(card) == "email_sent"
    clock.now = start + WAIT - BEFORE - 1
    notify.sweep()
    assert len(channel.sent()) == 1  # the card's own email; the reminder is not due yet

    clock.now = start + WAIT - BEFORE
    notify.sweep()
    sent = channel.sent()
    assert len(sent) == 2
    message = sent[1]
    assert message["To"] == world.person.email
    assert message["Subject"] == "Reminder: a request lapses in 30 minutes"
    text, html = delivered(message)
    link = f"{PUBLIC_URL}/confirm?card={card.id}"
    assert text.rstrip("\n") == "\n".join([
        "Hello Pat,",
        "",
        "A request in Acme Mail still waits for your confirmation, and lapses in 30 minutes (2026-03-02 11:00:00 UTC):",
        "",
        "  - Pay invoice 7",
        "    Asked by Claude on laptop",
        "",
        "If no one answers by then, it expires: nothing runs.",
        "",
        "Review it, then confirm or decline it:",
        link,
        "",
        "Nothing runs until you confirm it.",
        "",
        "-- ",
        WHY,
    ])
    assert re.findall(r'href="([^"]*)"', html) == [link.replace("&", "&amp;")]
    assert card.ticket not in text + html
    done = store.outbox.get_notification(reminder_id(card.id))
    assert (done.state, done.outcome) == (NOTIFY_DONE, "email_reminder_sent")
    assert events.count("email_reminder_sent") == 1

    clock.now += 600  # later sweeps, and a second sweeper, find it done
    notify.sweep()
    notifier(store, channel, settings, clock).sweep()
    assert len(channel.sent()) == 2


def test_a_lapse_that_counts_as_declined_says_so(store, channel, settings, clock):
    world = World(store, name="Acme Mail")
    notify = notifier(store, channel, settings, clock)
    start = clock.now = at("2026-03-02 10:00")
    assert notify(file_with_reminder(world, start, declined=True)) == "email_sent"
    clock.now = start + WAIT - BEFORE
    notify.sweep()
    text, _ = delivered(channel.sent()[-1])
    assert "If no one answers by then, it counts as declined: nothing runs, and the agent is told no." in text


def test_no_reminder_for_a_card_answered_before_it_was_due(store, channel, settings, clock):
    world = World(store)
    events: list[str] = []
    notify = notifier(store, channel, settings, clock, events)
    start = clock.now = at("2026-03-02 10:00")
    card = file_with_reminder(world, start)
    world.move(card, CardState.DECLINED, start + 60)
    clock.now = start + WAIT - BEFORE
    notify.sweep()
    assert channel.sent() == []  # (its own email was never delivered here either)
    assert store.outbox.get_notification(reminder_id(card.id)).outcome == "email_nothing_pending"


def test_the_reminder_waits_for_quiet_hours_and_is_dropped_if_the_card_lapses_meanwhile(store, channel, settings,
                                                                                          clock):
    world = World(store, name="Acme")
    store.workspaces.update_person(world.ws.id, world.person.id,
                                   quiet_hours=QuietHours(start="11:00", end="11:45", zone="UTC"))
    events: list[str] = []
    notify = notifier(store, channel, settings, clock, events)
    start = at("2026-03-02 10:00", zone=UTC)
    cards = {}
    for filed_at, title in ((start - 3600, "Lapses at 11:00"), (start - 1200, "Lapses at 11:40"),
                            (start, "Lapses at 12:00")):
        cards[title] = file_with_reminder(world, filed_at, title=title, notify=False)  # its own email aside

    def reminders() -> list[str]:
        return [m["Subject"] for m in channel.sent() if m["Subject"].startswith("Reminder")]

    clock.now = start + 1800  # 10:30: the first one's reminder, before quiet hours
    notify.sweep()
    assert reminders() == ["Reminder: a request lapses in 30 minutes"]
    clock.now = start + 4200  # 11:10, quiet: the second one's is put back until 11:45 (after it lapses)
    notify.sweep()
    clock.now = start + 5400  # 11:30, quiet: the third one's too
    notify.sweep()
    assert reminders() == ["Reminder: a request lapses in 30 minutes"]
    for title in ("Lapses at 11:40", "Lapses at 12:00"):
        assert store.outbox.get_notification(reminder_id(cards[title].id)).due_at == start + 6300
    clock.now = start + 6300  # 11:45
    notify.sweep()
    assert reminders() == ["Reminder: a request lapses in 30 minutes", "Reminder: a request lapses in 15 minutes"]
    text, _ = delivered([m for m in channel.sent() if m["Subject"].startswith("Reminder")][-1])
    assert "  - Lapses at 12:00" in text
    lapsed = store.outbox.get_notification(reminder_id(cards["Lapses at 11:40"].id))
    assert (lapsed.state, lapsed.outcome) == (NOTIFY_DONE, "email_nothing_pending")


def test_another_emails_interval_holds_the_reminder_until_it_ends(store, channel, settings, clock):
    world = World(store, name="Acme")
    events: list[str] = []
    notify = notifier(store, channel, settings, clock, events)
    start = clock.now = at("2026-03-02 10:00")
    first = file_with_reminder(world, start, title="Pay invoice 7")
    clock.now = start + WAIT - BEFORE - 60  # a new card's email takes the slot a minute before the reminder
    second = file_card(world, clock.now, title="Buy 20.00 credits")
    assert notify(second) == "email_sent"
    clock.now = start + WAIT - BEFORE
    notify.sweep()
    assert len(channel.sent()) == 1 and "email_reminder_waits" in events
    assert store.outbox.get_notification(reminder_id(first.id)).due_at == clock.now + 60
    clock.now = start + WAIT - BEFORE - 60 + settings.email_interval  # the interval ends
    notify.sweep()
    subjects = [m["Subject"] for m in channel.sent()]
    assert subjects == ["2 requests wait for your confirmation", "Reminder: a request lapses in 16 minutes"]
    assert events.count("email_reminder_sent") == 1
