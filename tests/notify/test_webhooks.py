"""Signed webhooks delivered to a real receiver on 127.0.0.1 (both stores): every signature checked
with the Standard Webhooks library, the payload exact and free of tickets and arguments, retries
reusing the webhook id, no redirect followed, a private address refused, an endpoint failing for a
day turned off with its owner told once."""

from __future__ import annotations

import base64
import json
import threading
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.core.sealing import SealError
from countersign.core.times import iso
from countersign.notify.webhooks import (
    DISABLE_AFTER,
    GIVE_UP_AFTER,
    WebhookDeliverer,
    new_secret,
    seal_secret,
    unseal_secret,
    webhook_sealer,
)
from countersign.settings import Settings
from countersign.store.cards import CardCommit
from countersign.store.dynamodb.webhook_endpoints import endpoint_key
from countersign.store.webhook_deliveries import DELIVERED, DROPPED, EVENTS, GAVE_UP, PENDING, delivery_id
from countersign.store.webhook_endpoints import BEFORE_EDITED, WebhookEndpoint
from countersign.surfaces.webhook_endpoints import set_events
from tests.notify._helpers import Recorder
from tests.store._factories import DAY, World, card, filed
from tests.support.webhook_receiver import webhook_receiver

KEYS = [b"request-state key for the webhook tests, 32+ bytes"]
SECRET_ARGUMENT = "sk_live_do_not_leak_0123456789"


@pytest.fixture
def receiver():
    with webhook_receiver() as r:
        yield r


def settings_for(tmp_path, private: bool = True) -> Settings:
    return Settings(data_dir=tmp_path / "data", public_url="https://confirm.example.test", upstream_private=private)


def add_endpoint(w: World, url: str, events=EVENTS) -> tuple[WebhookEndpoint, str]:
    endpoint_id, secret = new_id("wh_"), new_secret()
    ep = WebhookEndpoint(id=endpoint_id, workspace_id=w.ws.id, url=url, events=tuple(events),
                         secret_sealed=seal_secret(webhook_sealer(KEYS), w.ws.id, endpoint_id, secret),
                         created_at=0, created_by=w.person.id)
    w.store.webhook_endpoints.add_endpoint(ep)
    return ep, secret


def file(w: World, at: int, ttl: int = DAY):
    c = card(w.ws, w.person, w.conn, webhooks=None, created_at=at, ttl=ttl,
             arguments={"amount": 1250, "payee": "Café", "api_key": SECRET_ARGUMENT})
    w.store.cards.file_card(c, filed(c))
    return c


def verified(secret: str, got) -> dict:
    return Webhook(secret).verify(got.body, got.headers)


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_each_card_event_is_posted_signed_with_exactly_the_card_view(store, tmp_path, receiver):
    w = World(store)
    ep, secret = add_endpoint(w, receiver.url)
    now = int(time.time())  # the library checks the timestamp against its own clock (5 minutes)
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=lambda: now)
    c = file(w, now)
    running = w.move(c, CardState.RUNNING, now=now)
    store.cards.commit_card(CardCommit(card=running, target=CardState.COMPLETED, now=now, audit=()))
    assert deliverer.sweep() == 3

    by_type = {verified(secret, got)["type"]: got for got in receiver.received}
    assert sorted(by_type) == ["card.answered", "card.completed", "card.filed"]
    filed_body = verified(secret, by_type["card.filed"])
    assert filed_body == {"type": "card.filed", "timestamp": iso(now), "data": {
        "card_id": c.id, "workspace_id": w.ws.id, "tool": "add_transaction", "title": "Add a transaction",
        "lines": ["Payee: Café Ünïcode", "Amount: 12.50"], "state": "pending", "answer": None, "outcome": None,
        "replaced_by": None, "replaces": None, "asked_by": {"connection": "Claude on laptop"}, "created_at": iso(now),
        "expires_at": iso(now + DAY),
        "occurred_at": iso(now)}}
    answered = verified(secret, by_type["card.answered"])["data"]
    assert (answered["state"], answered["answer"], answered["outcome"]) == ("running", "confirmed", None)
    completed = verified(secret, by_type["card.completed"])["data"]
    assert (completed["state"], completed["outcome"]) == ("completed", "completed")
    for kind, got in by_type.items():
        assert got.path == "/hooks/countersign"
        assert got.headers["content-type"] == "application/json"
        assert got.headers["webhook-id"] == delivery_id(f"{c.id}.{kind.removeprefix('card.')}", ep.id)
        assert got.headers["webhook-timestamp"] == str(now)
        text = got.body.decode()
        for secret_text in (c.ticket, SECRET_ARGUMENT, "api_key", secret, ep.secret_sealed):
            assert secret_text not in text
    with pytest.raises(WebhookVerificationError):  # another endpoint's secret does not verify
        Webhook(new_secret()).verify(by_type["card.filed"].body, by_type["card.filed"].headers)
    log = store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)
    assert sorted((d.event, d.state, d.status_code, d.attempts) for d in log) == [
        ("card.answered", DELIVERED, 200, 1), ("card.completed", DELIVERED, 200, 1), ("card.filed", DELIVERED, 200, 1)]
    assert deliverer.sweep() == 0 and len(receiver.received) == 3  # exactly once


