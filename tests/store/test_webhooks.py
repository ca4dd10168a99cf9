"""Webhooks in the store (both stores): endpoints and their limit, the events a card's moves owe
(written in the card's own transaction, only where an endpoint exists), the fan-out that gives
each (event, endpoint) exactly one delivery, the delivery lease, and the log."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

import pytest

from countersign.core.card_states import CardState, Refusal
from countersign.core.ids import new_id
from countersign.store.cards import CardCommit
from countersign.store.errors import BadInput, NotFound, Taken
from countersign.store.sqlite import SQLiteStore
from countersign.store.webhook_deliveries import (
    DELIVERED,
    DROPPED,
    EVENTS,
    GAVE_UP,
    LOG_SIZE,
    PENDING,
    SENDING,
    WebhookDelivery,
    delivery_id,
)
from countersign.store.webhook_endpoints import (
    BEFORE_EDITED,
    MAX_ENDPOINTS,
    WebhookEndpoint,
    turned_off_by,
    turned_off_by_an_owner,
)
from tests.store._factories import DAY, World, as_released_before, card, filed

HOUR = 3600


def endpoint(w: World, url: str = "https://hooks.example.com/countersign", events=EVENTS,
             created_at: int = 10) -> WebhookEndpoint:
    return WebhookEndpoint(id=new_id("wh_"), workspace_id=w.ws.id, url=url, events=tuple(events),
                           secret_sealed="s1.sealed", created_at=created_at, created_by=w.person.id)


def due_events(store, now: int) -> list[tuple[str, str, str]]:
    return sorted((e.card_id, e.event, e.state) for e in store.webhook_deliveries.due_events(now))


def deliveries_for(store, w: World, ep: WebhookEndpoint, event, now: int) -> list[WebhookDelivery]:
    return [WebhookDelivery(id=delivery_id(event.id, ep.id), endpoint_id=ep.id, workspace_id=w.ws.id,
                            event_id=event.id, event=event.event, card_id=event.card_id, created_at=event.at,
                            payload=json.dumps({"type": event.event}), due_at=now)]


def test_endpoints_are_added_listed_and_removed_per_workspace(store):
    w, other = World(store), World(store, "Other")
    first, second = endpoint(w, created_at=10), endpoint(w, "https://b.example.com/x", events=["card.filed"],
                                                         created_at=20)
    store.webhook_endpoints.add_endpoint(first)
    store.webhook_endpoints.add_endpoint(second)
    assert [e.id for e in store.webhook_endpoints.list_endpoints(w.ws.id)] == [first.id, second.id]
    assert store.webhook_endpoints.get_endpoint(w.ws.id, second.id) == second
    assert store.webhook_endpoints.list_endpoints(other.ws.id) == []
    with pytest.raises(NotFound):
        store.webhook_endpoints.get_endpoint(other.ws.id, first.id)
    with pytest.raises(NotFound):
        store.webhook_endpoints.remove_endpoint(other.ws.id, first.id)
    store.webhook_endpoints.remove_endpoint(w.ws.id, first.id)
    assert [e.id for e in store.webhook_endpoints.list_endpoints(w.ws.id)] == [second.id]


def test_a_workspace_read_says_whether_it_has_an_endpoint_where_the_store_knows(store):
    """DynamoDB keeps the count on the workspace's item (a filing then needs no read of its own);
    SQLite says nothing (it checks inside each card's transaction)."""
    w = World(store)
    known = type(store).__name__ == "DynamoDBStore"
    assert store.workspaces.get_workspace(w.ws.id).webhooks is (False if known else None)
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    assert store.workspaces.get_workspace(w.ws.id).webhooks is (True if known else None)
    assert store.workspaces.get_workspace(w.ws.id) == w.ws  # not part of what a workspace is
    store.webhook_endpoints.remove_endpoint(w.ws.id, ep.id)
    assert store.workspaces.get_workspace(w.ws.id).webhooks is (False if known else None)


def test_a_card_owes_events_as_it_was_filed_and_no_more_is_read_to_know(store):
    """A card filed by a request that read the workspace before its first endpoint was added owes
    nothing (``Card.webhooks`` False); one filed knowing of an endpoint owes its events, and its
    moves read nothing more to know (on DynamoDB the answer is kept on the card's item)."""
    w = World(store)
    store.webhook_endpoints.add_endpoint(endpoint(w))
    before = card(w.ws, w.person, w.conn, webhooks=False, created_at=1000)
    after = card(w.ws, w.person, w.conn, webhooks=True, created_at=1000)
    for c in (before, after):
        store.cards.file_card(c, filed(c))
    assert [x[0] for x in due_events(store, 1000) if x[1] == "card.filed"] == [after.id]
    assert store.cards.get_card(w.ws.id, after.id, 1000).webhooks is (
        True if type(store).__name__ == "DynamoDBStore" else None)
    w.move(store.cards.get_card(w.ws.id, after.id, 1000), CardState.DECLINED, now=1100)
    assert (after.id, "card.answered", "declined") in due_events(store, 1100)


def test_a_workspace_has_at_most_its_limit_of_endpoints(store):
    w = World(store)
    for i in range(MAX_ENDPOINTS):
        store.webhook_endpoints.add_endpoint(endpoint(w, f"https://h{i}.example.com/", created_at=i))
    one_more = endpoint(w, "https://more.example.com/")
    with pytest.raises(BadInput) as refused:
        store.webhook_endpoints.add_endpoint(one_more)
    assert refused.value.message == (f"url: this workspace has {MAX_ENDPOINTS} webhook endpoints already, the most it "
                                     "may have; remove one first.")
    assert len(store.webhook_endpoints.list_endpoints(w.ws.id)) == MAX_ENDPOINTS
    store.webhook_endpoints.remove_endpoint(w.ws.id, store.webhook_endpoints.list_endpoints(w.ws.id)[0].id)
    store.webhook_endpoints.add_endpoint(one_more)  # room again
    assert len(store.webhook_endpoints.list_endpoints(w.ws.id)) == MAX_ENDPOINTS


@pytest.mark.parametrize("change, field", [
    ({"url": "ftp://hooks.example.com/"}, "url"),
    ({"url": "https://" + "a" * 2050 + ".example.com/"}, "url"),
    ({"events": ("card.filed", "card.exploded")}, "events"),
    ({"events": ("card.answered", "card.filed")}, "events"),  # not in the order of EVENTS (empty: every event)
    ({"secret_sealed": ""}, "secret"),
])
def test_bad_endpoints_are_refused_and_nothing_is_written(store, change, field):
    w = World(store)
    with pytest.raises(BadInput) as refused:
        store.webhook_endpoints.add_endpoint(replace(endpoint(w), **change))
    assert refused.value.field == field
    assert store.webhook_endpoints.list_endpoints(w.ws.id) == []


def test_cards_owe_no_events_where_there_is_no_endpoint(store):
    w = World(store)
    c = w.file(webhooks=None, created_at=1000)
    w.move(c, CardState.DECLINED, now=1100)
    assert store.webhook_deliveries.due_events(now=1000 + 2 * DAY) == []


def test_each_move_of_a_card_writes_its_events_in_the_same_transaction(store):
    w = World(store)
    store.webhook_endpoints.add_endpoint(endpoint(w))
    done = w.file(webhooks=None, created_at=1000)
    declined = w.file(webhooks=None, created_at=1000)
    withdrawn = w.file(webhooks=None, created_at=1000)
    lapsed = w.file(webhooks=None, created_at=1000, ttl=HOUR)
    assert due_events(store, 1000) == sorted((c.id, "card.filed", "pending") for c in (done, declined, withdrawn,
                                                                                        lapsed))
    running = w.move(done, CardState.RUNNING, now=1100)
    w.move(declined, CardState.DECLINED, now=1100)
    w.move(withdrawn, CardState.WITHDRAWN, now=1100)
    store.cards.commit_card(CardCommit(card=running, target=CardState.COMPLETED, now=1200, audit=()))
    at_1200 = [x for x in due_events(store, 1200) if x[1] != "card.filed"]
    assert at_1200 == sorted([
        (done.id, "card.answered", "running"), (done.id, "card.completed", "completed"),
        (declined.id, "card.answered", "declined"), (withdrawn.id, "card.lapsed", "withdrawn"),
    ])
    # each card's deadline owes a lapse, due then: the withdrawn card's was replaced by its withdrawal
    later = {(x[0], x[1]) for x in due_events(store, 1000 + DAY)} - {(x[0], x[1]) for x in due_events(store, 1200)}
    assert later == {(done.id, "card.lapsed"), (declined.id, "card.lapsed"), (lapsed.id, "card.lapsed")}
    assert (lapsed.id, "card.lapsed", "expired") in due_events(store, 1000 + HOUR)
    assert (done.id, "card.lapsed", "expired") not in due_events(store, 1000 + HOUR)


def test_a_failed_commit_writes_no_event(store):
    w = World(store)
    store.webhook_endpoints.add_endpoint(endpoint(w))
    c = w.file(webhooks=None, created_at=1000)
    w.move(c, CardState.DECLINED, now=1100)
    with pytest.raises(Refusal):  # already declined: refused, nothing written
        w.move(c, CardState.WITHDRAWN, now=1200)
    assert [x for x in due_events(store, 1200) if x[0] == c.id and x[1] == "card.lapsed"] == []


def owed(store, card_id: str) -> list[tuple[str, str, int, int]]:
    """Every event ``card_id`` owes, due or not: (event, state, at, due_at)."""
    return sorted((e.event, e.state, e.at, e.due_at) for e in store.webhook_deliveries.due_events(100 * DAY)
                  if e.card_id == card_id)


def test_an_edit_owes_card_edited_for_the_old_card_and_a_filed_cards_events_for_the_new_one(store):
    """A person's edit: the edited card owes ``card.edited`` (its state ``edited``, now), and the
    card records the new card that replaced it; the new card owes ``card.filed`` now and
    ``card.lapsed`` at its own deadline, as any filed card — all in the edit's transaction."""
    w = World(store)
    store.webhook_endpoints.add_endpoint(endpoint(w))
    old = w.file(webhooks=None, created_at=1000, ttl=HOUR)
    new = w.edit(old, now=1100, ttl=2 * HOUR, webhooks=None)
    assert owed(store, old.id) == [
        ("card.edited", "edited", 1100, 1100),
        ("card.filed", "pending", 1000, 1000),
        ("card.lapsed", "expired", 1000 + HOUR, 1000 + HOUR),  # due at its deadline: moot then (it was edited)
    ]
    assert owed(store, new.id) == [("card.filed", "pending", 1100, 1100),
                                   ("card.lapsed", "expired", 1100 + 2 * HOUR, 1100 + 2 * HOUR)]
    stored = store.cards.get_card(w.ws.id, old.id, 1000 + HOUR)
    assert (stored.state, stored.edited["into"]) == (CardState.EDITED, new.id)
    assert (due_events(store, 1100)) == sorted([(old.id, "card.filed", "pending"), (old.id, "card.edited", "edited"),
                                                (new.id, "card.filed", "pending")])


def test_an_edit_refused_writes_no_event(store):
    """An edit whose new card's request is held by a waiting card is refused (:class:`Taken`):
    nothing is written, so the old card owes no ``card.edited`` and no new card's events exist."""
    w = World(store)
    store.webhook_endpoints.add_endpoint(endpoint(w))
    old = w.file(webhooks=None, created_at=1000)
    holder = w.file(webhooks=None, created_at=1000, fingerprint="fp_the_edited_change")
    with pytest.raises(Taken):
        w.edit(old, now=1100, webhooks=None, fingerprint="fp_the_edited_change")
    assert [x for x in due_events(store, 100 * DAY) if x[1] == "card.edited"] == []
    assert sorted({x[0] for x in due_events(store, 100 * DAY)}) == sorted([old.id, holder.id])
    assert store.cards.get_card(w.ws.id, old.id, 1100).state is CardState.PENDING


def test_fan_out_gives_each_event_and_endpoint_one_delivery_once(store):
    w = World(store)
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    c = w.file(webhooks=None, created_at=1000)
    (event,) = [e for e in store.webhook_deliveries.due_events(1000) if e.event == "card.filed"]
    deliveries = deliveries_for(store, w, ep, event, 1001)
    assert store.webhook_deliveries.fan_out(event, deliveries) is True
    assert store.webhook_deliveries.fan_out(event, deliveries) is False  # another deliverer got there first
    assert store.webhook_deliveries.get_event(event.id).done is True
    assert [e for e in store.webhook_deliveries.due_events(1000) if e.id == event.id] == []
    (due,) = store.webhook_deliveries.due_deliveries(1001)
    assert (due.id, due.state, due.card_id, due.event) == (delivery_id(event.id, ep.id), PENDING, c.id, "card.filed")


def test_a_delivery_is_leased_retried_and_finished(store):
    w = World(store)
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    w.file(webhooks=None, created_at=1000)
    (event,) = [e for e in store.webhook_deliveries.due_events(1000) if e.event == "card.filed"]
    (d,) = deliveries_for(store, w, ep, event, 1001)
    store.webhook_deliveries.fan_out(event, [d])
    leased = store.webhook_deliveries.lease_delivery(d, now=1001, lease_seconds=60)
    assert (leased.state, leased.lease_until) == (SENDING, 1061)
    assert store.webhook_deliveries.lease_delivery(d, now=1002, lease_seconds=60) is None  # another deliverer
    assert store.webhook_deliveries.due_deliveries(1060) == []
    store.webhook_deliveries.retry_delivery(d, now=1003, due_at=1100, status_code=503, error="HTTP 503")
    again = store.webhook_deliveries.get_delivery(d)
    assert (again.state, again.attempts, again.due_at, again.status_code, again.error, again.last_attempt_at) == (
        PENDING, 1, 1100, 503, "HTTP 503", 1003)
    assert store.webhook_deliveries.due_deliveries(1099) == []
    assert store.webhook_deliveries.lease_delivery(d, 1099, 60) is None
    assert [x.id for x in store.webhook_deliveries.due_deliveries(1100)] == [d.id]
    store.webhook_deliveries.lease_delivery(d, now=1100, lease_seconds=60)
    store.webhook_deliveries.finish_delivery(d, now=1101, state=DELIVERED, status_code=204)
    done = store.webhook_deliveries.get_delivery(d)
    assert (done.state, done.attempts, done.status_code, done.error, done.last_attempt_at) == (
        DELIVERED, 2, 204, None, 1101)
    assert store.webhook_deliveries.lease_delivery(d, 9999, 60) is None
    assert store.webhook_deliveries.due_deliveries(9999) == []


def test_a_lapsed_lease_is_due_again(store):
    w = World(store)
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    w.file(webhooks=None, created_at=1000)
    (event,) = [e for e in store.webhook_deliveries.due_events(1000) if e.event == "card.filed"]
    (d,) = deliveries_for(store, w, ep, event, 1001)
    store.webhook_deliveries.fan_out(event, [d])
    store.webhook_deliveries.lease_delivery(d, now=1001, lease_seconds=60)  # that deliverer dies
    assert [x.id for x in store.webhook_deliveries.due_deliveries(1061)] == [d.id]
    assert store.webhook_deliveries.lease_delivery(d, now=1061, lease_seconds=60).lease_until == 1121


def test_the_log_lists_an_endpoints_latest_deliveries_newest_first(store):
    w, other = World(store), World(store, "Other")
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    for at in (1000, 1001, 1002):
        c = card(w.ws, w.person, w.conn, webhooks=None, created_at=at)
        store.cards.file_card(c, filed(c))
    events = sorted((e for e in store.webhook_deliveries.due_events(1002) if e.event == "card.filed"),
                    key=lambda e: e.at)
    for e in events:
        (d,) = deliveries_for(store, w, ep, e, e.at)
        store.webhook_deliveries.fan_out(e, [d])
        store.webhook_deliveries.lease_delivery(d, e.at, 60)
        store.webhook_deliveries.finish_delivery(d, e.at + 1, GAVE_UP if e.at == 1001 else DELIVERED, status_code=200)
    log = store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)
    assert [(x.created_at, x.state) for x in log] == [(1002, DELIVERED), (1001, GAVE_UP), (1000, DELIVERED)]
    assert [x.created_at for x in store.webhook_deliveries.list_deliveries(w.ws.id, ep.id, limit=2)] == [1002, 1001]
    with pytest.raises(NotFound):
        store.webhook_deliveries.list_deliveries(other.ws.id, ep.id)
    assert LOG_SIZE >= 50


