"""Web Push to a loopback push service that decrypts each message with the subscription's own
keys and verifies the VAPID JWT (both stores): the message is exactly the card's title, who asked,
where the page shows it and whether a click may answer it, and to a device whose page session
ended only that a request waits (nothing of the card); a 404/410 drops the subscription; a
failure keeps it; plain http and private addresses are refused unless the test setting allows
them; pushes are rate limited per person; a card no longer waiting is not pushed."""

from __future__ import annotations

import dataclasses

import pytest

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.notify.push import (
    FAILED,
    GONE,
    LIMIT,
    OFF,
    QUIET,
    RATE_LIMITED,
    SENT,
    PushNotifier,
    application_server_key,
    vapid_subject,
)
from countersign.settings import Settings
from countersign.store.push_subscriptions import PushSubscription, subscription_id
from countersign.store.workspaces import QuietHours
from tests.notify._helpers import file_card
from tests.store._factories import World
from tests.support.push_service import Device, push_service

VAPID_SECRET = "a vapid secret for the push tests, 32+ bytes long"
PUBLIC_URL = "https://confirm.example.test"


@pytest.fixture
def service():
    with push_service() as s:
        yield s


class Clock:
    def __init__(self, now: float = 1_000_000):
        self.now = now

    def __call__(self) -> float:
        return self.now


def settings_for(tmp_path, private: bool = True) -> Settings:
    return Settings(data_dir=tmp_path / "data", public_url=PUBLIC_URL, upstream_private=private)


SIGNED_IN = 4_000_000_000  # a page session on the device that outlasts every test's clock


def subscribe(w: World, device: Device, person=None, at: int = 100,
              signed_in_until: int | None = SIGNED_IN) -> PushSubscription:
    sub = PushSubscription(id=subscription_id(device.endpoint), workspace_id=w.ws.id,
                           person_id=(person or w.person).id, endpoint=device.endpoint, p256dh=device.p256dh,
                           auth=device.as_json()["keys"]["auth"], device="Chrome on Android", created_at=at,
                           signed_in_until=signed_in_until)
    return w.store.push_subscriptions.add_subscription(sub)


def notifier(w: World, tmp_path, clock: Clock, *, private: bool = True, passkey: bool = False) -> PushNotifier:
    return PushNotifier(w.store, lambda: VAPID_SECRET, settings_for(tmp_path, private),
                        needs_passkey=lambda card, workspace: passkey, clock=clock)


def test_a_filed_card_reaches_each_device_encrypted_for_it_and_signed(store, tmp_path, service):
    w, clock = World(store), Clock()
    phone, laptop = service.device(), service.device()
    subscribe(w, phone), subscribe(w, laptop)
    card = file_card(w, clock.now, title="Pay Café Lumière €12.50")
    push = notifier(w, tmp_path, clock)
    assert push.send_card(w.ws.id, card.id) == 2
    got = service.wait_for(2)
    assert {g.path for g in got} == {phone.endpoint.removeprefix(service.origin),
                                     laptop.endpoint.removeprefix(service.origin)}
    for one in got:
        assert one.problem is None
        assert one.message == {"card": card.id, "title": "Pay Café Lumière €12.50",
                               "body": f"Asked by {w.conn.name}", "url": f"/confirm?card={card.id}",
                               "answerable": True, "labels": {"confirm": "Confirm", "decline": "Decline"}}
        assert one.vapid_key == application_server_key(VAPID_SECRET)
        assert one.claims["sub"] == vapid_subject(PUBLIC_URL) == "https://confirm.example.test"
        assert one.headers["ttl"] == "3600" and one.headers["urgency"] == "high"
        assert not {"ticket", "code", "session"} & set(one.message)
    assert push.counts[SENT] == 2
    assert {s.last_used_at for s in store.push_subscriptions.list_subscriptions(w.ws.id, w.person.id)} == \
        {int(clock.now)}


def test_a_card_that_needs_a_passkey_is_pushed_without_its_answer(store, tmp_path, service):
    w, clock = World(store), Clock()
    subscribe(w, service.device())
    card = file_card(w, clock.now)
    notifier(w, tmp_path, clock, passkey=True).send_card(w.ws.id, card.id)
    pushed = service.wait_for(1)[0].message
    assert pushed["answerable"] is False and "labels" not in pushed  # no buttons, so no words for them


def test_only_the_cards_person_devices_get_it(store, tmp_path, service):
    w, clock = World(store), Clock()
    other = w.add_person()
    mine, theirs = service.device(), service.device()
    subscribe(w, mine), subscribe(w, theirs, person=other)
    card = file_card(w, clock.now)
    assert notifier(w, tmp_path, clock).send_card(w.ws.id, card.id) == 1
    assert [p.path for p in service.wait_for(1)] == [mine.endpoint.removeprefix(service.origin)]