def test_an_endpoint_gets_only_the_events_it_takes_and_a_declined_card_says_so(store, tmp_path, receiver):
    w = World(store)
    ep, secret = add_endpoint(w, receiver.url, events=["card.answered"])
    now = int(time.time())
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=lambda: now)
    c = file(w, now)
    w.move(c, CardState.DECLINED, now=now)
    deliverer.sweep()
    (got,) = receiver.received
    data = verified(secret, got)["data"]
    assert (data["card_id"], data["state"], data["answer"], data["outcome"]) == (c.id, "declined", "declined",
                                                                                 "declined")


def test_an_endpoint_narrowed_to_card_answered_is_sent_only_that_for_a_new_card(store, tmp_path, receiver):
    """Its events changed in place (the surfaces' shared change, as the API and the CLI make it):
    the same secret signs what it is sent, and a card filed after is sent card.answered only."""
    w = World(store)
    ep, secret = add_endpoint(w, receiver.url, events=())  # every event
    now = int(time.time())
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=lambda: now)
    narrowed = set_events(store.webhook_endpoints, w.person, ep.id, ["card.answered"], False)
    assert narrowed.events == ("card.answered",) and narrowed.secret_sealed == ep.secret_sealed
    c = file(w, now)
    running = w.move(c, CardState.RUNNING, now=now)
    store.cards.commit_card(CardCommit(card=running, target=CardState.COMPLETED, now=now, audit=()))
    assert deliverer.sweep() == 1
    (got,) = receiver.received
    body = verified(secret, got)
    assert (body["type"], body["data"]["card_id"], body["data"]["state"]) == ("card.answered", c.id, "running")
    assert [(d.event, d.state) for d in store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)] == [
        ("card.answered", DELIVERED)]


def test_a_card_that_lapses_is_reported_at_its_deadline_and_an_answered_one_is_not(store, tmp_path, receiver):
    w = World(store)
    ep, secret = add_endpoint(w, receiver.url, events=["card.lapsed"])
    clock = Clock(time.time())
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=clock)
    lapsing = file(w, int(clock.now), ttl=60)
    answered = file(w, int(clock.now), ttl=60)
    withdrawn = file(w, int(clock.now), ttl=60)
    w.move(answered, CardState.DECLINED, now=int(clock.now))
    w.move(withdrawn, CardState.WITHDRAWN, now=int(clock.now))
    deliverer.sweep()
    assert [(json.loads(r.body)["data"]["card_id"], json.loads(r.body)["data"]["state"]) for r in receiver.received] \
        == [(withdrawn.id, "withdrawn")]
    clock.now += 60
    deliverer.sweep()
    assert [(json.loads(r.body)["data"]["card_id"], json.loads(r.body)["data"]["state"])
            for r in receiver.received[1:]] == [(lapsing.id, "expired")]
    verified(secret, receiver.received[1])  # within the library's five minutes of its own clock


