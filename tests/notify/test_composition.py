"""The email a filed card produces, read from a real store: what it says and what it never carries."""

from __future__ import annotations

import base64

from countersign.core.card_states import CardState
from countersign.notify import CardNotifier, render
from tests.store._factories import DAY, World
from tests.support.stores import with_roles

from ._helpers import Recorder, file_card, parts
from .conftest import PUBLIC_URL, parse

SECRETS = ("TICKET-MARKER-7f3a", "ARGUMENT-MARKER-91bc", "SUBJECT-MARKER-55d0", "ACCOUNT-SECRET-e2e2")


def test_lists_what_waits_oldest_first_and_links_to_the_pending_page(store, settings, clock):
    world = World(store)
    sender = Recorder()
    notifier = CardNotifier(store, sender, settings, clock)
    start = clock.now
    for i, title in enumerate(["Pay rent", "Launch campaign Spring"]):
        file_card(world, start - 100 + i, title=title)
    last = file_card(world, start, title="Buy 500 credits")
    assert notifier(last) == "email_sent"

    (email,) = sender.emails
    assert email.to == world.person.email
    assert email.subject == "3 requests wait for your confirmation"
    assert (
        email.text.index("Pay rent") < email.text.index("Launch campaign Spring") < email.text.index("Buy 500 credits")
    )
    assert f"{PUBLIC_URL}/confirm" == settings.pending_url
    assert f'href="{settings.pending_url}"' in email.html
    assert settings.pending_url in email.text


def test_never_carries_a_ticket_arguments_or_ids(store, settings, clock):
    world = World(store)
    sender = Recorder()
    notifier = CardNotifier(store, sender, settings, clock)
    cards = [
        file_card(
            world,
            clock.now - 10 + i,
            title=f"Send piece {i}",
            ticket=f"{SECRETS[0]}.{i}",
            arguments={"note": SECRETS[1], "api_key": SECRETS[3]},
            subject={"change": SECRETS[2]},
            fingerprint=f"fp-marker-{i}",
        )
        for i in range(3)
    ]
    assert notifier(cards[-1]) == "email_sent"
    raw = render(sender.emails[0])
    text, html = parts(parse(raw))
    haystacks = [raw.decode("utf-8", "replace"), text, html]
    haystacks += [base64.b64decode(chunk).decode("utf-8", "replace") for chunk in _base64_chunks(raw)]
    forbidden = list(SECRETS) + [c.id for c in cards] + [world.conn.id, world.ws.id, "fp-marker"]
    for hay in haystacks:
        for marker in forbidden:
            assert marker not in hay
    assert "?" not in settings.pending_url  # the link carries no token of any kind


def _base64_chunks(raw: bytes) -> list[bytes]:
    msg = parse(raw)
    return [p.get_payload(decode=False).encode() for p in msg.walk() if p["Content-Transfer-Encoding"] == "base64"]


def test_counts_only_pending_cards_of_this_person(store, settings, clock):
    world = World(store)
    other = world.add_person()
    sender = Recorder()
    notifier = CardNotifier(store, sender, settings, clock)
    answered = file_card(world, clock.now - 50, title="Answered already")
    world.move(answered, CardState.DECLINED, int(clock.now) - 40)
    file_card(world, clock.now - 30, title="Someone else's", who=other)
    file_card(world, clock.now - DAY - 20, title="Lapsed")
    mine = file_card(world, clock.now, title="Mine")
    notifier(mine)
    (email,) = sender.emails
    assert email.subject == "1 request waits for your confirmation"
    assert "Mine" in email.text
    for absent in ("Answered already", "Someone else's", "Lapsed"):
        assert absent not in email.text


def test_many_waiting_cards_are_counted_past_the_first_page(store, settings, clock, monkeypatch):
    monkeypatch.setattr("countersign.notify.card_emails.PAGE", 4)
    world = World(store)
    sender = Recorder()
    notifier = CardNotifier(store, sender, settings, clock)
    cards = [file_card(world, clock.now - 200 + i, title=f"Request {i:03d}") for i in range(13)]
    notifier(cards[-1])
    (email,) = sender.emails
    assert email.subject == "13 requests wait for your confirmation"
    assert "Request 009" in email.text and "Request 010" not in email.text
    assert "… and 3 more" in email.text


def test_a_huge_backlog_is_a_lower_bound(store, settings, clock, monkeypatch):
    monkeypatch.setattr("countersign.notify.card_emails.PAGE", 2)
    monkeypatch.setattr("countersign.notify.card_emails.MAX_PAGES", 3)
    world = World(store)
    sender = Recorder()
    notifier = CardNotifier(store, sender, settings, clock)
    cards = [file_card(world, clock.now - 200 + i, title=f"Request {i:03d}") for i in range(8)]
    notifier(cards[-1])
    (email,) = sender.emails
    assert email.subject == "6+ requests wait for your confirmation"
    assert "6 or more requests wait" in email.text and "… and more" in email.text

class LaggingIndex:
    """A cards role whose pending list has not caught up yet (a DynamoDB GSI is eventually consistent)."""

    def __init__(self, cards):
        self._cards = cards

    def __getattr__(self, name):
        return getattr(self._cards, name)

    def list_pending_cards(self, *args, **kwargs):
        return [], None


def test_a_card_missing_from_a_lagging_index_is_still_announced(store, settings, clock):
    world = World(store)
    sender = Recorder()
    notifier = CardNotifier(with_roles(store, cards=LaggingIndex(store.cards)), sender, settings, clock)
    assert notifier(file_card(world, clock.now, title="Just filed")) == "email_sent"
    (email,) = sender.emails
    assert email.subject == "1 request waits for your confirmation" and "Just filed" in email.text
