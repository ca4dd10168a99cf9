"""Which channels reach a person (Settings → Notifications, docs/channels.md), over real HTTP:
email, Slack and push each on or off; the notifiers honour it (no card email for a person who
turned email off, no Slack message for one who turned Slack off or whose quiet hours run); the
Slack test message goes to the linked Slack user through the card messages' own path; an owner
turns a webhook endpoint off and on again. Bad input is refused and nothing is written."""

from __future__ import annotations

import email
import time
from datetime import datetime
from email import policy
from zoneinfo import ZoneInfo

import pytest

from countersign.notify.slack import TEST_TITLE
from tests.api.pages import outbox
from tests.api.test_cards import file as file_card
from tests.api.test_settings_webhooks import HOOKS, wait_for
from tests.api.test_slack import connect, file, link
from tests.support.harness import new_tenant
from tests.support.slack_api import SlackStandIn
from tests.support.webhook_receiver import webhook_receiver

pytestmark = pytest.mark.anyio

ALL_ON = {"email": True, "slack": True, "push": True}


@pytest.fixture(scope="module")
def slack_api():
    stand_in = SlackStandIn()
    yield stand_in
    stand_in.stop()


@pytest.fixture
def slack(slack_api, configure, clock):
    configure(slack_api_url=slack_api.base_url)
    return slack_api


def stored(tenant):
    return tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id)


def card_emails(runtime, address: str) -> list[email.message.EmailMessage]:
    found = []
    folder = outbox(runtime)
    for path in sorted(folder.glob("*.eml")) if folder.is_dir() else []:
        message = email.message_from_bytes(path.read_bytes(), policy=policy.default)
        subject = str(message["Subject"])
        if message["To"] == address and "sign-in" not in subject and "Test email" not in subject:
            found.append(message)
    return found


def test_each_channel_is_turned_off_and_on_and_the_rest_stays(signed, tenant):
    assert signed.get("/api/settings").json()["me"]["channels"] == ALL_ON
    off = signed.patch("/api/settings/me", {"channels": {"slack": False}})
    assert off.status_code == 200, off.text
    assert off.json()["me"]["channels"] == {"email": True, "slack": False, "push": True}
    assert stored(tenant).channels_off == ("slack",)
    both = signed.patch("/api/settings/me", {"channels": {"push": False, "email": False}}).json()["me"]
    assert both["channels"] == {"email": False, "slack": False, "push": False}
    assert both["agent_requests_email"] is False  # email is "Email me when an agent asks"
    assert stored(tenant).channels_off == ("slack", "push") and stored(tenant).agent_requests_email is False
    # the email setting by its old name is the same switch
    assert signed.patch("/api/settings/me", {"agent_requests_email": True}).json()["me"]["channels"]["email"] is True
    back = signed.patch("/api/settings/me", {"channels": {"slack": True, "push": True}}).json()["me"]
    assert back["channels"] == ALL_ON and stored(tenant).channels_off == ()


