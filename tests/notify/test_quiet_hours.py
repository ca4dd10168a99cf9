"""Quiet hours: while they run no card email goes out; when they end one email lists what still
waits (not the cards answered or lapsed meanwhile). Each store × each sender, the clock moved by
the test; and when quiet hours end, across midnight and daylight saving time."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from countersign.core.card_states import CardState
from countersign.notify import CardNotifier
from countersign.notify.quiet_hours import quiet_until
from countersign.store.outbox import digest_id
from countersign.store.workspaces import QuietHours
from tests.store._factories import World

from ._helpers import file_card
from .conftest import PUBLIC_URL
from .test_card_email_words import WHY, delivered

BERLIN = ZoneInfo("Europe/Berlin")
NIGHTS = QuietHours(start="22:00", end="07:00", zone="Europe/Berlin")


def at(text: str, zone: ZoneInfo = BERLIN) -> int:
    """Epoch seconds of a local time, e.g. ``at("2026-01-15 23:00")``."""
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=zone).timestamp())


def quiet_world(store, quiet: QuietHours = NIGHTS) -> World:
    world = World(store, name="Acme")
    store.workspaces.update_person(world.ws.id, world.person.id, quiet_hours=quiet)
    return world


def test_nothing_is_sent_in_quiet_hours_and_one_email_when_they_end(store, channel, settings, clock):
    world = quiet_world(store)
    events: list[str] = []
    notify = CardNotifier(store, channel.sender, settings, clock, on_event=events.append)
    clock.now = at("2026-01-15 23:00")
    first = file_card(world, clock.now, title="Pay invoice 7")
    assert notify(first) == "email_quiet_hours"
    clock.now = at("2026-01-15 23:30")
    second = file_card(world, clock.now, title="Buy 20.00 credits")
    assert notify(second) == "email_quiet_hours"
    clock.now = at("2026-01-16 00:30")
    withdrawn = file_card(world, clock.now, title="Withdrawn at night")
    assert notify(withdrawn) == "email_quiet_hours"
    world.move(withdrawn, CardState.WITHDRAWN, at("2026-01-16 01:00"))
    lapsed = file_card(world, clock.now, title="Lapsed at night", expires_at=at("2026-01-16 05:00"))
    assert notify(lapsed) == "email_quiet_hours"
    assert channel.sent() == []
    assert store.outbox.get_notification(first.id).due_at == at("2026-01-16 07:00")

    clock.now = at("2026-01-16 06:59")
    notify.sweep()
    assert channel.sent() == []

    clock.now = at("2026-01-16 07:00")
    notify.sweep()
    [message] = channel.sent()
    assert message["Subject"] == "2 requests wait for your confirmation"
    text, html = delivered(message)
    assert text.rstrip("\n") == "\n".join([
        "Hello Pat,",
        "",
        "2 requests wait for your confirmation in Acme:",
        "",
        "  - Pay invoice 7",
        "    Asked by Claude on laptop",
        "  - Buy 20.00 credits",
        "    Asked by Claude on laptop",
        "",
        "Review them, then confirm or decline each one:",
        f"{PUBLIC_URL}/confirm",
        "",
        "Nothing runs until you confirm it.",
        "",
        "-- ",
        WHY,
    ])
    assert "at night" not in html
    assert events.count("email_sent") == 1 and events.count("email_quiet_hours") == 4
    clock.now = at("2026-01-16 08:00")
    notify.sweep()
    assert len(channel.sent()) == 1


def test_the_digest_due_in_quiet_hours_goes_out_when_they_end(store, channel, settings, clock):
    world = quiet_world(store)
    notify = CardNotifier(store, channel.sender, settings, clock)
    clock.now = at("2026-01-15 21:50")
    assert notify(file_card(world, clock.now, title="Before the night")) == "email_sent"
    clock.now = at("2026-01-15 21:55")
    assert notify(file_card(world, clock.now, title="Just before")) == "email_rate_limited"
    clock.now = at("2026-01-15 22:05")  # the interval ends inside the quiet hours
    notify.sweep()
    check = store.outbox.get_notification(digest_id(world.person.id, at("2026-01-15 21:50")))
    assert (check.state, check.due_at, check.attempts) == ("pending", at("2026-01-16 07:00"), 0)
    assert len(channel.sent()) == 1
    clock.now = at("2026-01-16 07:00")
    notify.sweep()
    sent = channel.sent()
    assert [m["Subject"] for m in sent] == ["1 request waits for your confirmation",
                                            "1 more request is waiting for your confirmation"]
    text, _ = delivered(sent[1])
    assert "  - Just before\n" in text and "1 earlier request still waits too.\n" in text


def test_outside_quiet_hours_an_email_goes_at_once(store, channel, settings, clock):
    world = quiet_world(store)
    notify = CardNotifier(store, channel.sender, settings, clock)
    clock.now = at("2026-01-16 07:00")  # the end is not quiet
    assert notify(file_card(world, clock.now, title="Morning")) == "email_sent"


def test_a_card_that_waited_out_the_night_owes_nothing_once_answered(store, channel, settings, clock):
    world = quiet_world(store)
    notify = CardNotifier(store, channel.sender, settings, clock)
    clock.now = at("2026-01-15 12:00")
    assert notify(file_card(world, clock.now, title="Told at noon")) == "email_sent"
    clock.now = at("2026-01-15 23:00")
    night = file_card(world, clock.now, title="Answered at night")
    assert notify(night) == "email_quiet_hours"
    world.move(night, CardState.DECLINED, at("2026-01-16 02:00"))
    clock.now = at("2026-01-16 07:00")
    notify.sweep()
    assert len(channel.sent()) == 1  # the card from noon still waits, but nothing new does
    assert store.outbox.get_notification(night.id).outcome == "email_nothing_pending"


# -- when quiet hours end ------------------------------------------------------------------------


def test_quiet_hours_across_midnight():
    assert quiet_until(NIGHTS, at("2026-01-15 21:59")) is None
    assert quiet_until(NIGHTS, at("2026-01-15 22:00")) == at("2026-01-16 07:00")
    assert quiet_until(NIGHTS, at("2026-01-16 03:00")) == at("2026-01-16 07:00")
    assert quiet_until(NIGHTS, at("2026-01-16 07:00")) is None
    assert quiet_until(None, at("2026-01-16 03:00")) is None


def test_quiet_hours_within_one_day():
    lunch = QuietHours(start="12:00", end="13:30", zone="Asia/Tokyo")
    tokyo = ZoneInfo("Asia/Tokyo")
    assert quiet_until(lunch, at("2026-05-01 11:59", tokyo)) is None
    assert quiet_until(lunch, at("2026-05-01 12:10", tokyo)) == at("2026-05-01 13:30", tokyo)
    assert quiet_until(lunch, at("2026-05-01 13:30", tokyo)) is None


def test_quiet_hours_over_a_daylight_saving_change():
    new_york = ZoneInfo("America/New_York")
    nights = QuietHours(start="22:00", end="07:00", zone="America/New_York")
    # 2026-03-08: clocks go from 02:00 EST to 03:00 EDT; the night is an hour shorter
    ends = quiet_until(nights, at("2026-03-07 23:00", new_york))
    assert ends == at("2026-03-08 07:00", new_york)
    assert ends - at("2026-03-07 23:00", new_york) == 7 * 3600
    # 2026-11-01: clocks go back; 07:00 comes nine hours after 23:00
    assert quiet_until(nights, at("2026-10-31 23:00", new_york)) - at("2026-10-31 23:00", new_york) == 9 * 3600