@pytest.mark.parametrize("status", [404, 410])
def test_a_subscription_the_push_service_says_is_gone_is_dropped(store, tmp_path, service, status):
    w, clock = World(store), Clock()
    gone, kept = service.device(), service.device()
    subscribe(w, gone, at=1), subscribe(w, kept, at=2)
    service.answer(status)  # the first POST (the older subscription's)
    push = notifier(w, tmp_path, clock)
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 1
    assert [s.endpoint for s in store.push_subscriptions.list_subscriptions(w.ws.id, w.person.id)] == \
        [kept.endpoint]
    assert push.counts[GONE] == 1 and push.counts[SENT] == 1


@pytest.mark.parametrize("status", [400, 413, 429, 500, 503])
def test_any_other_failure_keeps_the_subscription(store, tmp_path, service, status):
    w, clock = World(store), Clock()
    device = service.device()
    subscribe(w, device)
    service.answer(status)
    push = notifier(w, tmp_path, clock)
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 0
    [kept] = store.push_subscriptions.list_subscriptions(w.ws.id, w.person.id)
    assert kept.endpoint == device.endpoint and kept.last_used_at is None
    assert push.counts[FAILED] == 1


def test_plain_http_and_loopback_are_refused_without_the_test_setting(store, tmp_path, service):
    w, clock = World(store), Clock()
    subscribe(w, service.device())
    push = notifier(w, tmp_path, clock, private=False)
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 0
    assert service.pushes == [] and push.counts[FAILED] == 1


def test_an_https_endpoint_on_a_private_address_is_refused(store, tmp_path, service):
    w, clock = World(store), Clock()
    endpoint = "https://push.internal.test/push/1"
    sub = PushSubscription(id=subscription_id(endpoint), workspace_id=w.ws.id, person_id=w.person.id,
                           endpoint=endpoint, p256dh=service.device().p256dh, auth="AAAAAAAAAAAAAAAAAAAAAA",
                           device="x", created_at=1)
    store.push_subscriptions.add_subscription(sub)
    push = PushNotifier(store, lambda: VAPID_SECRET, settings_for(tmp_path, private=False), clock=clock,
                        resolver=lambda host, port: ["10.1.2.3"])
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 0
    assert push.counts[FAILED] == 1 and service.pushes == []


def test_pushes_are_rate_limited_per_person(store, tmp_path, service):
    w, clock = World(store), Clock()
    other = w.add_person()
    subscribe(w, service.device()), subscribe(w, service.device(), person=other)
    push = notifier(w, tmp_path, clock)
    for _ in range(LIMIT):
        assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 1
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 0
    assert push.counts[RATE_LIMITED] == 1
    assert push.send_card(w.ws.id, file_card(w, clock.now, who=other).id) == 1  # someone else's are not
    clock.now += 60
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 1  # the next window
    assert len(service.wait_for(LIMIT + 2)) == LIMIT + 2


def test_a_card_no_longer_waiting_and_a_person_without_devices_get_nothing(store, tmp_path, service):
    w, clock = World(store), Clock()
    push = notifier(w, tmp_path, clock)
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 0  # no device
    subscribe(w, service.device())
    card = file_card(w, clock.now)
    w.move(card, CardState.DECLINED, int(clock.now))
    assert push.send_card(w.ws.id, card.id) == 0
    assert push.send_card(w.ws.id, new_id("card_")) == 0  # unknown: logged, never raised
    assert service.pushes == []


def test_the_vapid_key_is_one_p256_key_per_secret():
    key = application_server_key(VAPID_SECRET)
    assert key == application_server_key(VAPID_SECRET) != application_server_key(VAPID_SECRET + "x")
    assert len(key) == 87  # 65 bytes, base64url without padding
    assert vapid_subject("http://localhost:8000") == "mailto:countersign@localhost"


def test_a_long_title_is_cut_so_a_message_stays_small(store, tmp_path, service):
    w, clock = World(store), Clock()
    subscribe(w, service.device())
    card = file_card(w, clock.now, title="é" * 5000)
    notifier(w, tmp_path, clock).send_card(w.ws.id, card.id)
    got = service.wait_for(1)[0]
    assert got.message["title"] == "é" * 200 and len(got.plaintext) < 1000
    assert dataclasses.asdict(card)["title"] == "é" * 5000


