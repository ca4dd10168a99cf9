"""Card lifetimes in the store (both stores): the workspace's rules as a setting, the lifetime a
card keeps, the reminder filed with it (leased by one sender only), and a lapse that counts as
declined holding the request for the answer memory after the deadline."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from countersign.core import lifetimes
from countersign.core.card_states import ANSWER_MEMORY_SECONDS, CardState
from countersign.store.cards import CardCommit
from countersign.store.docs import SettingWrite
from countersign.store.errors import BadInput, Conflict
from countersign.store.outbox import NOTIFY_PENDING, NOTIFY_SENDING, reminder_id
from tests.store._factories import DAY, World, audit, card, filed
from tests.support.serial_moto import serialized_writes

RULES = {"default": {"wait": "2h", "remind_before": "30m"}, "risky": {"wait": "1d", "lapse": "declined"}}


def test_the_rules_are_kept_as_canonical_text_and_read_back(store):
    w = World(store)
    text = lifetimes.as_text(RULES)
    assert text == ('{"default":{"remind_before":1800,"wait":7200},"risky":{"lapse":"declined","wait":86400}}')
    assert store.workspaces.get_workspace(w.ws.id).setting("card_lifetimes") == ""
    store.workspaces.update_workspace_settings(w.ws.id, {"card_lifetimes": text})
    assert store.workspaces.get_workspace(w.ws.id).setting("card_lifetimes") == text
    assert lifetimes.from_text(text) == {"default": {"wait": 7200, "remind_before": 1800},
                                         "risky": {"wait": 86400, "lapse": "declined"}}


@pytest.mark.parametrize("value", ['{"default":{"wait":60}}', '{"default": {"wait": 7200}}', "not json", 7,
                                   '{"weekly":{"wait":7200}}'])
def test_rules_that_are_not_canonical_valid_text_are_refused_and_nothing_is_written(store, value):
    w = World(store)
    with pytest.raises(BadInput) as refused:
        store.workspaces.update_workspace_settings(w.ws.id, {"card_lifetimes": value})
    assert refused.value.field == "card_lifetimes"
    assert store.workspaces.get_workspace(w.ws.id).setting("card_lifetimes") == ""


def test_a_held_change_writes_the_rules_only_if_they_still_read_as_expected(store):
    w = World(store)
    text = lifetimes.as_text(RULES)
    c = w.file(created_at=1000)
    store.cards.commit_card(_commit(c, [SettingWrite("card_lifetimes", expected="", value=text)]))
    assert store.workspaces.get_workspace(w.ws.id).setting("card_lifetimes") == text
    stale = w.file(created_at=1001, fingerprint="other")
    with pytest.raises(Conflict):
        store.cards.commit_card(_commit(stale, [SettingWrite("card_lifetimes", expected="", value="")]))
    assert store.workspaces.get_workspace(w.ws.id).setting("card_lifetimes") == text


def _commit(c, writes):
    return CardCommit(c, CardState.COMPLETED, c.created_at + 1, (audit(c, "completed", c.created_at + 1),),
                      writes=tuple(writes), channel="page")


def with_lifetime(c, lifetime):
    return dataclasses.replace(c, lifetime=lifetime)


def test_a_card_keeps_its_lifetime_and_its_reminder_is_filed_with_it(store):
    w = World(store)
    c = with_lifetime(card(w.ws, w.person, w.conn, created_at=1000, ttl=7200),
                      {"wait": 7200, "lapse": "expired", "remind_at": 1000 + 7200 - 1800})
    store.cards.file_card(c, filed(c))
    assert store.cards.get_card(w.ws.id, c.id, 1000).lifetime == c.lifetime
    reminder = store.outbox.get_notification(reminder_id(c.id))
    assert (reminder.state, reminder.due_at, reminder.person_id, reminder.workspace_id) == (
        NOTIFY_PENDING, 6400, w.person.id, w.ws.id)
    assert [n.card_id for n in store.outbox.due_notifications(now=1000)] == [c.id]  # its email, not the reminder
    assert [n.card_id for n in store.outbox.due_notifications(now=6400)] == [c.id, reminder_id(c.id)]
    [listed], _ = store.cards.list_pending_cards(w.ws.id, w.person.id, 1000)
    assert listed.lifetime is None  # a listing leaves it out


def test_a_card_without_a_reminder_owes_none(store):
    w = World(store)
    c = with_lifetime(card(w.ws, w.person, w.conn, created_at=1000, ttl=7200), {"wait": 7200, "lapse": "declined"})
    store.cards.file_card(c, filed(c))
    assert store.outbox.get_notification(reminder_id(c.id)) is None
    plain = w.file(created_at=1000, fingerprint="plain")
    assert plain.lifetime is None and store.cards.get_card(w.ws.id, plain.id, 1000).lifetime is None
    assert store.outbox.get_notification(reminder_id(plain.id)) is None


def test_two_sweepers_racing_for_a_reminder_one_takes_it(store):
    w = World(store)
    c = with_lifetime(card(w.ws, w.person, w.conn, created_at=1000, ttl=7200),
                      {"wait": 7200, "lapse": "expired", "remind_at": 6400})
    store.cards.file_card(c, filed(c))
    taken: list = []
    barrier = threading.Barrier(4)

    def lease():
        barrier.wait()
        taken.append(store.outbox.lease_notification(reminder_id(c.id), now=6400, lease_seconds=120))

    threads = [threading.Thread(target=lease) for _ in range(4)]
    with serialized_writes():  # moto's check and write are two steps under threads; DynamoDB's are one
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    won = [n for n in taken if n is not None]
    assert len(won) == 1 and won[0].state == NOTIFY_SENDING


def test_a_lapse_that_counts_as_declined_holds_the_request_for_the_answer_memory(store):
    w = World(store)
    c = with_lifetime(card(w.ws, w.person, w.conn, created_at=1000, ttl=7200, fingerprint="fp"),
                      {"wait": 7200, "lapse": "declined"})
    store.cards.file_card(c, filed(c))
    deadline = 1000 + 7200
    again = card(w.ws, w.person, w.conn, created_at=deadline + ANSWER_MEMORY_SECONDS - 1, fingerprint="fp")
    held = store.cards.file_card(again, filed(again))
    assert held.id == c.id and held.state is CardState.EXPIRED and held.lapses_as_declined
    later = card(w.ws, w.person, w.conn, created_at=deadline + ANSWER_MEMORY_SECONDS, fingerprint="fp")
    assert store.cards.file_card(later, filed(later)).id == later.id


def test_a_lapse_that_expires_frees_the_request_at_the_deadline(store):
    w = World(store)
    c = with_lifetime(card(w.ws, w.person, w.conn, created_at=1000, ttl=DAY, fingerprint="fp"),
                      {"wait": DAY, "lapse": "expired"})
    store.cards.file_card(c, filed(c))
    again = card(w.ws, w.person, w.conn, created_at=1000 + DAY, fingerprint="fp")
    assert store.cards.file_card(again, filed(again)).id == again.id


def test_a_listing_keeps_a_lapse_that_counts_as_declined_and_nothing_else_of_the_lifetime(store):
    """History says what a lapse meant: a listed card keeps ``{"lapse": "declined"}`` (and no more of
    its lifetime), waiting and lapsed alike; one that lapses as expired, or has no lifetime, keeps none."""
    w = World(store)
    declined = with_lifetime(card(w.ws, w.person, w.conn, created_at=1000, ttl=7200, fingerprint="no"),
                             {"wait": 7200, "lapse": "declined", "remind_at": 6400})
    expired = with_lifetime(card(w.ws, w.person, w.conn, created_at=1001, ttl=7200, fingerprint="gone"),
                            {"wait": 7200, "lapse": "expired"})
    plain = card(w.ws, w.person, w.conn, created_at=1002, ttl=7200, fingerprint="plain")
    for c in (declined, expired, plain):
        store.cards.file_card(c, filed(c))
    waiting, _ = store.cards.list_pending_cards(w.ws.id, w.person.id, 1003)
    assert [(c.id, c.lifetime) for c in waiting] == [(declined.id, {"lapse": "declined"}), (expired.id, None),
                                                     (plain.id, None)]
    lapsed, _ = store.cards.list_card_history(w.ws.id, w.person.id, 1002 + 7200)
    assert [(c.id, c.state, c.lifetime, c.lapses_as_declined) for c in lapsed] == [
        (plain.id, CardState.EXPIRED, None, False), (expired.id, CardState.EXPIRED, None, False),
        (declined.id, CardState.EXPIRED, {"lapse": "declined"}, True)]
    # the card itself keeps its whole lifetime and its lines as filed
    whole = store.cards.get_card(w.ws.id, declined.id, 1003)
    assert (whole.lifetime, whole.lines) == (declined.lifetime, declined.lines)
