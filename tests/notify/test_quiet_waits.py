"""Slack and push wait out quiet hours (both stores, a clock the test moves, the loopback Slack
stand-in and the loopback push service): a card filed while its person's quiet hours run is neither
posted nor pushed then; when they end the sweep posts each card that still waits to Slack (at most
five, then one message saying how many more) and pushes once (the card's own push when one waits,
else one that says how many; to a device whose page session ended, only how many wait); a card
answered meanwhile is not shown; a second sweep, or two sweeps at once, show nothing more."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from countersign.core.card_states import CardState
from countersign.notify import CardNotifier
from countersign.notify.card_channel import deliver_quiet_wait
from countersign.notify.push import QUIET as PUSH_QUIET, PushNotifier
from countersign.notify.slack import QUIET as SLACK_QUIET, SlackCredentials, SlackNotifier
from countersign.settings import Settings
from countersign.store.outbox import NOTIFY_DONE, quiet_wait_id
from countersign.store.slack import SlackApp
from countersign.store.workspaces import QuietHours
from tests.notify._helpers import Recorder, file_card
from tests.notify.conftest import Clock
from tests.notify.test_push import VAPID_SECRET, subscribe
from tests.store._factories import World
from tests.support.push_service import push_service
from tests.support.serial_moto import serialized_writes_and_reads
from tests.support.slack_api import SlackStandIn, new_bot

PUBLIC_URL = "https://confirm.example.test"
KEYS = [b"k" * 32]
FILED = 1_796_596_200  # 2026-12-06 23:30 in Berlin
ENDS = FILED + 7 * 3600 + 1800  # 2026-12-07 07:00 in Berlin
CHANNEL = "C0CARDS1"


@pytest.fixture(scope="module")
def slack_api():
    stand_in = SlackStandIn()
    yield stand_in
    stand_in.stop()


@pytest.fixture
def service():
    with push_service() as s:
        yield s


class Channels:
    """One process's notifiers as the runtime wires them: the card email's notifier, whose sweep
    hands a quiet-hours wait to Slack's or push's channel."""

    def __init__(self, w: World, tmp_path, clock: Clock, slack_api: SlackStandIn):
        settings = Settings(data_dir=tmp_path / "data", public_url=PUBLIC_URL, email_interval=900,
                            slack_api_url=slack_api.base_url, upstream_private=True)
        self.email = CardNotifier(w.store, Recorder(), settings, clock=clock)
        self.slack = SlackNotifier(w.store, SlackCredentials(KEYS), settings, needs_passkey=lambda c, ws: False,
                                   clock=clock)
        self.push = PushNotifier(w.store, lambda: VAPID_SECRET, settings, needs_passkey=lambda c, ws: False,
                                 clock=clock)
        channels = {"slack": self.slack, "push": self.push}
        self.email.after_quiet = lambda wait_id: deliver_quiet_wait(w.store, channels, wait_id, int(clock()))

    def file(self, w: World, clock: Clock, title: str):
        card = file_card(w, clock.now, title=title)
        self.email(card)
        self.slack.post(card.workspace_id, card.id)
        self.push.send_card(card.workspace_id, card.id)
        return card


def quiet_person(w: World) -> None:
    w.store.workspaces.update_person(w.ws.id, w.person.id, quiet_hours=QuietHours("22:00", "07:00", "Europe/Berlin"))


def connect_slack(w: World, slack_api: SlackStandIn):
    bot = slack_api.add(new_bot())
    token, secret = SlackCredentials(KEYS).seal(w.ws.id, bot.team_id, bot.token, bot.secret)
    w.store.slack.connect_app(SlackApp(w.ws.id, bot.team_id, "Acme Slack", bot.user_id, token, secret, w.person.id,
                                       0, channel=CHANNEL))
    return bot


def posted_cards(slack_api: SlackStandIn, bot) -> list[str]:
    return [c.body["blocks"][-1]["elements"][0].get("value") for c in slack_api.of("chat.postMessage", bot.token)]


def test_slack_posts_each_card_that_still_waits_when_quiet_hours_end_once(store, tmp_path, slack_api, service):
    w, clock = World(store), Clock(FILED)
    quiet_person(w)
    bot = connect_slack(w, slack_api)
    subscribe(w, service.device())
    one = Channels(w, tmp_path, clock, slack_api)
    first = one.file(w, clock, "Pay Café Lumière €12.50")
    clock.now += 600
    answered = one.file(w, clock, "Send the report")
    clock.now += 600
    last = one.file(w, clock, "Archive the invoices")
    assert one.slack.counts == {SLACK_QUIET: 3} and one.push.counts == {PUSH_QUIET: 3}
    assert slack_api.of("chat.postMessage", bot.token) == [] and service.pushes == []
    w.move(answered, CardState.DECLINED, now=int(clock.now) + 60)  # answered on the page meanwhile

    clock.now = ENDS - 1
    one.email.sweep()
    assert slack_api.of("chat.postMessage", bot.token) == [] and service.pushes == []

    clock.now = ENDS
    one.email.sweep()
    assert posted_cards(slack_api, bot) == [first.id, last.id]  # oldest first, the declined one left out
    [pushed] = service.wait_for(1)
    assert pushed.problem is None
    assert pushed.message == {"waiting": 2, "title": "2 requests are waiting for your answer",
                              "body": "Pay Café Lumière €12.50\nArchive the invoices", "url": "/confirm"}
    for channel in ("slack", "push"):
        wait = store.outbox.get_notification(quiet_wait_id(channel, w.person.id, ENDS))
        assert (wait.state, wait.outcome, wait.listed) == (NOTIFY_DONE, "quiet_hours_ended",
                                                           (first.id, answered.id, last.id))

    clock.now = ENDS + 120  # the next sweep, and another process's: nothing more
    one.email.sweep()
    Channels(w, tmp_path, clock, slack_api).email.sweep()
    assert len(slack_api.of("chat.postMessage", bot.token)) == 2
    assert len(service.pushes) == 1


def test_one_card_held_is_pushed_as_itself_with_its_buttons(store, tmp_path, slack_api, service):
    w, clock = World(store), Clock(FILED)
    quiet_person(w)
    subscribe(w, service.device())
    one = Channels(w, tmp_path, clock, slack_api)
    card = one.file(w, clock, "Pay Café Lumière €12.50")
    clock.now = ENDS + 30
    one.email.sweep()
    [pushed] = service.wait_for(1)
    assert pushed.message == {"card": card.id, "title": "Pay Café Lumière €12.50",
                              "body": f"Asked by {w.conn.name}", "url": f"/confirm?card={card.id}",
                              "answerable": True, "labels": {"confirm": "Confirm", "decline": "Decline"}}


def test_a_device_whose_session_ended_is_told_only_how_many_wait_when_quiet_hours_end(store, tmp_path, slack_api,
                                                                                       service):
    """The one push after quiet hours is chosen per device as a card's is: a device signed in gets
    the titles, one whose page session ended only how many wait and the page to sign in on."""
    w, clock = World(store), Clock(FILED)
    quiet_person(w)
    active, lapsed = service.device(), service.device()
    subscribe(w, active, at=1), subscribe(w, lapsed, at=2, signed_in_until=FILED + 3600)  # ends before ENDS
    one = Channels(w, tmp_path, clock, slack_api)
    first = one.file(w, clock, "Pay Café Lumière €12.50")
    clock.now += 600
    last = one.file(w, clock, "Archive the invoices")
    clock.now = ENDS
    one.email.sweep()
    got = {service.origin + p.path: p for p in service.wait_for(2)}
    assert got[active.endpoint].message["title"] == "2 requests are waiting for your answer"
    signed_out = got[lapsed.endpoint]
    assert signed_out.problem is None
    assert signed_out.message == {"signIn": True, "title": "2 requests are waiting for you",
                                  "body": "Sign in on this device to see them and answer.", "url": "/confirm"}
    text = signed_out.plaintext.decode("utf-8")
    assert not any(part in text for part in (first.title, last.title, first.id, last.id, w.conn.name))


def test_nothing_is_shown_when_every_card_held_was_answered(store, tmp_path, slack_api, service):
    w, clock = World(store), Clock(FILED)
    quiet_person(w)
    bot = connect_slack(w, slack_api)
    subscribe(w, service.device())
    one = Channels(w, tmp_path, clock, slack_api)
    card = one.file(w, clock, "Pay Café Lumière €12.50")
    w.move(card, CardState.WITHDRAWN, now=FILED + 60)
    clock.now = ENDS
    one.email.sweep()
    assert slack_api.of("chat.postMessage", bot.token) == [] and service.pushes == []
    assert store.outbox.get_notification(quiet_wait_id("push", w.person.id, ENDS)).state == NOTIFY_DONE


def test_many_cards_held_post_five_and_say_how_many_more(store, tmp_path, slack_api, service):
    w, clock = World(store), Clock(FILED)
    quiet_person(w)
    bot = connect_slack(w, slack_api)
    subscribe(w, service.device())
    one = Channels(w, tmp_path, clock, slack_api)
    cards = []
    for i in range(8):
        clock.now = FILED + 60 * i
        cards.append(one.file(w, clock, f"Card {i}"))
    clock.now = ENDS
    one.email.sweep()
    posts = slack_api.of("chat.postMessage", bot.token)
    assert [p.body["blocks"][-1]["elements"][0].get("value") for p in posts[:5]] == [c.id for c in cards[:5]]
    [more] = posts[5:]
    assert more.body["channel"] == CHANNEL
    assert more.body["text"] == f"3 more requests are waiting for an answer from {w.person.name or w.person.email}"
    assert more.body["blocks"][-1]["elements"][0]["url"] == f"{PUBLIC_URL}/confirm"
    [pushed] = service.wait_for(1)  # one push, not eight
    assert pushed.message["waiting"] == 8
    assert pushed.message["body"] == "Card 0\nCard 1\nCard 2\nand 5 more"


def test_two_sweeps_at_the_same_instant_show_the_cards_once(store, tmp_path, slack_api, service):
    w, clock = World(store), Clock(FILED)
    quiet_person(w)
    bot = connect_slack(w, slack_api)
    subscribe(w, service.device())
    filer = Channels(w, tmp_path, clock, slack_api)
    cards = [filer.file(w, clock, "First"), filer.file(w, clock, "Second")]
    clock.now = ENDS
    sweepers = [Channels(w, tmp_path, clock, slack_api) for _ in range(3)]
    barrier = threading.Barrier(len(sweepers))

    def sweep(process: Channels) -> int:
        barrier.wait()
        return process.email.sweep()

    # moto applies each write atomically, as DynamoDB does (a no-op on SQLite)
    with serialized_writes_and_reads(), ThreadPoolExecutor(len(sweepers)) as pool:
        list(pool.map(sweep, sweepers))
    assert sorted(posted_cards(slack_api, bot)) == sorted(c.id for c in cards)
    assert len(service.wait_for(1)) == 1
    assert sum(s.push.counts["push_sent"] for s in sweepers) == 1