def test_a_person_who_turned_push_off_or_whose_quiet_hours_run_gets_no_push(store, tmp_path, service):
    """Each person's choice in Settings (Person.channels_off) and their quiet hours hold push, as
    they hold Slack; turned back on, the next card is pushed."""
    w, clock = World(store), Clock(1_796_596_200)  # 2026-12-06 23:30 in Berlin
    subscribe(w, service.device())
    push = notifier(w, tmp_path, clock)
    store.workspaces.update_person(w.ws.id, w.person.id, channels_off=("push",))
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 0
    store.workspaces.update_person(w.ws.id, w.person.id, channels_off=(),
                                   quiet_hours=QuietHours("22:00", "07:00", "Europe/Berlin"))
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 0
    assert push.counts == {OFF: 1, QUIET: 1} and service.pushes == []
    store.workspaces.update_person(w.ws.id, w.person.id, quiet_hours=None)
    assert push.send_card(w.ws.id, file_card(w, clock.now).id) == 1
    assert len(service.wait_for(1)) == 1


SIGN_IN_ONLY = {"signIn": True, "title": "A request is waiting for you",
                "body": "Sign in on this device to see it and answer.", "url": "/confirm"}


def by_device(service, got) -> dict[str, dict]:
    return {service.origin + g.path: g for g in got}


def assert_nothing_of_the_card(pushed, card, w: World) -> None:
    text = pushed.plaintext.decode("utf-8")
    assert card.title not in text and w.conn.name not in text and card.id not in text
    assert not {"card", "labels", "answerable", "waiting"} & set(pushed.message)


def test_a_device_whose_session_ended_is_told_only_that_a_request_waits(store, tmp_path, service):
    """Per device: one signed in (its session ends later) gets the card; one whose session ended
    (at ``signed_in_until`` exactly, as the session's own expiry) gets no title, no who asked, no
    buttons — only that a request waits, opening the page, which asks to sign in. Renewed (the
    page loaded signed in there again), it gets the card's own push."""
    w, clock = World(store), Clock()
    now = int(clock.now)
    active, lapsed = service.device(), service.device()
    subscribe(w, active, at=1, signed_in_until=now + 1), subscribe(w, lapsed, at=2, signed_in_until=now)
    card = file_card(w, clock.now, title="Pay Café Lumière €12.50")
    push = notifier(w, tmp_path, clock)
    assert push.send_card(w.ws.id, card.id) == 2
    got = by_device(service, service.wait_for(2))
    assert got[active.endpoint].message["title"] == "Pay Café Lumière €12.50"
    assert got[active.endpoint].message["labels"] == {"confirm": "Confirm", "decline": "Decline"}
    signed_out = got[lapsed.endpoint]
    assert signed_out.problem is None and signed_out.message == SIGN_IN_ONLY
    assert_nothing_of_the_card(signed_out, card, w)
    assert push.counts[SENT] == 2  # both devices took one; the lapsed one's last use is recorded too
    assert {s.last_used_at for s in store.push_subscriptions.list_subscriptions(w.ws.id, w.person.id)} == {now}

    lapsed_id = subscription_id(lapsed.endpoint)
    assert store.push_subscriptions.renew_subscription(w.ws.id, w.person.id, lapsed_id, now + 3600)
    again = file_card(w, clock.now, title="Send the report")
    assert push.send_card(w.ws.id, again.id) == 2
    got = by_device(service, service.wait_for(4)[2:])
    assert got[lapsed.endpoint].message == got[active.endpoint].message == {
        "card": again.id, "title": "Send the report", "body": f"Asked by {w.conn.name}",
        "url": f"/confirm?card={again.id}", "answerable": True, "labels": {"confirm": "Confirm", "decline": "Decline"}}


def test_a_card_that_needs_a_passkey_reaches_a_signed_out_device_the_same_content_free_way(store, tmp_path, service):
    w, clock = World(store), Clock()
    subscribe(w, service.device(), signed_in_until=int(clock.now) - 1)
    card = file_card(w, clock.now, title="Rotate the keys")
    notifier(w, tmp_path, clock, passkey=True).send_card(w.ws.id, card.id)
    [pushed] = service.wait_for(1)
    assert pushed.message == SIGN_IN_ONLY
    assert_nothing_of_the_card(pushed, card, w)


def test_a_device_an_earlier_release_added_is_signed_in_for_a_sessions_lifetime(store, tmp_path, service):
    """A record kept before devices said until when they are signed in: it was added with a live
    session, which ended at most seven days later; until then the card, from then on nothing of it."""
    w, clock = World(store), Clock()
    added = int(clock.now) - 7 * 24 * 3600 + 10
    subscribe(w, service.device(), at=added, signed_in_until=None)
    push = notifier(w, tmp_path, clock)
    card = file_card(w, clock.now, title="Pay rent")
    push.send_card(w.ws.id, card.id)
    assert service.wait_for(1)[0].message["title"] == "Pay rent"
    clock.now += 10
    later = file_card(w, clock.now, title="Pay rent again")
    push.send_card(w.ws.id, later.id)
    pushed = service.wait_for(2)[1]
    assert pushed.message == SIGN_IN_ONLY
    assert_nothing_of_the_card(pushed, later, w)
