"""Settings → Slack, Settings → Webhooks and the channels in Notifications, in real chromium: an
owner connects the Slack app (against the loopback stand-in for Slack's Web API), the token and
secret never come back to the page; a person links their Slack user with the one-time code, sees
the link, sends a test message and unlinks; an owner adds a webhook endpoint (on a loopback
receiver), sees its secret once, a card's delivery in the log, turns it off and on; a person
turns Slack off and on."""

from __future__ import annotations

import dataclasses
import time

import pytest
from playwright.sync_api import expect

from countersign.notify.slack import TEST_TITLE
from tests.browser.pages import file_cards, ready, sign_in
from tests.support.harness import SECRETS
from tests.support.slack_api import SlackStandIn, command_body, new_bot, signed_headers
from tests.support.webhook_receiver import webhook_receiver


@pytest.fixture(scope="module")
def slack_api():
    stand_in = SlackStandIn()
    yield stand_in
    stand_in.stop()


def slash_command(tenant, bot, user_id: str, text: str) -> str:
    import httpx2

    body = command_body(bot.team_id, user_id, text)
    answer = httpx2.post(tenant.origin + "/slack/commands", content=body,
                         headers=signed_headers(bot.secret, body, tenant.runtime.desk.now()), timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["text"]


def test_an_owner_connects_slack_and_a_person_links_tests_and_unlinks(live, tenant, page, watch, configure,
                                                                     slack_api):
    _, server = live
    configure(slack_api_url=slack_api.base_url)
    bot = slack_api.add(new_bot())
    SECRETS.update({bot.token, bot.secret})
    page.set_viewport_size({"width": 360, "height": 780})
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/slack")
    ready(page, "settings")
    panel = page.locator("[data-section=slack]")
    expect(panel).to_contain_text("Create the Slack app")
    expect(page.get_by_label("Interactivity request URL")).to_have_value(f"{server.origin}/slack/actions")
    expect(page.get_by_label("Slash command URL (/countersign)")).to_have_value(f"{server.origin}/slack/commands")
    # a token Slack does not know: refused beside its field, nothing stored
    page.get_by_label("Bot User OAuth Token").fill("xoxb-0000000000-unknown")
    page.get_by_label("Signing Secret").fill(bot.secret)
    with page.expect_response("**/api/settings/slack") as answer:
        page.get_by_role("button", name="Connect Slack").click()
    assert answer.value.status == 422
    expect(panel.locator("[role=alert]")).to_contain_text("botToken: Slack refused this bot token (invalid_auth)")
    expect(page.get_by_label("Bot User OAuth Token")).to_have_attribute("aria-invalid", "true")
    assert tenant.store.slack.get_app(tenant.workspace_id) is None

    page.get_by_label("Bot User OAuth Token").fill(bot.token)
    with page.expect_response("**/api/settings/slack") as answer:
        page.get_by_role("button", name="Connect Slack").click()
    assert answer.value.status == 200
    expect(page.locator("[data-slack=connected]")).to_have_text("Connected to the Slack workspace Acme Slack.")
    expect(panel).to_contain_text("Each request goes to its person as a direct message from the app.")
    assert bot.token not in page.content() and bot.secret not in page.content()

    # the owner picks a channel, then goes back to direct messages
    page.get_by_label("Channel (optional)").fill("C0CARDS1")
    page.get_by_role("button", name="Save channel").click()
    expect(panel).to_contain_text("Requests are posted in the channel C0CARDS1.")
    assert tenant.store.slack.get_app(tenant.workspace_id).channel == "C0CARDS1"
    page.get_by_label("Channel (optional)").fill("")
    page.get_by_role("button", name="Save channel").click()
    expect(panel).to_contain_text("Each request goes to its person as a direct message from the app.")

    # linking: the code, where to type it, then "linked as"
    mine = page.locator("[data-section=slack-link]")
    expect(mine).to_contain_text("Not linked yet")
    page.get_by_role("button", name="Get a link code").click()
    command = mine.locator("[data-link-command]")
    expect(command).to_have_text(__import__("re").compile(r"^/countersign link [A-Z2-9]{4}-[A-Z2-9]{4}$"))
    said = slash_command(tenant, bot, "U0PAT0001", command.inner_text().removeprefix("/countersign "))
    assert said.startswith("Linked: cards for ")
    page.get_by_role("button", name="I sent it").click()
    expect(mine.locator("[data-slack-link]")).to_have_text(
        "Linked as @pat. Requests for you reach you there, and its buttons answer for you.")
    # a link made before names were kept shows the Slack user's id
    old = tenant.store.slack.get_link(tenant.workspace_id, tenant.person.id)
    tenant.store.slack.link(dataclasses.replace(old, user_name=None))
    page.reload()
    ready(page, "settings")
    expect(mine.locator("[data-slack-link]")).to_have_text(
        "Linked as Slack user U0PAT0001. Requests for you reach you there, and its buttons answer for you.")

    with page.expect_response("**/api/settings/slack/test") as answer:
        mine.get_by_role("button", name="Send me a test Slack message").click()
    assert answer.value.status == 200
    expect(mine.locator(".test-slack-answer")).to_contain_text("A test message is on its way to you in Slack.")
    [posted] = slack_api.of("chat.postMessage", bot.token)
    assert posted.body["channel"] == "U0PAT0001" and posted.body["blocks"][0]["text"]["text"] == TEST_TITLE

    mine.get_by_role("button", name="Unlink").click()
    expect(mine).to_contain_text("Not linked yet")
    assert tenant.store.slack.get_link(tenant.workspace_id, tenant.person.id) is None

    page.get_by_role("button", name="Disconnect Slack").click()
    page.get_by_role("button", name="Disconnect it").click()
    expect(panel).to_contain_text("Create the Slack app")
    assert tenant.store.slack.get_app(tenant.workspace_id) is None
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    assert watch.errors == [], watch.errors


def test_a_member_sees_slack_to_link_and_no_webhooks(live, tenant, page):
    _, server = live
    member = tenant.add_person("member")
    sign_in(page, tenant, member)
    page.goto(f"{server.origin}/settings")
    ready(page, "settings")
    expect(page.locator("[data-settings-link=slack]")).to_be_visible()
    expect(page.locator("[data-settings-link=webhooks]")).to_have_count(0)
    page.goto(f"{server.origin}/settings/slack")
    ready(page, "settings")
    expect(page.locator("[data-slack=not-connected]")).to_have_text(
        "Slack is not connected to this workspace. An owner of the workspace connects it here.")
    page.goto(f"{server.origin}/settings/webhooks")
    ready(page, "settings")
    expect(page.locator("#main [role=alert]")).to_have_text("This part of Settings is for the workspace's owners.")
    # an admin manages upstreams, not webhooks: told the same
    sign_in(page, tenant, tenant.add_person("admin"))
    page.goto(f"{server.origin}/settings/webhooks")
    ready(page, "settings")
    expect(page.locator("#main [role=alert]")).to_have_text("This part of Settings is for the workspace's owners.")


def test_an_owner_adds_an_endpoint_sees_a_delivery_and_turns_it_off_and_on(live, tenant, page, watch, configure):
    _, server = live
    configure(upstream_private=True)  # the receiver is on 127.0.0.1
    with webhook_receiver() as receiver:
        page.set_viewport_size({"width": 360, "height": 780})
        sign_in(page, tenant)
        page.goto(f"{server.origin}/settings/webhooks")
        ready(page, "settings")
        panel = page.locator("[data-section=webhooks]")
        expect(panel).to_contain_text("No endpoints yet.")
        page.get_by_label("Endpoint URL").fill("hooks.example.com/x")  # no scheme: refused before any lookup
        with page.expect_response("**/api/settings/webhooks") as answer:
            page.get_by_role("button", name="Add endpoint").click()
        assert answer.value.status == 422
        expect(panel.locator("[role=alert]")).to_have_attribute("data-field", "url")
        expect(page.get_by_label("Endpoint URL")).to_have_attribute("aria-invalid", "true")
        assert tenant.store.webhook_endpoints.list_endpoints(tenant.workspace_id) == []

        page.get_by_label("Endpoint URL").fill(receiver.url)
        page.get_by_label("card.lapsed").uncheck()
        with page.expect_response("**/api/settings/webhooks") as answer:
            page.get_by_role("button", name="Add endpoint").click()
        assert answer.value.status == 201
        secret = answer.value.json()["secret"]
        SECRETS.add(secret)
        expect(page.locator("#webhook-secret")).to_have_value(secret)
        [stored] = tenant.store.webhook_endpoints.list_endpoints(tenant.workspace_id)
        assert stored.events == ("card.filed", "card.answered", "card.completed", "card.failed", "card.edited")
        page.get_by_role("button", name="Done").click()
        expect(page.locator("#webhook-secret")).to_have_count(0)
        assert secret not in page.content()
        row = panel.locator(f"[data-endpoint='{stored.id}']")
        expect(row).to_contain_text(receiver.url)
        expect(row.locator("[data-enabled]")).to_have_text("On")

        [card_id] = file_cards(tenant, [("n1", "for the webhook")])
        deadline = time.monotonic() + 15
        while not receiver.received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert receiver.received
        deadline = time.monotonic() + 10
        while tenant.store.webhook_deliveries.list_deliveries(tenant.workspace_id, stored.id)[0].state != "delivered" \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        row.locator("summary", has_text="Delivery log").click()
        delivery = row.locator("[data-delivery]")
        expect(delivery).to_have_count(1)
        expect(delivery).to_contain_text("card.filed")
        expect(delivery.locator("[data-state]")).to_have_text("delivered")
        expect(delivery).to_contain_text("HTTP 200 · 1 attempt")
        assert card_id

        row.get_by_role("button", name="Turn off").click()
        expect(row.locator("[data-enabled]")).to_have_text("Off")
        expect(row.locator("[data-disabled-by=owner]")).to_contain_text(f"({tenant.person.email}). Nothing is sent")
        assert tenant.store.webhook_endpoints.get_endpoint(tenant.workspace_id, stored.id).enabled is False
        row.get_by_role("button", name="Turn on").click()
        expect(row.locator("[data-enabled]")).to_have_text("On")
        row.get_by_role("button", name="Remove").click()
        row.get_by_role("button", name="Remove it").click()
        expect(panel).to_contain_text("No endpoints yet.")

        # every box ticked: every event, those added later too
        page.get_by_label("Endpoint URL").fill(receiver.url)
        with page.expect_response("**/api/settings/webhooks") as answer:
            page.get_by_role("button", name="Add endpoint").click()
        assert answer.value.status == 201 and answer.value.json()["endpoint"]["everyEvent"] is True
        SECRETS.add(answer.value.json()["secret"])
        [every] = tenant.store.webhook_endpoints.list_endpoints(tenant.workspace_id)
        assert every.events == ()
        page.get_by_role("button", name="Done").click()
        expect(panel.locator(f"[data-endpoint='{every.id}']")).to_contain_text("Every event, and any added later")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
        assert watch.errors == [], watch.errors


def test_a_person_turns_slack_off_and_on_in_notifications(live, tenant, page):
    _, server = live
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/notifications")
    ready(page, "settings")
    slack = page.get_by_label("Slack messages when an agent asks")
    expect(slack).to_be_checked()
    expect(page.get_by_label("Push notifications when an agent asks")).to_be_checked()
    with page.expect_response("**/api/settings/me") as saved:
        slack.uncheck()
    assert saved.value.status == 200
    assert tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id).channels_off == ("slack",)
    page.reload()
    ready(page, "settings")
    expect(page.get_by_label("Slack messages when an agent asks")).not_to_be_checked()
    page.get_by_label("Slack messages when an agent asks").check()
    expect(page.locator("[data-channels] .toggle").first).to_contain_text("Saved")
    assert tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id).channels_off == ()
    # the Slack test button says why nothing was sent in a workspace without Slack
    page.get_by_role("button", name="Send me a test Slack message").click()
    expect(page.locator(".test-slack-answer")).to_have_text(
        "Nothing was sent: Slack is not connected to this workspace; an owner connects it first.")
