"""The notifier function on the stack in miniature: cards filed through the real gate into the
DynamoDB store (moto, table from template.yaml), the table's stream read from moto and turned into
the event Lambda would deliver (the template's FilterCriteria applied), SES on moto.

The handler is :func:`countersign.surfaces.background.notifier.stream_handler` on a runtime built as the
function builds it at import (``deliver_inline=False``); ``countersign.handlers.notifier`` itself
is imported in tests/deploy (the rehearsal, and a cold import with the template's environment).
"""

from __future__ import annotations

import dataclasses

import pytest
from standardwebhooks.webhooks import Webhook

from countersign.notify.message import one_line
from countersign.store.outbox import NOTIFY_DONE, NOTIFY_PENDING, NOTIFY_SENDING, digest_id
from countersign.store.push_subscriptions import PushSubscription, subscription_id
from countersign.store.slack import SlackApp
from countersign.surfaces.background.notifier import stream_handler
from countersign.surfaces.mcp.server import build_server
from countersign.surfaces.mcp.transport import lambda_handler
from countersign.surfaces.webhook_endpoints import add_endpoint
from tests.aws_lambda.conftest import Person, instance_runtime, move_clock, notification, sent_mail, ses_refuses
from tests.support.apigw import LambdaContext, LambdaInstance, LambdaTransport
from tests.support.harness import mcp_client
from tests.support.push_service import push_service
from tests.support.slack_api import SlackStandIn, new_bot
from tests.support.streams import filtered_event, passes_filter
from tests.support.webhook_receiver import webhook_receiver

OUTBOX_PK = "OUTBOX#"


def is_outbox_insert(record: dict) -> bool:
    return record["eventName"] == "INSERT" and record["dynamodb"]["Keys"]["pk"]["S"].startswith(OUTBOX_PK)


def card_of(record: dict) -> str:
    return record["dynamodb"]["Keys"]["pk"]["S"][len(OUTBOX_PK):]


def to(address: str) -> list:
    return [m for m in sent_mail() if m["To"] == address]


def text_of(message) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


@pytest.fixture
def runtime(aws):
    return instance_runtime(aws)


def test_one_email_per_person_per_interval_and_every_notification_done(runtime, stream):
    olive, bruno = Person(runtime, "olive@example.com"), Person(runtime, "bruno@example.com")
    olives = [olive.file("one"), olive.file("two", note="n2"), olive.file("three", tool="edit_note")]
    brunos = [bruno.file("hello")]
    records = stream.read()
    event = filtered_event(stream, records)
    # The filter passes exactly the four new notifications, nothing else filing wrote.
    assert sorted(card_of(r) for r in event["Records"]) == sorted(olives + brunos)
    assert len(records) > len(event["Records"])
    handler = stream_handler(runtime)

    assert handler(event, LambdaContext()) == {"batchItemFailures": []}
    assert sorted(m["To"] for m in sent_mail()) == ["bruno@example.com", "olive@example.com"]
    [olive_mail] = to("olive@example.com")
    for card_id in olives:  # one email lists every card that waits on her
        assert one_line(olive.card(card_id).title) in text_of(olive_mail)
    assert "https://confirm.example.com" in text_of(olive_mail)
    after = {c: notification(runtime, c) for c in olives + brunos}
    assert {n.state for n in after.values()} == {NOTIFY_DONE}
    assert sorted(after[c].outcome for c in olives) == ["email_rate_limited", "email_rate_limited", "email_sent"]
    assert after[brunos[0]].outcome == "email_sent"

    # Lambda delivers a batch again (at least once): nothing more is sent, nothing fails.
    assert handler(event, LambdaContext()) == {"batchItemFailures": []}
    assert len(sent_mail()) == 2

    # A card filed within the interval is done as rate limited; one after it, emailed.
    soon = olive.file("four", note="n2", tool="edit_note")
    assert handler(filtered_event(stream, stream.read()), LambdaContext()) == {"batchItemFailures": []}
    assert notification(runtime, soon).outcome == "email_rate_limited" and len(to("olive@example.com")) == 1
    move_clock(runtime, runtime.settings.email_interval)
    later = olive.file("five", note="n1", tool="draft_note")
    assert handler(filtered_event(stream, stream.read()), LambdaContext()) == {"batchItemFailures": []}
    assert notification(runtime, later).outcome == "email_sent" and len(to("olive@example.com")) == 2