@pytest.mark.parametrize("body, field", [
    ({"channels": {}}, "channels"),
    ({"channels": None}, "channels"),
    ({"channels": {"fax": True}}, "channels"),
    ({"channels": {"slack": "no"}}, "channels.slack"),
    ({"channels": {"slack": None}}, "channels.slack"),
    ({"channels": {"email": True}, "agent_requests_email": False}, "channels.email"),
    ({"channels": ["slack"]}, "channels"),
])
def test_bad_channel_choices_write_nothing(signed, tenant, body, field):
    signed.patch("/api/settings/me", {"channels": {"push": False}})
    before = stored(tenant)
    answer = signed.patch("/api/settings/me", body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"].startswith(field), answer.json()
    assert stored(tenant) == before


async def test_a_person_who_turned_email_off_gets_no_card_email(signed, tenant, live):
    runtime, server = live
    assert signed.patch("/api/settings/me", {"channels": {"email": False}}).status_code == 200
    other = new_tenant(runtime, server.origin)  # email on: its email shows the notifier ran
    await file_card(tenant)
    await file_card(other)
    wait_for(lambda: card_emails(runtime, other.person.email))
    time.sleep(0.3)
    assert card_emails(runtime, tenant.person.email) == []
    assert signed.patch("/api/settings/me", {"channels": {"email": True}}).status_code == 200
    await file_card(tenant, "n2", "with email on again")
    [sent] = wait_for(lambda: card_emails(runtime, tenant.person.email))
    assert "Note 2" in sent.get_body(("plain",)).get_content()


async def test_slack_off_or_quiet_hours_post_nothing_and_on_again_posts(tenant, slack):
    bot = connect(tenant, slack)
    user_id = link(tenant, bot)
    page = tenant.page()
    counts = tenant.runtime.slack.counts
    assert page.patch("/api/settings/me", {"channels": {"slack": False}}).status_code == 200
    off_before = counts["slack_off"]
    await file(tenant, "n1")
    wait_for(lambda: counts["slack_off"] > off_before)
    assert slack.of("chat.postMessage", bot.token) == []

    assert page.patch("/api/settings/me", {"channels": {"slack": True}}).status_code == 200
    now = datetime.fromtimestamp(tenant.runtime.desk.now(), ZoneInfo("UTC"))
    start, end = f"{now.hour:02d}:00", f"{(now.hour + 2) % 24:02d}:00"  # quiet now
    assert page.patch("/api/settings/me", {"quiet_hours": {"start": start, "end": end, "zone": "UTC"}}).json()[
        "me"]["quiet_until"]
    quiet_before = counts["slack_quiet"]
    await file(tenant, "n2")
    wait_for(lambda: counts["slack_quiet"] > quiet_before)
    assert slack.of("chat.postMessage", bot.token) == []

    assert page.patch("/api/settings/me", {"quiet_hours": None}).status_code == 200
    card_id = await file(tenant, "n1", "posted at last")
    [posted] = slack.wait_for("chat.postMessage", token=bot.token)
    assert posted.body["channel"] == user_id
    assert posted.body["blocks"][-1]["elements"][0]["value"] == card_id


def test_the_slack_test_message_goes_to_the_linked_user(tenant, slack):
    page = tenant.page()
    refused = page.post("/api/settings/slack/test")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "slack_not_connected"
    bot = connect(tenant, slack)
    refused = page.post("/api/settings/slack/test")
    assert refused.status_code == 409 and refused.json()["error"]["message"] == (
        "Nothing was sent: link your Slack user first (Get a link code, then send it to the bot).")
    assert slack.of("chat.postMessage", bot.token) == []
    user_id = link(tenant, bot)

    sent = page.post("/api/settings/slack/test")
    assert sent.status_code == 200, sent.text
    assert sent.json() == {"outcome": "sent", "message": (
        "A test message is on its way to you in Slack. Slack is on for you: when an agent asks you to confirm "
        "something, a message with the request comes here.")}
    [posted] = slack.of("chat.postMessage", bot.token)
    assert posted.body["channel"] == user_id
    assert posted.body["blocks"][0]["text"]["text"] == TEST_TITLE
    assert [b["text"]["text"] for b in posted.body["blocks"][1:]] == [
        "Slack is on for you: when an agent asks you to confirm something, a message with the request comes here."]

    page.patch("/api/settings/me", {"channels": {"slack": False}})
    slack.failing["chat.postMessage"] = "channel_not_found"
    try:
        failed = page.post("/api/settings/slack/test")
    finally:
        del slack.failing["chat.postMessage"]
    assert failed.status_code == 502 and failed.json()["error"]["message"] == (
        "Nothing was sent: Slack did not take the message (channel_not_found). If it keeps failing, an owner "
        "connects the Slack app again.")
    third = page.post("/api/settings/slack/test")
    assert third.status_code == 200 and "Slack is off for you" in third.json()["message"]
    posts = len(slack.of("chat.postMessage", bot.token))
    too_many = page.post("/api/settings/slack/test")
    assert too_many.status_code == 429 and int(too_many.headers["Retry-After"]) > 0
    assert len(slack.of("chat.postMessage", bot.token)) == posts  # nothing sent


@pytest.fixture
def receiver():
    with webhook_receiver() as r:
        yield r


async def test_an_owner_turns_an_endpoint_off_and_it_gets_nothing_until_on_again(signed, tenant, configure,
                                                                                   receiver):
    configure(upstream_private=True)
    endpoint = signed.post(HOOKS, {"url": receiver.url, "events": ["card.filed"]}).json()["endpoint"]
    off = signed.post(f"{HOOKS}/{endpoint['id']}/disable")
    assert off.status_code == 200, off.text
    view = off.json()
    assert (view["enabled"], view["disabledBy"], view["disabledReason"]) == (
        False, "owner", f"turned off by {tenant.person.email}")
    assert signed.get(HOOKS).json()["endpoints"] == [view]
    await file_card(tenant)
    time.sleep(2.5)  # the webhook loop runs every two seconds
    assert list(receiver.received) == []
    assert signed.get(f"{HOOKS}/{endpoint['id']}/deliveries").json()["deliveries"] == []

    on = signed.post(f"{HOOKS}/{endpoint['id']}/enable").json()
    assert (on["enabled"], on["disabledBy"], on["disabledReason"]) == (True, None, None)
    card_id = await file_card(tenant, "n2", "after turning it on")
    (got,) = wait_for(lambda: list(receiver.received))
    assert card_id in got.body.decode()


@pytest.mark.parametrize("role", ["admin", "member"])
def test_only_owners_turn_an_endpoint_off(page, tenant, configure, receiver, role):
    configure(upstream_private=True)
    owner = tenant.page()
    endpoint = owner.post(HOOKS, {"url": receiver.url}).json()["endpoint"]
    other = page.sign_in(tenant.runtime, tenant.add_person(role))
    refused = other.post(f"{HOOKS}/{endpoint['id']}/disable")
    assert refused.status_code == 403
    assert tenant.store.webhook_endpoints.get_endpoint(tenant.workspace_id, endpoint["id"]).enabled is True
    assert owner.post(f"{HOOKS}/wh_unknown/disable").status_code == 404