def test_an_edited_card_is_reported_with_the_card_that_replaced_it_and_its_deadline_reports_nothing(
        store, tmp_path, receiver):
    """A person edits a waiting card: its endpoint is sent ``card.edited`` for it, naming the new
    card (``replaced_by``), and ``card.filed`` for the new one; the edited card's deadline sends no
    ``card.lapsed`` (it was not left to lapse), the new card's does if it is left unanswered."""
    w = World(store)
    ep, secret = add_endpoint(w, receiver.url)
    clock = Clock(time.time())
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=clock)
    filed_at = int(clock.now)
    old = file(w, filed_at, ttl=60)
    assert deliverer.sweep() == 1  # its card.filed
    clock.now += 10
    edited_at = int(clock.now)
    new = w.edit(old, edited_at, ttl=120, webhooks=None,
                 arguments={"amount": 990, "payee": "Café", "api_key": SECRET_ARGUMENT})
    assert deliverer.sweep() == 2

    by_type = {verified(secret, got)["type"]: got for got in receiver.received[1:]}
    assert sorted(by_type) == ["card.edited", "card.filed"]
    assert verified(secret, by_type["card.edited"]) == {"type": "card.edited", "timestamp": iso(edited_at), "data": {
        "card_id": old.id, "workspace_id": w.ws.id, "tool": "add_transaction", "title": "Add a transaction",
        "lines": ["Payee: Café Ünïcode", "Amount: 12.50"], "state": "edited", "answer": None, "outcome": "edited",
        "replaced_by": new.id, "replaces": None, "asked_by": {"connection": "Claude on laptop"},
        "created_at": iso(filed_at),
        "expires_at": iso(filed_at + 60), "occurred_at": iso(edited_at)}}
    assert by_type["card.edited"].headers["webhook-id"] == delivery_id(f"{old.id}.edited", ep.id)
    filed_data = verified(secret, by_type["card.filed"])["data"]
    assert (filed_data["card_id"], filed_data["state"], filed_data["replaced_by"], filed_data["replaces"],
            filed_data["expires_at"]) == (new.id, "pending", None, old.id, iso(edited_at + 120))
    for got in by_type.values():
        text = got.body.decode()
        for secret_text in (old.ticket, new.ticket, SECRET_ARGUMENT, "api_key", secret, ep.secret_sealed):
            assert secret_text not in text

    clock.now = filed_at + 60  # the edited card's deadline: its card.lapsed is moot, nothing is sent
    assert deliverer.sweep() == 0 and len(receiver.received) == 3
    assert store.webhook_deliveries.get_event(f"{old.id}.lapsed").done is True
    clock.now = edited_at + 120  # the new card's deadline, unanswered: it lapses
    assert deliverer.sweep() == 1
    lapsed = verified(secret, receiver.received[3])
    assert (lapsed["type"], lapsed["data"]["card_id"], lapsed["data"]["state"]) == ("card.lapsed", new.id, "expired")
    log = store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)
    assert sorted((d.card_id == old.id, d.event, d.state) for d in log) == [
        (False, "card.filed", DELIVERED), (False, "card.lapsed", DELIVERED),
        (True, "card.edited", DELIVERED), (True, "card.filed", DELIVERED)]


def written_before_exact_events(store, endpoint: WebhookEndpoint) -> None:
    """``endpoint`` as a release before ``card.edited`` left it: without the mark that its events
    are exactly its list (``events_exact``), as the SQLite migration to version 12 and DynamoDB
    items of that release read."""
    if hasattr(store, "database"):
        with store.database.write() as db:
            db.execute("UPDATE webhook_endpoints SET events_exact = 0 WHERE id = ?", (endpoint.id,))
    else:
        store.table.update(endpoint_key(endpoint.workspace_id, endpoint.id), UpdateExpression="REMOVE events_exact")


def test_every_event_but_card_edited_can_be_chosen_on_adding_and_on_changing(store, tmp_path, receiver):
    """Naming every event but ``card.edited`` is a choice kept as made, on adding an endpoint and on
    changing its events: such an endpoint is not sent ``card.edited`` (only one written before
    events were kept exactly is read as every event)."""
    w = World(store)
    added, _ = add_endpoint(w, receiver.url, events=BEFORE_EDITED)
    changed, _ = add_endpoint(w, receiver.url, events=())
    store.webhook_endpoints.set_endpoint_events(w.ws.id, changed.id, BEFORE_EDITED)
    listed = {e.id: e for e in store.webhook_endpoints.list_endpoints(w.ws.id)}
    assert [listed[e.id].events for e in (added, changed)] == [BEFORE_EDITED] * 2
    now = int(time.time())
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=lambda: now)
    old = file(w, now)
    w.edit(old, now, ttl=120, webhooks=None)
    deliverer.sweep()
    kinds = sorted(json.loads(got.body)["type"] for got in receiver.received)
    assert kinds == ["card.filed"] * 4  # the old card's and the new one's, to each; no card.edited