def test_a_failing_send_is_put_back_for_the_sweeper_not_retried_at_once(runtime, stream):
    olive, bruno = Person(runtime, "olive@example.com"), Person(runtime, "bruno@example.com")
    first, second = olive.file("one"), bruno.file("two")
    event = filtered_event(stream, stream.read())
    [bruno_record] = [r for r in event["Records"] if card_of(r) == second]
    handler = stream_handler(runtime)
    now = runtime.desk.now()

    with ses_refuses(runtime, "bruno@example.com"):
        result = handler(event, LambdaContext())
    after = runtime.desk.now()  # (the send failed between now and after: a loaded machine takes seconds)
    assert result == {"batchItemFailures": []}  # the outbox's backoff owns the retry, not the stream
    assert [m["To"] for m in sent_mail()] == ["olive@example.com"]
    assert notification(runtime, first).state == NOTIFY_DONE
    owed = notification(runtime, second)
    assert (owed.state, owed.attempts) == (NOTIFY_PENDING, 1)
    assert now + 60 <= owed.due_at <= after + 60  # the first backoff: a minute from the failed send
    assert runtime.store.outbox.due_notifications(now) == []
    assert [n.card_id for n in runtime.store.outbox.due_notifications(owed.due_at)] == [second]

    # The same record delivered again (Lambda redelivers at least once): not due, nothing sent.
    retry = {"Records": [bruno_record]}
    assert handler(retry, LambdaContext()) == {"batchItemFailures": []}
    assert notification(runtime, second).attempts == 1 and len(sent_mail()) == 1

    # After the backoff the sweep sends it; the email slot the failure released is free.
    move_clock(runtime, owed.due_at - now)
    assert runtime.sweep() == {"settled": 0, "delivered": 1, "webhooks": 0, "escalated": 0}
    assert [m["To"] for m in sent_mail()] == ["olive@example.com", "bruno@example.com"]
    assert (notification(runtime, second).state, notification(runtime, second).outcome) == (NOTIFY_DONE, "email_sent")


def test_records_that_are_not_outbox_inserts_are_ignored(runtime, stream):
    olive = Person(runtime, "olive@example.com")
    card_id = olive.file("one")
    filed = stream.read()
    handler = stream_handler(runtime)
    lambda_records = stream.event(filed)["Records"]
    others = [r for r in lambda_records if not is_outbox_insert(r)]
    assert {r["dynamodb"]["Keys"]["pk"]["S"].split("#")[0] for r in others} >= {"CARD", "REQ"}
    assert not any(passes_filter(r) for r in others)
    assert [card_of(r) for r in lambda_records if passes_filter(r)] == [card_id]

    # Even unfiltered, the function leaves them alone.
    assert handler({"Records": others}, LambdaContext()) == {"batchItemFailures": []}
    assert notification(runtime, card_id).state == NOTIFY_PENDING and sent_mail() == []

    # Delivering changes the OUTBOX item (MODIFY: leased, done) and claims the email slot (a RATE
    # item): the filter drops those records, the function ignores them. The email also adds its
    # digest check (an OUTBOX INSERT, due when the interval ends): that record passes, and the
    # function finds it not yet due — the sweeper delivers it then.
    pinned = int(runtime.desk.now())
    runtime.desk.clock = lambda: pinned  # the claim's time names the digest check
    assert handler(filtered_event(stream, filed), LambdaContext()) == {"batchItemFailures": []}
    changes = stream.event(stream.read())["Records"]
    outbox = [r for r in changes if r["dynamodb"]["Keys"]["pk"]["S"].startswith(OUTBOX_PK)]
    check = OUTBOX_PK + digest_id(olive.person.id, pinned)
    assert {(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in outbox} == {
        ("MODIFY", OUTBOX_PK + card_id), ("INSERT", check)}
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in changes if passes_filter(r)] == [check]
    assert handler({"Records": changes}, LambdaContext()) == {"batchItemFailures": []}
    assert len(sent_mail()) == 1
    assert notification(runtime, check.removeprefix(OUTBOX_PK)).state == NOTIFY_PENDING


