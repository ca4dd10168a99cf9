"""The digest, word for word, as each sender delivers it (the local outbox, SMTP, SES on moto), on
both stores, with the clock the test moves: the cards filed inside a person's email interval are
told of when it ends (by the sweep: no new card needed), still one email per interval; a card
answered, withdrawn or lapsed meanwhile is not listed, and if none still waits nothing is sent."""

from __future__ import annotations

import re

from countersign.core.card_states import CardState
from countersign.notify import CardNotifier
from countersign.store.outbox import NOTIFY_DONE, digest_id
from tests.store._factories import World

from ._helpers import file_card
from .conftest import PUBLIC_URL
from .test_card_email_words import WHY, delivered

INTERVAL = 900
PENDING = f"{PUBLIC_URL}/confirm"


def notifier(store, channel, settings, clock, events=None) -> CardNotifier:
    return CardNotifier(store, channel.sender, settings, clock, on_event=None if events is None else events.append)


def test_the_cards_that_waited_meanwhile_are_listed_when_the_interval_ends(store, channel, settings, clock):
    world = World(store, name="Acme Mail")
    events: list[str] = []
    notify = notifier(store, channel, settings, clock, events)
    start = int(clock.now)
    first = file_card(world, start, title="Pay invoice 7")
    assert notify(first) == "email_sent"
    clock.now = start + 60
    second = file_card(world, clock.now, title="Buy 20.00 credits")
    assert notify(second) == "email_rate_limited"
    clock.now = start + 120
    third = file_card(world, clock.now, title="Send the newsletter")
    assert notify(third) == "email_rate_limited"
    clock.now = start + 180
    withdrawn = file_card(world, clock.now, title="Withdrawn meanwhile")
    assert notify(withdrawn) == "email_rate_limited"
    world.move(withdrawn, CardState.WITHDRAWN, start + 300)

    clock.now = start + INTERVAL - 1
    notify.sweep()
    assert len(channel.sent()) == 1  # the interval has not ended: silence

    clock.now = start + INTERVAL
    notify.sweep()
    sent = channel.sent()
    assert len(sent) == 2
    message = sent[1]
    assert message["To"] == world.person.email
    assert message["Subject"] == "2 more requests are waiting for your confirmation"
    text, html = delivered(message)
    assert text.rstrip("\n") == "\n".join([
        "Hello Pat,",
        "",
        "2 more requests are waiting for your confirmation in Acme Mail:",
        "",
        "  - Buy 20.00 credits",
        "    Asked by Claude on laptop",
        "  - Send the newsletter",
        "    Asked by Claude on laptop",
        "",
        "1 earlier request still waits too.",
        "",
        "Review them, then confirm or decline each one:",
        PENDING,
        "",
        "Nothing runs until you confirm it.",
        "",
        "-- ",
        WHY,
    ])
    assert re.findall(r'href="([^"]*)"', html) == [PENDING]
    assert "<strong>2 more requests are waiting for your confirmation in Acme Mail:</strong>" in html
    assert "<p>1 earlier request still waits too.</p>" in html
    assert "Withdrawn meanwhile" not in text + html
    for secret in (second.ticket, third.ticket, world.conn.token_hash, second.fingerprint):
        assert secret not in message.as_string()
    assert events == ["email_sent"] + ["email_rate_limited"] * 3 + ["email_sent"]

    # the next interval: nothing new was filed, so nothing is sent
    clock.now = start + 2 * INTERVAL
    notify.sweep()
    assert len(channel.sent()) == 2
    assert events[-1] == "email_nothing_pending"


def test_one_card_that_waited_alone_is_linked_itself(store, channel, settings, clock):
    world = World(store, name="Acme")
    notify = notifier(store, channel, settings, clock)
    start = int(clock.now)
    first = file_card(world, start, title="Pay invoice 7")
    assert notify(first) == "email_sent"
    world.move(first, CardState.DECLINED, start + 10)
    clock.now = start + 30
    later = file_card(world, clock.now, title="Buy 20.00 credits")
    assert notify(later) == "email_rate_limited"
    clock.now = start + INTERVAL + 45  # the sweep runs once a minute: some time after the end
    notify.sweep()
    message = channel.sent()[1]
    assert message["Subject"] == "1 more request is waiting for your confirmation"
    text, html = delivered(message)
    link = f"{PUBLIC_URL}/confirm?card={later.id}"
    assert text.rstrip("\n") == "\n".join([
        "Hello Pat,",
        "",
        "1 more request is waiting for your confirmation in Acme:",
        "",
        "  - Buy 20.00 credits",
        "    Asked by Claude on laptop",
        "",
        "Review it, then confirm or decline it:",
        link,
        "",
        "Nothing runs until you confirm it.",
        "",
        "-- ",
        WHY,
    ])
    assert re.findall(r'href="([^"]*)"', html) == [link]
    assert ">Review the request</a>" in html