def test_finishing_refuses_an_unknown_state(store):
    w = World(store)
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    w.file(webhooks=None, created_at=1000)
    (event,) = [e for e in store.webhook_deliveries.due_events(1000) if e.event == "card.filed"]
    (d,) = deliveries_for(store, w, ep, event, 1001)
    store.webhook_deliveries.fan_out(event, [d])
    store.webhook_deliveries.lease_delivery(d, 1001, 60)
    with pytest.raises(BadInput):
        store.webhook_deliveries.finish_delivery(d, 1002, "exploded")
    store.webhook_deliveries.finish_delivery(d, 1002, DROPPED, error="endpoint removed", attempted=False)
    gone = store.webhook_deliveries.get_delivery(d)
    assert (gone.state, gone.attempts, gone.error) == (DROPPED, 0, "endpoint removed")


def test_an_endpoint_failing_for_a_day_is_turned_off_once(store):
    w = World(store)
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    record = store.webhook_endpoints.record_attempt
    after, off = record(w.ws.id, ep.id, 1000, False, disable_after=DAY, min_failures=3)
    assert (after.failing_since, after.failures, after.enabled, off) == (1000, 1, True, False)
    after, off = record(w.ws.id, ep.id, 2000, True, disable_after=DAY, min_failures=3)
    assert (after.failing_since, after.failures, after.last_success_at, off) == (None, 0, 2000, False)
    for t in (3000, 3000 + DAY // 2):
        record(w.ws.id, ep.id, t, False, disable_after=DAY, min_failures=3)
    after, off = record(w.ws.id, ep.id, 3000 + DAY, False, disable_after=DAY, min_failures=3)
    assert (after.enabled, after.failures, after.disabled_at, off) == (False, 3, 3000 + DAY, True)
    assert after.disabled_reason == "every attempt failed since 1970-01-01T00:50:00Z (3 in a row)"
    after, off = record(w.ws.id, ep.id, 3001 + DAY, False, disable_after=DAY, min_failures=3)
    assert (after.enabled, off) == (False, False)  # told once
    on = store.webhook_endpoints.enable_endpoint(w.ws.id, ep.id)
    assert (on.enabled, on.failures, on.failing_since, on.disabled_at, on.disabled_reason) == (True, 0, None, None,
                                                                                              None)
    store.webhook_endpoints.remove_endpoint(w.ws.id, ep.id)
    assert record(w.ws.id, ep.id, 9999, False, disable_after=DAY, min_failures=3) is None


def test_an_owner_turns_an_endpoint_off_and_on_again(store):
    w, other = World(store), World(store, "Other")
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    off = store.webhook_endpoints.disable_endpoint(w.ws.id, ep.id, 5000, turned_off_by("ada@example.com"))
    assert (off.enabled, off.disabled_at, off.disabled_reason) == (False, 5000, "turned off by ada@example.com")
    assert turned_off_by_an_owner(off) and store.webhook_endpoints.get_endpoint(w.ws.id, ep.id) == off
    # off already: left as it was (the first reason and time stand)
    again = store.webhook_endpoints.disable_endpoint(w.ws.id, ep.id, 6000, turned_off_by("bob@example.com"))
    assert again == off
    on = store.webhook_endpoints.enable_endpoint(w.ws.id, ep.id)
    assert (on.enabled, on.disabled_at, on.disabled_reason) == (True, None, None) and not turned_off_by_an_owner(on)
    with pytest.raises(NotFound):
        store.webhook_endpoints.disable_endpoint(other.ws.id, ep.id, 7000, turned_off_by("eve@example.com"))
    with pytest.raises(NotFound):
        store.webhook_endpoints.disable_endpoint(w.ws.id, "wh_unknown", 7000, turned_off_by("ada@example.com"))
    assert store.webhook_endpoints.get_endpoint(w.ws.id, ep.id).enabled is True


def test_an_endpoint_turned_off_by_its_failures_was_not_turned_off_by_an_owner(store):
    w = World(store)
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    for t in (1000, 1000 + DAY):
        after, _ = store.webhook_endpoints.record_attempt(w.ws.id, ep.id, t, False, disable_after=DAY, min_failures=2)
    assert not after.enabled and not turned_off_by_an_owner(after)


def test_endpoints_are_listed_oldest_first_whatever_their_ids(store):
    """The list's order is the contract's (oldest first), not the ids' (two endpoints made in the
    same millisecond have ids in no particular order)."""
    w = World(store)
    newer = store.webhook_endpoints.add_endpoint(replace(endpoint(w), id="wh_a", created_at=200))
    older = store.webhook_endpoints.add_endpoint(replace(endpoint(w, "https://ci.example.org/hook"), id="wh_b",
                                                         created_at=100))
    assert [e.id for e in store.webhook_endpoints.list_endpoints(w.ws.id)] == [older.id, newer.id]


def test_an_endpoints_events_are_changed_in_place_and_nothing_else_is(store):
    """Its URL, sealed secret, off state, failures and delivery log stay; every event is stored as
    ``()`` as an addition stores it; the workspace still owes events for the cards filed after."""
    w, other = World(store), World(store, "Other")
    ep = endpoint(w)
    store.webhook_endpoints.add_endpoint(ep)
    w.file(webhooks=None, created_at=1000)
    (event,) = [e for e in store.webhook_deliveries.due_events(1000) if e.event == "card.filed"]
    store.webhook_deliveries.fan_out(event, deliveries_for(store, w, ep, event, 1001))
    store.webhook_endpoints.record_attempt(w.ws.id, ep.id, 1002, False, disable_after=DAY, min_failures=5)
    store.webhook_endpoints.disable_endpoint(w.ws.id, ep.id, 1003, turned_off_by("ada@example.com"))
    before = store.webhook_endpoints.get_endpoint(w.ws.id, ep.id)
    log = store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)
    workspace_before = store.workspaces.get_workspace(w.ws.id).webhooks

    narrowed = store.webhook_endpoints.set_endpoint_events(w.ws.id, ep.id, ("card.lapsed", "card.answered"))
    assert narrowed == replace(before, events=("card.answered", "card.lapsed"))  # in the order of EVENTS
    assert store.webhook_endpoints.get_endpoint(w.ws.id, ep.id) == narrowed
    assert (narrowed.takes("card.answered"), narrowed.takes("card.filed")) == (True, False)
    every = store.webhook_endpoints.set_endpoint_events(w.ws.id, ep.id, ())
    assert every == replace(before, events=()) and every.events_taken == EVENTS and every.takes("card.edited")
    assert store.webhook_endpoints.get_endpoint(w.ws.id, ep.id) == every
    assert store.webhook_deliveries.list_deliveries(w.ws.id, ep.id) == log
    assert store.workspaces.get_workspace(w.ws.id).webhooks == workspace_before
    store.webhook_endpoints.set_endpoint_events(w.ws.id, ep.id, ("card.answered",))
    later = w.file(webhooks=None, created_at=2000)  # still owes its events: the endpoint takes one
    w.move(later, CardState.DECLINED, now=2100)
    assert (later.id, "card.answered", "declined") in due_events(store, 2100)

    with pytest.raises(BadInput) as refused:
        store.webhook_endpoints.set_endpoint_events(w.ws.id, ep.id, ("card.filed", "card.exploded"))
    assert (refused.value.field, refused.value.message) == ("events", (
        "events: 'card.exploded' is no event a webhook is sent for; the events are card.filed, card.answered, "
        "card.completed, card.failed, card.lapsed, card.edited."))
    with pytest.raises(NotFound):
        store.webhook_endpoints.set_endpoint_events(other.ws.id, ep.id, ("card.filed",))
    with pytest.raises(NotFound):
        store.webhook_endpoints.set_endpoint_events(w.ws.id, "wh_unknown", ("card.filed",))
    assert store.webhook_endpoints.get_endpoint(w.ws.id, ep.id).events == ("card.answered",)  # nothing written
    assert store.webhook_endpoints.list_endpoints(other.ws.id) == []


def test_a_database_of_an_earlier_release_reads_every_event_but_card_edited_as_every_event(tmp_path):
    """Schema 12: a webhook_endpoints table made before it gains ``events_exact``. Its endpoints
    stored with every event there was before ``card.edited`` were added for every event (then
    stored as that list), and read so; one that named fewer reads as it was; one added after the
    upgrade naming those five keeps exactly those five."""
    path = str(tmp_path / "old.db")
    first = SQLiteStore(path)
    w = World(first)
    every = first.webhook_endpoints.add_endpoint(endpoint(w, events=BEFORE_EDITED))
    fewer = first.webhook_endpoints.add_endpoint(endpoint(w, events=BEFORE_EDITED[:2]))
    first.close()
    as_released_before(path, "webhook_endpoints", "events_exact", 11)

    reopened = SQLiteStore(path)
    try:
        chosen = reopened.webhook_endpoints.add_endpoint(endpoint(w, events=BEFORE_EDITED))
        read = {e.id: e.events for e in reopened.webhook_endpoints.list_endpoints(w.ws.id)}
        assert read == {every.id: (), fewer.id: BEFORE_EDITED[:2], chosen.id: BEFORE_EDITED}
    finally:
        reopened.close()
    (version,) = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()
    assert version == 12