def test_a_notification_held_by_another_sender_is_left_to_it(runtime, stream):
    olive = Person(runtime, "olive@example.com")
    card_id = olive.file("one")
    event = filtered_event(stream, stream.read())
    taken = runtime.store.outbox.lease_notification(card_id, runtime.desk.now(), 120)  # the sweeper, say
    assert taken is not None and taken.state == NOTIFY_SENDING

    assert stream_handler(runtime)(event, LambdaContext()) == {"batchItemFailures": []}
    assert sent_mail() == [] and notification(runtime, card_id).state == NOTIFY_SENDING


def test_every_outcome_is_counted_for_metrics(runtime, stream):
    from countersign.platform import telemetry

    events: list[str] = []
    runtime.notifier.on_event = events.append
    olive = Person(runtime, "olive@example.com")
    olive.file("one")
    olive.file("two", note="n2")
    failed: list[str] = []
    assert stream_handler(runtime, failed.append)(filtered_event(stream, stream.read()), LambdaContext()) == {
        "batchItemFailures": []}
    assert sorted(events) == ["email_rate_limited", "email_sent"] and failed == []
    telemetry.wire(runtime)  # what the function does at import: the notifier's outcomes are metrics
    assert runtime.notifier.on_event is telemetry.metric


@pytest.mark.anyio
async def test_a_held_call_through_the_mcp_function_is_emailed_by_the_notifier(aws, stack_tenant, stream):
    """The real flow on AWS: the mcp function files the card (and its notification) and answers at
    once without emailing; the table's stream hands the notification to the notifier function."""
    operator, workspace, person, token = stack_tenant
    mcp_runtime = instance_runtime(aws)  # as countersign.handlers.mcp builds it
    instance = LambdaInstance(
        lambda_handler(build_server(mcp_runtime.desk, mcp_runtime.state_keys), mcp_runtime.store, "/")
    )
    try:
        async with mcp_client("https://confirm.example.com/mcp", token, mode="legacy",
                              transport=LambdaTransport([instance])) as client:
            held = (await client.call_tool("publish_note", {"note_id": "n1", "text": "via lambda"})).structured_content
    finally:
        instance.close()
    assert held["status"] == "pending", held
    assert sent_mail() == []  # nothing emailed inline

    notifier_runtime = instance_runtime(aws)  # a separate instance of the notifier function
    event = filtered_event(stream, stream.read())
    assert [card_of(r) for r in event["Records"]] == [held["confirmationId"]]
    assert stream_handler(notifier_runtime)(event, LambdaContext()) == {"batchItemFailures": []}
    [mail] = sent_mail()
    assert mail["To"] == "owner@example.com"
    assert "https://confirm.example.com/" in text_of(mail)