def test_every_card_of_the_interval_answered_sends_nothing(store, channel, settings, clock):
    world = World(store)
    events: list[str] = []
    notify = notifier(store, channel, settings, clock, events)
    start = int(clock.now)
    assert notify(file_card(world, start, title="Still waiting from before")) == "email_sent"
    answered = []
    for i, state in enumerate((CardState.DECLINED, CardState.WITHDRAWN)):
        clock.now = start + 60 * (i + 1)
        answered.append(file_card(world, clock.now, title=f"Answered {i}"))
        assert notify(answered[-1]) == "email_rate_limited"
        world.move(answered[-1], state, int(clock.now) + 5)
    clock.now = start + 240
    lapsing = file_card(world, clock.now, title="Lapses", expires_at=int(clock.now) + 300)  # before the end
    assert notify(lapsing) == "email_rate_limited"

    clock.now = start + INTERVAL
    notify.sweep()
    assert len(channel.sent()) == 1  # the card from before still waits, but it was told of
    check = store.outbox.get_notification(digest_id(world.person.id, start))
    assert (check.state, check.outcome) == (NOTIFY_DONE, "email_nothing_pending")
    assert events[-1] == "email_nothing_pending"
    # and the slot was never claimed: a card filed now emails at once
    assert notify(file_card(world, clock.now, title="Fresh")) == "email_sent"


def test_the_next_card_after_the_interval_lists_them_and_the_digest_then_sends_nothing(
        store, channel, settings, clock):
    world = World(store)
    notify = notifier(store, channel, settings, clock)
    start = int(clock.now)
    assert notify(file_card(world, start, title="First")) == "email_sent"
    clock.now = start + 100
    assert notify(file_card(world, clock.now, title="Meanwhile")) == "email_rate_limited"
    clock.now = start + INTERVAL + 5  # a card arrives before the sweep ran
    assert notify(file_card(world, clock.now, title="Next")) == "email_sent"
    clock.now = start + INTERVAL + 30
    notify.sweep()  # the digest check finds the slot taken by that email: it lists them all
    sent = channel.sent()
    assert [m["Subject"] for m in sent] == ["1 request waits for your confirmation",
                                            "3 requests wait for your confirmation"]
    text, _ = delivered(sent[1])
    assert "  - Meanwhile\n" in text and "  - Next\n" in text
    assert store.outbox.get_notification(digest_id(world.person.id, start)).outcome == "email_rate_limited"
    clock.now = start + 2 * INTERVAL + 5
    notify.sweep()  # the follow-up of the second email: nothing filed since
    assert len(channel.sent()) == 2


def test_the_digest_after_the_digest_lists_only_what_came_after_it(store, channel, settings, clock):
    world = World(store)
    notify = notifier(store, channel, settings, clock)
    start = int(clock.now)
    assert notify(file_card(world, start, title="A")) == "email_sent"
    clock.now = start + 10
    assert notify(file_card(world, clock.now, title="B")) == "email_rate_limited"
    clock.now = start + INTERVAL
    notify.sweep()
    clock.now = start + INTERVAL + 1  # inside the digest's own interval
    assert notify(file_card(world, clock.now, title="C")) == "email_rate_limited"
    clock.now = start + 2 * INTERVAL
    notify.sweep()
    sent = channel.sent()
    assert [m["Subject"] for m in sent] == ["1 request waits for your confirmation",
                                            "1 more request is waiting for your confirmation",
                                            "1 more request is waiting for your confirmation"]
    text, _ = delivered(sent[2])
    assert "  - C\n" in text and "  - B\n" not in text and "2 earlier requests still wait too." in text


def test_a_card_filed_in_the_second_of_the_email_is_told_once(store, channel, settings, clock):
    world = World(store)
    notify = notifier(store, channel, settings, clock)
    start = int(clock.now)
    one = file_card(world, start, title="Listed in the first email")
    two = file_card(world, start, title="Also listed: same second")
    assert notify(one) == "email_sent"
    assert notify(two) == "email_rate_limited"
    clock.now = start + INTERVAL
    notify.sweep()
    assert len(channel.sent()) == 1  # both were in the first email: no digest


def test_a_failed_digest_is_tried_again_and_then_sent(store, channel, settings, clock):
    world = World(store)
    notify = notifier(store, channel, settings, clock)
    start = int(clock.now)
    assert notify(file_card(world, start, title="A")) == "email_sent"
    clock.now = start + 60
    assert notify(file_card(world, clock.now, title="B")) == "email_rate_limited"
    notify.sender = channel.failing
    clock.now = start + INTERVAL
    notify.sweep()
    assert len(channel.sent()) == 1
    check = store.outbox.get_notification(digest_id(world.person.id, start))
    assert (check.state, check.attempts) == ("pending", 1)
    notify.sender = channel.sender
    clock.now = check.due_at
    notify.sweep()
    sent = channel.sent()
    assert len(sent) == 2 and sent[1]["Subject"] == "1 more request is waiting for your confirmation"


def test_the_setting_off_or_a_suppressed_address_sends_no_digest(store, channel, settings, clock):
    from countersign.store.suppressions import Suppression

    world = World(store)
    notify = notifier(store, channel, settings, clock)
    start = int(clock.now)
    assert notify(file_card(world, start, title="A")) == "email_sent"
    clock.now = start + 60
    assert notify(file_card(world, clock.now, title="B")) == "email_rate_limited"
    store.suppressions.suppress_address(Suppression(world.person.email.lower(), "bounce", start + 70))
    clock.now = start + INTERVAL
    notify.sweep()
    assert len(channel.sent()) == 1
    assert store.outbox.get_notification(digest_id(world.person.id, start)).outcome == "email_suppressed"