def test_an_endpoint_added_for_every_event_is_sent_events_added_later_and_one_that_named_some_is_not(
        store, tmp_path, receiver):
    """Added without naming events, an endpoint takes every event, those added later too (as
    ``card.edited`` was); one stored with every event there was before ``card.edited`` took every
    event when it was added, and is sent it too; one that named some is sent those only."""
    w = World(store)
    every, _ = add_endpoint(w, receiver.url, events=())
    older, _ = add_endpoint(w, receiver.url, events=BEFORE_EDITED)
    written_before_exact_events(store, older)
    some, _ = add_endpoint(w, receiver.url, events=[e for e in BEFORE_EDITED if e != "card.answered"])
    listed = {e.id: e for e in store.webhook_endpoints.list_endpoints(w.ws.id)}
    assert [(listed[e.id].events, listed[e.id].events_taken) for e in (every, older)] == [((), EVENTS)] * 2
    now = int(time.time())
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=lambda: now)
    old = file(w, now)
    w.edit(old, now, ttl=120, webhooks=None)
    deliverer.sweep()
    sent = {(got.headers["webhook-id"], json.loads(got.body)["type"]) for got in receiver.received}
    edited = {ep.id for ep in (every, older, some) if (delivery_id(f"{old.id}.edited", ep.id), "card.edited") in sent}
    assert edited == {every.id, older.id}
    assert sum(1 for _, kind in sent if kind == "card.filed") == 6  # each endpoint: the old card's and the new one's


def test_a_failed_attempt_is_retried_later_with_the_same_webhook_id(store, tmp_path, receiver):
    w = World(store)
    ep, secret = add_endpoint(w, receiver.url, events=["card.filed"])
    clock = Clock(time.time())
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=clock)
    receiver.answer(500)
    file(w, int(clock.now))
    assert deliverer.sweep() == 1
    (d,) = store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)
    assert (d.state, d.attempts, d.status_code, d.error, d.due_at) == (PENDING, 1, 500, "HTTP 500",
                                                                         int(clock.now) + 30)
    assert deliverer.sweep() == 0  # not due yet
    clock.now += 30
    assert deliverer.sweep() == 1
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == d.id
    assert first.body == second.body
    verified(secret, second)
    (d,) = store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)
    assert (d.state, d.attempts, d.status_code, d.error) == (DELIVERED, 2, 200, None)
    assert store.webhook_endpoints.get_endpoint(w.ws.id, ep.id).failures == 0


def test_a_redirect_is_not_followed(store, tmp_path, receiver):
    w = World(store)
    ep, _ = add_endpoint(w, receiver.url, events=["card.filed"])
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=time.time)
    receiver.answer(302)
    file(w, int(time.time()))
    deliverer.sweep()
    assert [r.path for r in receiver.received] == ["/hooks/countersign"]  # never /elsewhere
    (d,) = store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)
    assert (d.state, d.status_code, d.error) == (PENDING, 302, "a redirect (not followed)")


def test_a_private_address_is_refused_when_sending_unless_allowed(store, tmp_path, receiver):
    w = World(store)
    ep, _ = add_endpoint(w, receiver.url.replace("http://", "https://"), events=["card.filed"])
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path, private=False), clock=time.time)
    file(w, int(time.time()))
    deliverer.sweep()
    assert receiver.received == []
    (d,) = store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)
    assert (d.state, d.status_code, d.error) == (PENDING, None,
                                                 "the host 127.0.0.1 resolves to a private or reserved address")


def test_a_removed_endpoint_is_sent_nothing_more(store, tmp_path, receiver):
    w = World(store)
    ep, _ = add_endpoint(w, receiver.url, events=["card.filed"])
    clock = Clock(time.time())
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=clock)
    receiver.answer(503)
    file(w, int(clock.now))
    deliverer.sweep()
    (owed,) = store.webhook_deliveries.due_deliveries(int(clock.now) + 30)
    store.webhook_endpoints.remove_endpoint(w.ws.id, ep.id)
    clock.now += 30
    assert deliverer.sweep() == 0
    assert len(receiver.received) == 1
    assert store.webhook_deliveries.get_delivery(owed).state == DROPPED