def test_the_stream_hands_the_notifier_each_webhook_event_and_it_is_sent_signed(runtime, stream):
    """A workspace with an endpoint: filing writes its events with the card; the filtered stream
    passes the new WHEVENT items (and not the deadline's until then), the handler sends the
    webhook at once, and a redelivered batch sends nothing more (exactly once per event and endpoint)."""
    runtime.desk.settings = dataclasses.replace(runtime.desk.settings, upstream_private=True)  # the receiver's loopback
    olive = Person(runtime, "olive@example.com")
    with webhook_receiver() as receiver:
        (endpoint, secret) = add_endpoint(runtime.store.webhook_endpoints, runtime.state_keys, runtime.desk.settings,
                                          olive.person, receiver.url, ["card.filed", "card.lapsed"], runtime.desk.now())
        stream.read()  # the endpoint's own items
        # her agent's next request reads the workspace anew: it now says it has an endpoint
        olive.principal = dataclasses.replace(olive.principal,
                                              workspace=runtime.store.workspaces.get_workspace(olive.workspace.id))
        assert olive.principal.workspace.webhooks is True
        card_id = olive.file("hello")
        event = filtered_event(stream, stream.read())
        webhook_records = [r for r in event["Records"] if r["dynamodb"]["Keys"]["sk"]["S"] == "WHEVENT"]
        assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in webhook_records) == [
            f"WHEVENT#{card_id}.filed", f"WHEVENT#{card_id}.lapsed"]
        handler = stream_handler(runtime)
        assert handler(event, LambdaContext()) == {"batchItemFailures": []}
        (got,) = receiver.received
        assert Webhook(secret).verify(got.body, got.headers)["data"]["card_id"] == card_id
        assert handler(event, LambdaContext()) == {"batchItemFailures": []}
        assert len(receiver.received) == 1
        # the fan-out marked the event done: that change never reaches the function
        assert [r for r in filtered_event(stream, stream.read())["Records"]
                if r["dynamodb"]["Keys"]["sk"]["S"] == "WHEVENT"] == []
        assert [d.state for d in runtime.store.webhook_deliveries.list_deliveries(olive.workspace.id, endpoint.id)] == [
            "delivered"]
def test_the_notifier_posts_each_card_to_slack_once_and_a_post_slack_could_not_take_is_tried_again(runtime, stream):
    """A card of a workspace with a Slack app is posted by the same record that emails it. Slack
    rate limiting the post fails that record (Lambda tries it again; the email is not sent
    twice); the record delivered again posts it, and once only."""
    slack = SlackStandIn()
    try:
        bot = slack.add(new_bot())
        runtime.desk.settings = dataclasses.replace(runtime.desk.settings, slack_api_url=slack.base_url)
        olive, bruno = Person(runtime, "olive@example.com"), Person(runtime, "bruno@example.com")
        token, secret = runtime.slack.credentials.seal(olive.workspace.id, bot.team_id, bot.token, bot.secret)
        runtime.store.slack.connect_app(SlackApp(olive.workspace.id, bot.team_id, "Acme Slack", bot.user_id, token,
                                                 secret, olive.person.id, 0, channel="C0CARDS1"))
        card_id, _ = olive.file("one"), bruno.file("two")
        event = filtered_event(stream, stream.read())
        handler = stream_handler(runtime)

        slack.failing["chat.postMessage"] = "ratelimited"
        result = handler(event, LambdaContext())
        [failed] = result["batchItemFailures"]
        [olive_record] = [r for r in event["Records"] if card_of(r) == card_id]
        assert failed["itemIdentifier"] == olive_record["dynamodb"]["SequenceNumber"]
        assert sorted(m["To"] for m in sent_mail()) == ["bruno@example.com", "olive@example.com"]
        assert runtime.store.slack.get_post(card_id) is None  # the claim was released

        del slack.failing["chat.postMessage"]
        for _ in range(2):  # Lambda's retry, and a duplicate delivery
            assert handler({"Records": [olive_record]}, LambdaContext()) == {"batchItemFailures": []}
        posts = slack.of("chat.postMessage", bot.token)
        assert len(posts) == 2 and posts[-1].body["channel"] == "C0CARDS1"  # the refused one, then the one
        assert posts[-1].body["blocks"][0]["text"]["text"] == one_line(olive.card(card_id).title)
        assert runtime.store.slack.get_post(card_id).state == "posted"
        assert len(sent_mail()) == 2
        assert runtime.slack.counts == {"slack_retry": 1, "slack_posted": 1}
    finally:
        slack.stop()


