"""The sweeper function on the stack in miniature: schedule events, the DynamoDB store and SES on
moto, cards filed through the real gate. It delivers what the stream path left owed (a failed
first send, a sender that died) and settles cards a dead instance left running.

The handler is :func:`countersign.surfaces.background.sweeper.schedule_handler` on a runtime built as the
function builds it at import; ``countersign.handlers.sweeper`` itself is imported in tests/deploy.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from countersign.core import lifetimes
from countersign.core.card_states import CardState
from countersign.gate.recovery import STOPPED
from countersign.store.cards import AuditEntry, CardCommit
from countersign.store.outbox import NOTIFY_DONE, NOTIFY_PENDING, NOTIFY_SENDING, reminder_id
from countersign.store.push_subscriptions import PushSubscription, subscription_id
from countersign.store.slack import SlackApp
from countersign.store.workspaces import QuietHours
from countersign.surfaces.background.notifier import stream_handler
from countersign.surfaces.background.sweeper import schedule_handler
from tests.aws_lambda.conftest import Person, instance_runtime, move_clock, notification, sent_mail, ses_refuses
from tests.support.apigw import LambdaContext
from tests.support.push_service import push_service
from tests.support.slack_api import SlackStandIn, new_bot
from tests.support.streams import filtered_event, schedule_event


@pytest.fixture
def runtime(aws):
    return instance_runtime(aws)


def sweep(runtime, metrics: list | None = None) -> dict:
    handler = schedule_handler(
        runtime, None if metrics is None else (lambda name, value: metrics.append((name, value)))
    )
    return handler(schedule_event(), LambdaContext())


def leave_running(runtime, person: Person, card_id: str, lease: int = 120):
    """What a process that died mid-way through a two-step action leaves: the card running, its
    first step committed, a lease that lapses."""
    card = person.card(card_id)
    now = runtime.desk.now()
    return runtime.store.cards.commit_card(
        CardCommit(
            card,
            CardState.RUNNING,
            now,
            (AuditEntry(card_id, person.workspace.id, now, "running", f"person:{person.person.id}", "page"),),
            run={"steps": ["publish", "announce"], "done": 1},
            lease_until=now + lease,
            channel="page",
        )
    )


def test_a_notification_whose_first_send_failed_is_delivered_by_the_sweep(runtime, stream):
    olive = Person(runtime, "olive@example.com")
    card_id = olive.file("one")
    event = filtered_event(stream, stream.read())
    with ses_refuses(runtime, "olive@example.com"):  # put back for the sweep: the record succeeds
        assert stream_handler(runtime)(event, LambdaContext()) == {"batchItemFailures": []}
    owed = notification(runtime, card_id)
    assert owed.state == NOTIFY_PENDING and sent_mail() == []

    # not due yet: the backoff runs
    assert sweep(runtime) == {"settled": 0, "delivered": 0, "webhooks": 0, "escalated": 0}
    move_clock(runtime, owed.due_at - runtime.desk.now())
    metrics: list = []
    assert sweep(runtime, metrics) == {"settled": 0, "delivered": 1, "webhooks": 0, "escalated": 0}
    [mail] = sent_mail()
    assert mail["To"] == "olive@example.com"
    done = notification(runtime, card_id)
    assert (done.state, done.outcome, done.attempts) == (NOTIFY_DONE, "email_sent", 1)
    assert metrics == [("sweep_settled", 0), ("sweep_delivered", 1), ("sweep_webhooks", 0), ("sweep_escalated", 0)]
    assert sweep(runtime) == {"settled": 0, "delivered": 0, "webhooks": 0, "escalated": 0}  # nothing owed any more
    assert len(sent_mail()) == 1


def test_a_notification_whose_sender_died_is_delivered_once_its_lease_lapses(runtime):
    olive = Person(runtime, "olive@example.com")
    card_id = olive.file("one")
    # A notifier instance leased it and died before sending (no stream retry comes: it succeeded
    # from Lambda's point of view, or its retries ran out).
    assert runtime.store.outbox.lease_notification(card_id, runtime.desk.now(), 120) is not None

    move_clock(runtime, 60)
    assert sweep(runtime) == {"settled": 0, "delivered": 0, "webhooks": 0, "escalated": 0}  # still held
    assert notification(runtime, card_id).state == NOTIFY_SENDING and sent_mail() == []
    move_clock(runtime, 60)
    assert sweep(runtime) == {"settled": 0, "delivered": 1, "webhooks": 0, "escalated": 0}
    assert [m["To"] for m in sent_mail()] == ["olive@example.com"]
    assert notification(runtime, card_id).outcome == "email_sent"


def test_a_card_left_running_is_settled_as_failed_saying_which_steps_ran(runtime):
    olive = Person(runtime, "olive@example.com")
    card_id = olive.file("one")
    leave_running(runtime, olive, card_id)
    assert olive.card(card_id).state is CardState.RUNNING

    move_clock(runtime, 60)
    assert sweep(runtime)["settled"] == 0  # the runner may still be alive
    move_clock(runtime, 60)
    metrics: list = []
    assert sweep(runtime, metrics)["settled"] == 1
    card = olive.card(card_id)
    assert card.state is CardState.FAILED
    assert card.result["done"] == ["publish"] and card.result["not_done"] == ["announce"]
    assert card.result["error"].startswith(STOPPED)
    trail = runtime.store.cards.audit_trail(olive.workspace.id, card_id)
    assert [e.event for e in trail] == ["filed", "running", "failed"]
    assert (trail[-1].actor, trail[-1].channel) == ("system", "system")
    assert ("sweep_settled", 1) in metrics
    assert runtime.store.cards.running_cards(runtime.desk.now()) == []
    assert sweep(runtime)["settled"] == 0


def test_one_bad_card_never_stops_the_sweep(runtime):
    olive, bruno = Person(runtime, "olive@example.com"), Person(runtime, "bruno@example.com")
    bad, good = olive.file("one"), bruno.file("two")
    leave_running(runtime, olive, bad)
    leave_running(runtime, bruno, good)
    move_clock(runtime, 121)
    commit = runtime.store.cards.commit_card

    def broken(c):
        if c.card.id == bad:
            raise RuntimeError("this card's item is broken")
        return commit(c)

    runtime.store.cards.commit_card = broken
    try:
        counts = sweep(runtime)
    finally:
        runtime.store.cards.commit_card = commit
    assert counts["settled"] == 1  # the good one; the sweep went on past the bad one
    assert bruno.card(good).state is CardState.FAILED and olive.card(bad).state is CardState.RUNNING
    # Both notifications were still delivered: nothing waits on either person (the cards ran).
    assert counts["delivered"] == 2 and sent_mail() == []
    assert {notification(runtime, c).outcome for c in (bad, good)} == {"email_nothing_pending"}
    assert sweep(runtime)["settled"] == 1  # repaired: the next minute settles it
    assert olive.card(bad).state is CardState.FAILED


def test_the_cards_filed_inside_the_interval_are_told_of_by_the_sweeper_when_it_ends(runtime, stream):
    pinned = int(runtime.desk.now())
    runtime.desk.clock = lambda: pinned  # the clock moves only when the test moves it
    olive = Person(runtime, "olive@example.com")
    first = olive.file("one")
    assert stream_handler(runtime)(filtered_event(stream, stream.read()), LambdaContext()) == {"batchItemFailures": []}
    move_clock(runtime, 60)
    second = olive.file("two", note="n2")
    # the second card's record, and the first email's digest check (not due yet)
    assert stream_handler(runtime)(filtered_event(stream, stream.read()), LambdaContext()) == {"batchItemFailures": []}
    assert notification(runtime, second).outcome == "email_rate_limited"
    assert [m["Subject"] for m in sent_mail()] == ["1 request waits for your confirmation"]

    move_clock(runtime, runtime.settings.email_interval - 61)
    assert sweep(runtime)["delivered"] == 0  # a second before the interval ends: nothing due
    move_clock(runtime, 1)
    metrics: list = []
    assert sweep(runtime, metrics)["delivered"] == 1
    sent = sent_mail()
    assert [m["Subject"] for m in sent] == ["1 request waits for your confirmation",
                                            "1 more request is waiting for your confirmation"]
    text = sent[1].get_body(("plain",)).get_content()
    assert "1 more request is waiting for your confirmation in Olive:" in text
    assert "1 earlier request still waits too." in text
    assert "/confirm\n" in text.replace("\r\n", "\n") and first not in text and second not in text
    assert ("sweep_delivered", 1) in metrics


def test_a_cards_reminder_is_sent_by_the_sweeper_once_when_due(aws, runtime, stream):
    pinned = int(runtime.desk.now())
    runtime.desk.clock = lambda: pinned  # the clock moves only when the test moves it
    olive = Person(runtime, "olive@example.com")
    rules = lifetimes.as_text({"default": {"wait": "2h", "remind_before": "30m"}})
    workspace = runtime.store.workspaces.update_workspace_settings(olive.workspace.id, {"card_lifetimes": rules})
    olive.principal = replace(olive.principal, workspace=workspace)
    card_id = olive.file("one")
    assert olive.card(card_id).expires_at == pinned + 7200
    # the stream carries the card's notification (emailed at once) and its reminder (not due: the sweeper's)
    assert stream_handler(runtime)(filtered_event(stream, stream.read()), LambdaContext()) == {"batchItemFailures": []}
    assert [m["Subject"] for m in sent_mail()] == ["1 request waits for your confirmation"]
    assert notification(runtime, reminder_id(card_id)).due_at == pinned + 5400

    move_clock(runtime, 5399)
    sweep(runtime)
    assert len(sent_mail()) == 1
    move_clock(runtime, 1)
    other = instance_runtime(aws)  # a second sweeper instance, on the same table and clock
    other.desk.clock = runtime.desk.clock
    sweep(runtime)
    sweep(other)
    subjects = [m["Subject"] for m in sent_mail()]
    assert subjects == ["1 request waits for your confirmation", "Reminder: a request lapses in 30 minutes"]
    assert notification(runtime, reminder_id(card_id)).outcome == "email_reminder_sent"


def test_slack_and_push_show_a_card_filed_in_quiet_hours_when_they_end_by_the_sweeper(runtime, stream):
    """On the stack: a card filed while its person's quiet hours run is neither posted to Slack nor
    pushed by the stream notifier (its records succeed, the quiet-hours waits among them: not due);
    the first sweep after the quiet hours end posts it and pushes it, once; the next sweep shows
    nothing more."""
    runtime.desk.settings = replace(runtime.desk.settings, upstream_private=True)  # the loopback push service
    slack = SlackStandIn()
    try:
        bot = slack.add(new_bot())
        runtime.desk.settings = replace(runtime.desk.settings, slack_api_url=slack.base_url)
        olive = Person(runtime, "olive@example.com")
        token, secret = runtime.slack.credentials.seal(olive.workspace.id, bot.team_id, bot.token, bot.secret)
        runtime.store.slack.connect_app(SlackApp(olive.workspace.id, bot.team_id, "Acme Slack", bot.user_id, token,
                                                 secret, olive.person.id, 0, channel="C0CARDS1"))
        now = datetime.fromtimestamp(runtime.desk.now(), UTC)
        runtime.store.workspaces.update_person(olive.workspace.id, olive.person.id, quiet_hours=QuietHours(
            f"{now.hour:02d}:00", f"{(now.hour + 2) % 24:02d}:00", "UTC"))  # they run now
        with push_service() as service:
            device = service.device()
            runtime.store.push_subscriptions.add_subscription(PushSubscription(
                id=subscription_id(device.endpoint), workspace_id=olive.workspace.id, person_id=olive.person.id,
                endpoint=device.endpoint, p256dh=device.p256dh, auth=device.as_json()["keys"]["auth"],
                device="Chrome on Android", created_at=runtime.desk.now(),
                signed_in_until=runtime.desk.now() + 86400))  # its page session: a day more
            card_id = olive.file("one")
            handler = stream_handler(runtime)
            assert handler(filtered_event(stream, stream.read()), LambdaContext()) == {"batchItemFailures": []}
            waits = filtered_event(stream, stream.read())  # the waits Slack and push wrote, carried too
            # (moto writes an UpdateItem that creates an item as two INSERT records; DynamoDB as one)
            assert {r["dynamodb"]["Keys"]["pk"]["S"].split(".")[1] for r in waits["Records"]} == {"push", "slack"}
            assert handler(waits, LambdaContext()) == {"batchItemFailures": []}
            assert slack.of("chat.postMessage", bot.token) == [] and service.pushes == []
            assert runtime.slack.counts["slack_quiet"] == 1 and runtime.push.counts["push_quiet"] == 1

            ends = int(now.replace(minute=0, second=0, microsecond=0).timestamp()) + 2 * 3600
            move_clock(runtime, ends - runtime.desk.now())
            sweep(runtime)
            [posted] = slack.of("chat.postMessage", bot.token)
            assert posted.body["blocks"][-1]["elements"][0]["value"] == card_id
            [pushed] = service.wait_for(1)
            assert pushed.problem is None and pushed.message["card"] == card_id
            move_clock(runtime, 60)
            sweep(runtime)
            assert len(slack.of("chat.postMessage", bot.token)) == 1 and len(service.pushes) == 1
    finally:
        slack.stop()