def test_an_endpoint_failing_for_a_day_is_given_up_turned_off_and_its_owners_told_once(store, tmp_path, receiver):
    w = World(store)
    admin = w.add_person(role="admin")
    ep, _ = add_endpoint(w, receiver.url)
    clock = Clock(1_800_000_000)
    sender = Recorder()
    deliverer = WebhookDeliverer(store, KEYS, settings_for(tmp_path), sender=sender, clock=clock)
    receiver.answer(*[503] * 100)
    start = int(clock.now)
    c = card(w.ws, w.person, w.conn, webhooks=None, created_at=start, ttl=3 * DAY)
    store.cards.file_card(c, filed(c))
    deliverer.sweep()
    tries = [int(clock.now)]
    while store.webhook_deliveries.due_deliveries(10**10):
        clock.now = min(d.due_at for d in store.webhook_deliveries.due_deliveries(10**10))
        deliverer.sweep()
        tries.append(int(clock.now))
    gaps = [b - a for a, b in zip(tries, tries[1:], strict=False)]
    assert gaps[:5] == [30, 60, 120, 240, 480] and max(gaps) == 4 * 3600
    assert tries[-1] == start + GIVE_UP_AFTER  # the last try is a day after the event
    (d,) = store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)
    assert (d.state, d.attempts, d.status_code) == (GAVE_UP, len(tries), 503)
    after = store.webhook_endpoints.get_endpoint(w.ws.id, ep.id)
    assert tries[-1] - start >= DISABLE_AFTER
    assert (after.enabled, after.disabled_at, after.failures) == (False, start + DISABLE_AFTER, len(tries))
    assert after.disabled_reason == f"every attempt failed since {iso(start)} ({len(tries)} in a row)"
    (told,) = sender.emails  # the owner, not the admin, once
    assert told.to == w.person.email and told.to != admin.email
    assert told.subject == "A webhook endpoint was turned off"
    assert f"countersign stopped sending webhooks to http://127.0.0.1 (endpoint {ep.id})" in told.text
    assert "/hooks/countersign" not in told.text and after.disabled_reason in told.text
    # turned off: later events are owed it no delivery at all
    received = len(receiver.received)
    clock.now += 60
    w.move(c, CardState.DECLINED, now=int(clock.now))
    assert deliverer.sweep() == 0 and len(receiver.received) == received
    assert [x.state for x in store.webhook_deliveries.list_deliveries(w.ws.id, ep.id)] == [GAVE_UP]
    assert len(sender.emails) == 1


def test_two_deliverers_at_once_send_each_webhook_once(tmp_path, receiver):
    """SQLite only: moto applies a conditional write without a lock across threads (two threads
    both win one UpdateItem on the same condition), where DynamoDB itself never does; the lease's
    single winner is held on both stores, one caller after another, in tests/store/test_webhooks.py."""
    from countersign.store.sqlite import SQLiteStore

    store = SQLiteStore(str(tmp_path / "countersign.db"))
    w = World(store)
    add_endpoint(w, receiver.url, events=["card.filed"])
    now = int(time.time())
    for _ in range(5):
        file(w, now)
    deliverers = [WebhookDeliverer(store, KEYS, settings_for(tmp_path), clock=lambda: now) for _ in range(2)]
    threads = [threading.Thread(target=d.sweep) for d in deliverers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [r.headers["webhook-id"] for r in receiver.received]
    assert len(ids) == 5 and len(set(ids)) == 5


def test_the_secret_is_sealed_for_its_endpoint_only():
    secret = new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    sealer = webhook_sealer(KEYS)
    sealed = seal_secret(sealer, "ws_1", "wh_1", secret)
    assert secret not in sealed
    assert unseal_secret(sealer, "ws_1", "wh_1", sealed) == secret
    with pytest.raises(SealError):
        unseal_secret(sealer, "ws_1", "wh_2", sealed)  # copied onto another endpoint: does not open