def test_the_notifier_honours_each_persons_channels(runtime, stream):
    """A person who turned email off gets no card email from the stream notifier (their
    notification is done, ``email_disabled``) while Slack still posts the card; one who turned
    Slack off gets the email and no Slack message; every record succeeds."""
    slack = SlackStandIn()
    try:
        bot = slack.add(new_bot())
        runtime.desk.settings = dataclasses.replace(runtime.desk.settings, slack_api_url=slack.base_url)
        olive = Person(runtime, "olive@example.com")
        token, secret = runtime.slack.credentials.seal(olive.workspace.id, bot.team_id, bot.token, bot.secret)
        runtime.store.slack.connect_app(SlackApp(olive.workspace.id, bot.team_id, "Acme Slack", bot.user_id, token,
                                                 secret, olive.person.id, 0, channel="C0CARDS1"))
        runtime.store.workspaces.update_person(olive.workspace.id, olive.person.id, agent_requests_email=False)
        handler = stream_handler(runtime)
        first = olive.file("one")
        assert handler(filtered_event(stream, stream.read()), LambdaContext()) == {"batchItemFailures": []}
        assert to("olive@example.com") == []
        assert (notification(runtime, first).state, notification(runtime, first).outcome) == (NOTIFY_DONE,
                                                                                              "email_disabled")
        [posted] = slack.of("chat.postMessage", bot.token)
        assert posted.body["blocks"][-1]["elements"][0]["value"] == first

        runtime.store.workspaces.update_person(olive.workspace.id, olive.person.id, agent_requests_email=True,
                                               channels_off=("slack",))
        second = olive.file("two", note="n2")
        assert handler(filtered_event(stream, stream.read()), LambdaContext()) == {"batchItemFailures": []}
        [mail] = to("olive@example.com")
        assert one_line(olive.card(second).title) in text_of(mail)
        assert len(slack.of("chat.postMessage", bot.token)) == 1  # nothing more
        assert runtime.slack.counts == {"slack_posted": 1, "slack_off": 1}
    finally:
        slack.stop()


def test_the_notifier_pushes_each_card_to_its_persons_devices_once(runtime, stream):
    """A filed card's record pushes it to its person's device (encrypted for it: the stand-in
    decrypts it), beside the email; the record delivered again pushes nothing more."""
    runtime.desk.settings = dataclasses.replace(runtime.desk.settings, upstream_private=True)  # loopback
    olive, bruno = Person(runtime, "olive@example.com"), Person(runtime, "bruno@example.com")
    with push_service() as service:
        device = service.device()
        runtime.store.push_subscriptions.add_subscription(PushSubscription(
            id=subscription_id(device.endpoint), workspace_id=olive.workspace.id, person_id=olive.person.id,
            endpoint=device.endpoint, p256dh=device.p256dh, auth=device.as_json()["keys"]["auth"],
            device="Chrome on Android", created_at=runtime.desk.now(),
            signed_in_until=runtime.desk.now() + 86400))  # its page session: a day more
        card_id, _ = olive.file("one"), bruno.file("two")
        event = filtered_event(stream, stream.read())
        handler = stream_handler(runtime)
        assert handler(event, LambdaContext()) == {"batchItemFailures": []}
        [pushed] = service.wait_for(1)
        assert pushed.problem is None
        assert pushed.message["card"] == card_id and pushed.message["title"] == olive.card(card_id).title
        assert handler(event, LambdaContext()) == {"batchItemFailures": []}  # a duplicate delivery
        assert len(service.pushes) == 1 and runtime.push.counts == {"push_sent": 1}
        assert sorted(m["To"] for m in sent_mail()) == ["bruno@example.com", "olive@example.com"]
