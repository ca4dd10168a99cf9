"""from_settings picks the sender COUNTERSIGN_MAIL names; runtime.build wires the notifier in."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from countersign import notify, settings as settings_mod
from countersign.notify import CardNotifier, OutboxSender, SesSender, SmtpSender
from countersign.runtime import build
from countersign.store.sqlite import SQLiteStore
from tests.store._factories import World

from ._helpers import file_card, parts
from .conftest import parse


@pytest.fixture
def sqlite(tmp_path):
    s = SQLiteStore(str(tmp_path / "n.db"))
    yield s
    s.close()


def test_outbox_by_default(tmp_path, sqlite):
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path / "data")})
    notifier = notify.from_settings(settings, sqlite)
    assert isinstance(notifier, CardNotifier)
    assert isinstance(notifier.sender, OutboxSender)
    assert notifier.sender.folder == tmp_path / "data" / "outbox"
    assert notifier.sender.from_address == "countersign@localhost"
    assert not notifier.sender.folder.exists()  # made on the first email, not at start-up


def test_smtp_and_ses_from_settings(tmp_path, sqlite):
    smtp = notify.from_settings(settings_mod.load({"COUNTERSIGN_MAIL": "smtp://127.0.0.1:2525"}), sqlite)
    assert isinstance(smtp.sender, SmtpSender) and (smtp.sender.host, smtp.sender.port) == ("127.0.0.1", 2525)
    ses = notify.from_settings(settings_mod.load({"COUNTERSIGN_MAIL": "ses:notify@example.com"}), sqlite)
    assert isinstance(ses.sender, SesSender) and ses.sender.from_address == "notify@example.com"


def test_events_reach_the_hook(tmp_path, sqlite):
    events: list[str] = []
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path / "data")})
    notifier = notify.from_settings(settings, sqlite, lambda: 5000, on_event=events.append)
    world = World(sqlite)
    notifier(file_card(world, 5000))
    notifier(file_card(world, 5000))
    assert events == ["email_sent", "email_rate_limited"]


def test_a_broken_hook_or_store_never_raises(tmp_path, sqlite, caplog):
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path / "data")})

    def boom(name):
        raise RuntimeError("metrics down")

    notifier = notify.from_settings(settings, sqlite, lambda: 5000, on_event=boom)
    world = World(sqlite)
    card = file_card(world, 5000)
    assert notifier(card) == "email_sent"
    assert notifier(card) is None  # delivered once: nothing left to deliver
    ghost = file_card(world, 5000, person_id="p_nobody")  # a notification for a person who is gone
    with caplog.at_level(logging.ERROR, logger="countersign.notify"):
        assert notifier(ghost) == "email_failed"
    assert sqlite.outbox.get_notification(ghost.id).outcome == "email_failed"

    class Down:
        def __getattr__(self, name):
            raise RuntimeError("store down")

    class Broken:  # every role of it down
        def __getattr__(self, name):
            return Down()

    broken = notify.from_settings(settings, Broken(), lambda: 5000)
    with caplog.at_level(logging.ERROR, logger="countersign.notify"):
        assert broken(card) is None  # never raised; the sweep will try again


def test_build_wires_the_notifier_and_follows_the_desk(tmp_path, sqlite):
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path / "data")})
    runtime = build(settings, toolsets=[], store=sqlite)
    desk = runtime.desk
    assert isinstance(desk.on_filed, CardNotifier)
    desk.clock = lambda: 7000
    desk.settings = dataclasses.replace(settings, public_url="http://127.0.0.1:9999")
    world = World(sqlite)
    desk.notify(file_card(world, 7000, title="Pay rent"))
    (eml,) = desk.on_filed.sender.files()
    text, html = parts(parse(eml.read_bytes()))
    assert "http://127.0.0.1:9999/confirm" in text and "Pay rent" in html


def test_build_keeps_a_given_hook(tmp_path, sqlite):
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path / "data")})
    seen = []
    runtime = build(settings, toolsets=[], store=sqlite, on_filed=seen.append)
    assert runtime.desk.on_filed == seen.append


def test_build_pushes_a_filed_card_beside_its_email_and_keeps_the_vapid_key_in_the_data_folder(tmp_path, sqlite):
    """Locally the filing hands the card to the push notifier too (a worker thread sends it); the
    VAPID key is made on first use into keys/vapid.key (0600) and read back by the next server."""
    from countersign.notify.push import application_server_key
    from countersign.store.push_subscriptions import PushSubscription, subscription_id
    from tests.support.push_service import push_service

    settings = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path / "data"), "COUNTERSIGN_UPSTREAM_PRIVATE": "1"})
    runtime = build(settings, toolsets=[], store=sqlite)
    key_file = tmp_path / "data" / "keys" / "vapid.key"
    assert not key_file.exists()  # never read at start-up
    world = World(sqlite)
    with push_service() as service:
        device = service.device()
        sqlite.push_subscriptions.add_subscription(PushSubscription(
            subscription_id(device.endpoint), world.ws.id, world.person.id, device.endpoint, device.p256dh,
            device.as_json()["keys"]["auth"], "Firefox on Linux", 0))
        runtime.desk.clock = lambda: 7000
        runtime.desk.notify(file_card(world, 7000, title="Pay rent"))
        [pushed] = service.wait_for(1)
    assert pushed.problem is None and pushed.message["title"] == "Pay rent"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert pushed.vapid_key == application_server_key(key_file.read_text().strip())
    again = build(settings, toolsets=[], store=sqlite)
    assert again.push.application_server_key() == pushed.vapid_key


def test_a_card_no_device_or_slack_could_show_is_handed_to_no_worker_thread(tmp_path, sqlite):
    """Locally the filing hands each card to the push and Slack notifiers' worker threads only when
    they could show it: its person has a device, its workspace is linked to Slack. A card neither
    could show costs the call that filed it no thread; once the person adds a device, the next
    card is handed over (and pushed)."""
    from countersign.store.push_subscriptions import PushSubscription, subscription_id
    from tests.support.push_service import push_service

    settings = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path / "data"), "COUNTERSIGN_UPSTREAM_PRIVATE": "1"})
    runtime = build(settings, toolsets=[], store=sqlite)
    world = World(sqlite)
    runtime.desk.clock = lambda: 7000
    runtime.desk.notify(file_card(world, 7000, title="Pay rent"))
    assert runtime.push is not None and runtime.slack is not None
    assert not runtime.push._pool._threads and not runtime.slack._pool._threads  # nothing was handed over
    with push_service() as service:
        device = service.device()
        sqlite.push_subscriptions.add_subscription(PushSubscription(
            subscription_id(device.endpoint), world.ws.id, world.person.id, device.endpoint, device.p256dh,
            device.as_json()["keys"]["auth"], "Firefox on Linux", 0))
        runtime.desk.notify(file_card(world, 7001, title="Pay the plumber"))
        [pushed] = service.wait_for(1)
    assert pushed.message["title"] == "Pay the plumber"
    assert len(runtime.push._pool._threads) == 1 and not runtime.slack._pool._threads


def test_in_front_of_a_remote_store_the_worker_looks_whether_a_device_could_be_reached(store):
    """The look before the hand-over is made only where a read costs no round trip (the embedded
    store); in front of DynamoDB the card is handed over and the worker thread looks, off the
    filing call. Either way a person with no device is pushed nothing."""
    from countersign.notify.push import PushNotifier
    from countersign.settings import Settings
    from countersign.store.sqlite import SQLiteStore

    world = World(store)
    push = PushNotifier(store, lambda: "vapid-secret", Settings(public_url="https://confirm.example.com"),
                        clock=lambda: 7000, background=True)
    try:
        push(file_card(world, 7000, title="Pay rent"))
        push._pool.shutdown(wait=True)  # the hand-over, if any, has run its course
        handed_over = len(push._pool._threads) == 1
    finally:
        push._pool.shutdown(wait=True)
    assert handed_over is not isinstance(store, SQLiteStore)
    assert push.counts == {}  # nothing pushed, nothing failed
