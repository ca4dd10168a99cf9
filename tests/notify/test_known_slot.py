"""A card filed while this process holds its person's email slot owes no email: it is filed without
a notification and counted rate limited, with the same emails as the whole path (one per person per
interval, listing every waiting card). Each store × each sender; then end to end through MCP."""

from __future__ import annotations

import dataclasses

import pytest

from countersign.notify import CardNotifier
from countersign.notify.card_emails import SLOT_MARGIN
from countersign.store.outbox import digest_id
from tests.store._factories import DAY, World, card, filed

from ._helpers import file_card

INTERVAL = 900


def file_as_the_desk(world: World, notify: CardNotifier, at: float, title: str):
    """File a card as :meth:`CardDesk.file` does: with a notification only if it may owe an email."""
    c = dataclasses.replace(card(world.ws, world.person, world.conn, created_at=int(at), ttl=DAY), title=title)
    world.store.cards.file_card(c, filed(c), notify=notify.owes_email(c))
    return c


def test_cards_filed_after_this_process_sent_owe_nothing_until_the_interval_ends(store, channel, settings, clock):
    world = World(store)
    events: list[str] = []
    notify = CardNotifier(store, channel.sender, settings, clock, on_event=events.append)
    start = clock.now
    first = file_as_the_desk(world, notify, clock.now, "Request 0")
    assert notify(first) == "email_sent"
    quiet = []
    for i in range(1, 4):
        clock.now = start + i * 60
        quiet.append(file_as_the_desk(world, notify, clock.now, f"Request {i}"))
        assert notify(quiet[-1]) == "email_rate_limited"
    assert [store.outbox.get_notification(c.id) for c in quiet] == [None, None, None]  # nothing owed, nothing to sweep
    # what the sweep finds at the interval's end: only the digest check that tells of them then
    due = store.outbox.due_notifications(int(start) + INTERVAL)
    assert [n.card_id for n in due] == [digest_id(world.person.id, int(start))]
    assert len(channel.sent()) == 1

    clock.now = start + INTERVAL - SLOT_MARGIN  # near the end of the interval the claim decides again
    near = file_as_the_desk(world, notify, clock.now, "Request 4")
    assert store.outbox.get_notification(near.id) is not None
    assert notify(near) == "email_rate_limited"
    clock.now = start + INTERVAL
    last = file_as_the_desk(world, notify, clock.now, "Request 5")
    assert notify(last) == "email_sent"
    sent = channel.sent()
    assert len(sent) == 2 and sent[1]["Subject"] == "6 requests wait for your confirmation"
    assert events == ["email_sent"] + ["email_rate_limited"] * 4 + ["email_sent"]


def test_a_failed_send_forgets_the_slot(store, channel, settings, clock):
    world = World(store)
    notify = CardNotifier(store, channel.failing, settings, clock)
    assert notify(file_as_the_desk(world, notify, clock.now, "Lost")) == "email_failed"
    notify.sender = channel.sender
    clock.now += 60
    retry = file_as_the_desk(world, notify, clock.now, "Found")
    assert store.outbox.get_notification(retry.id) is not None  # owed: the claim was released
    assert notify(retry) == "email_sent"
    assert len(channel.sent()) == 1


def test_a_slot_another_process_claimed_is_left_to_the_claim(store, channel, settings, clock):
    world = World(store)
    other = CardNotifier(store, channel.sender, settings, clock)
    assert other(file_card(world, clock.now, title="Sent by the other process")) == "email_sent"
    notify = CardNotifier(store, channel.sender, settings, clock)
    clock.now += 60
    mine = file_as_the_desk(world, notify, clock.now, "Filed here")
    assert notify(mine) == "email_rate_limited"
    assert store.outbox.get_notification(mine.id).outcome == "email_rate_limited"  # recorded by the whole path
    assert len(channel.sent()) == 1


@pytest.mark.anyio
async def test_an_agent_filing_cards_in_a_row_emails_its_person_once(tenant):
    runtime = tenant.runtime
    notifier = runtime.desk.on_filed
    assert isinstance(notifier, CardNotifier)

    def emails() -> int:
        return sum(1 for p in notifier.sender.files() if tenant.person.email in p.read_text(errors="replace"))

    ids = []
    async with tenant.client() as client:
        for i in range(3):
            held = await client.call_tool("publish_note", {"note_id": "n1", "text": f"held {i}"})
            assert held.structured_content["status"] == "pending"
            ids.append(held.structured_content["confirmationId"])
    assert emails() == 1
    assert runtime.store.outbox.get_notification(ids[0]).outcome == "email_sent"
    assert [runtime.store.outbox.get_notification(i) for i in ids[1:]] == [None, None]
    runtime.sweep()
    assert emails() == 1  # nothing was left owed


def test_a_card_whose_filing_outlives_the_interval_is_still_emailed(store, channel, settings, clock):
    """owes_email decides before the filing commits; a filing that waited past the interval's end
    (longer than SLOT_MARGIN on the store) gets the email the whole path would have sent."""
    world = World(store)
    notify = CardNotifier(store, channel.sender, settings, clock)
    start = clock.now
    assert notify(file_as_the_desk(world, notify, clock.now, "First")) == "email_sent"
    clock.now = start + INTERVAL - SLOT_MARGIN - 1
    late = dataclasses.replace(card(world.ws, world.person, world.conn, created_at=int(clock.now), ttl=DAY),
                               title="Late")
    owed = notify.owes_email(late)
    assert owed is False
    clock.now = start + INTERVAL + 1  # the filing waited; the interval is over when it commits
    store.cards.file_card(late, filed(late), notify=owed)
    assert notify(late) == "email_sent"
    assert len(channel.sent()) == 2


def test_a_card_filed_while_the_slot_holder_finds_nothing_waiting_is_emailed(store, channel, settings, clock,
                                                                             monkeypatch):
    """Two threads of one server: the notifier claims the slot for a card that lapsed, lists what
    waits (nothing), and releases the slot; a card filed between the listing and the release must
    still be emailed (a slot that sent nothing makes no card owe nothing)."""
    world = World(store)
    notify = CardNotifier(store, channel.sender, settings, clock)
    lapsed = dataclasses.replace(card(world.ws, world.person, world.conn, created_at=int(clock.now), ttl=60),
                                 title="Lapsed")
    store.cards.file_card(lapsed, filed(lapsed), notify=True)
    clock.now += 120
    filed_between: list = []
    listing = store.cards.list_pending_cards

    def listing_then_another_files(*args, **kwargs):
        out = listing(*args, **kwargs)
        if not filed_between:
            filed_between.append(file_as_the_desk(world, notify, clock.now, "Between"))
        return out

    monkeypatch.setattr(store.cards, "list_pending_cards", listing_then_another_files)
    assert notify.deliver(lapsed.id) == "email_nothing_pending"
    monkeypatch.undo()
    assert notify(filed_between[0]) == "email_sent"
    assert len(channel.sent()) == 1
