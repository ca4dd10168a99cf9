"""Slack over real HTTP against the live server: an owner connects the app, a person links their
Slack user with a one-time code, a filed card is posted (to a stand-in for Slack's Web API on
loopback), and a signed click answers it through the confirm page's own path. Every forged,
stale, replayed or misdirected request is refused with nothing written and nothing answered."""

from __future__ import annotations

import json
import time

import httpx2
import pytest

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.identity.members import remove_member
from countersign.identity.passkeys.receipts import verify_receipt
from countersign.store.hashes import secret_hash
from countersign.surfaces.slack import routes
from countersign.surfaces.slack.linking import link_code_hash
from tests.support.harness import SECRETS, mcp_client, new_tenant
from tests.support.slack_api import Bot, SlackStandIn, action_body, command_body, new_bot, signed_headers

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def slack_api():
    stand_in = SlackStandIn()
    yield stand_in
    stand_in.stop()


@pytest.fixture
def slack(slack_api, configure, clock):
    """The stand-in, with the live server's Slack calls pointed at it."""
    configure(slack_api_url=slack_api.base_url)
    return slack_api


async def file(tenant, note: str = "n1", text: str = "new text", token: str | None = None) -> str:
    async with mcp_client(tenant.url, token or tenant.token) as client:
        held = await client.call_tool("publish_note", {"note_id": note, "text": text})
    assert held.structured_content["status"] == "pending", held
    return held.structured_content["confirmationId"]


def connect(tenant, slack: SlackStandIn, channel: str | None = None) -> Bot:
    bot = slack.add(new_bot())
    SECRETS.update({bot.token, bot.secret})  # the end-of-run scan looks for them in every log line
    body = {"botToken": bot.token, "signingSecret": bot.secret, **({"channel": channel} if channel else {})}
    answer = tenant.page().request("PUT", "/api/settings/slack", body)
    assert answer.status_code == 200, answer.text
    return bot


def post(tenant, path: str, body: bytes, headers: dict) -> httpx2.Response:
    return httpx2.post(tenant.origin + path, content=body, headers=headers, timeout=10)


def now(tenant) -> int:
    return tenant.runtime.desk.now()


def command(tenant, bot: Bot, user_id: str, text: str) -> str:
    body = command_body(bot.team_id, user_id, text)
    answer = post(tenant, "/slack/commands", body, signed_headers(bot.secret, body, now(tenant)))
    assert answer.status_code == 200, answer.text
    assert answer.json()["response_type"] == "ephemeral"
    return answer.json()["text"]


def link(tenant, bot: Bot, person=None, user_id: str | None = None) -> str:
    user_id = user_id or "U" + new_id("").upper().replace("_", "")[:10]
    got = tenant.page(person).post("/api/settings/slack/link-code")
    assert got.status_code == 201, got.text
    said = command(tenant, bot, user_id, f"link {got.json()['code']}")
    assert said.startswith("Linked: cards for "), said
    return user_id


def click(tenant, bot: Bot, user_id: str, action: str, card_id: str, *, secret: str | None = None,
          timestamp: int | str | None = None, channel: str = "D0USER01") -> httpx2.Response:
    body = action_body(bot.team_id, user_id, action, card_id, channel=channel)
    return post(tenant, "/slack/actions", body,
                signed_headers(secret or bot.secret, body, now(tenant) if timestamp is None else timestamp))


def trail(tenant, card_id: str) -> list:
    return tenant.store.cards.audit_trail(tenant.workspace_id, card_id)


def card(tenant, card_id: str):
    return tenant.store.cards.get_card(tenant.workspace_id, card_id, now(tenant))


def post_state(tenant, card_id: str, want: str, timeout: float = 10) -> str:
    """The card's Slack post state once it is ``want`` (the poster records it after Slack answered,
    on its worker thread), or as it stands at the deadline."""
    deadline = time.monotonic() + timeout
    while (state := tenant.store.slack.get_post(card_id).state) != want and time.monotonic() < deadline:
        time.sleep(0.02)
    return state


def buttons(message_blocks: list[dict]) -> list[tuple[str, str]]:
    [actions] = [b for b in message_blocks if b["type"] == "actions"]
    return [(e["action_id"], e["text"]["text"]) for e in actions["elements"]]


def told(slack: SlackStandIn, bot: Bot, user_id: str) -> list[str]:
    return [c.body["text"] for c in slack.of("chat.postEphemeral", bot.token) if c.body["user"] == user_id]


# -- the whole way ------------------------------------------------------------------------------------


async def test_connect_link_post_to_the_person_and_confirm_in_slack(tenant, slack):
    bot = connect(tenant, slack)
    view = tenant.page().get("/api/settings/slack").json()
    assert view == {"connected": True, "teamId": bot.team_id, "teamName": "Acme Slack", "channel": None,
                    "connectedAt": view["connectedAt"], "canManage": True, "link": None,
                    "requestUrls": {"interactivity": f"{tenant.origin}/slack/actions",
                                    "slashCommand": f"{tenant.origin}/slack/commands"}}
    stored = tenant.store.slack.get_app(tenant.workspace_id)
    assert bot.token not in stored.token_sealed and bot.secret not in stored.secret_sealed
    assert bot.token not in json.dumps(view) and bot.secret not in json.dumps(view)

    user_id = link(tenant, bot)
    linked = tenant.page().get("/api/settings/slack").json()["link"]
    assert (linked["slackUserId"], linked["slackUserName"]) == (user_id, "pat")  # the slash command's user_name

    card_id = await file(tenant)
    [posted] = slack.wait_for("chat.postMessage", token=bot.token)
    assert posted.body["channel"] == user_id  # the bot's direct message to the person
    blocks = posted.body["blocks"]
    assert blocks[0] == {"type": "header", "text": {"type": "plain_text", "text": "Change note ‘Note 1’?",
                                                    "emoji": False}}
    assert blocks[1]["text"] == {"type": "plain_text", "text": "text 1 → new text", "emoji": False}
    assert blocks[2]["elements"][0]["text"] == "Asked by Test agent"
    assert buttons(blocks) == [("confirm", "Confirm"), ("decline", "Decline"), ("open", "Open")]
    assert blocks[3]["elements"][2]["url"] == f"{tenant.origin}/confirm?card={card_id}"
    assert posted.body["text"] == "Waiting for your answer: Change note ‘Note 1’?"
    assert post_state(tenant, card_id, "posted") == "posted"

    answer = click(tenant, bot, user_id, "confirm", card_id)
    assert answer.status_code == 200, answer.text
    assert card(tenant, card_id).state is CardState.COMPLETED
    assert tenant.note("n1")["text"] == "new text"
    last = trail(tenant, card_id)[-1]
    assert (last.event, last.actor, last.channel) == ("completed", f"person:{tenant.person.id}", "slack")
    [updated] = slack.of("chat.update", bot.token)
    assert (updated.body["channel"], updated.body["ts"]) == ("D0USER01", "1700000000.000001")
    who = tenant.person.name or tenant.person.email
    assert updated.body["blocks"][-2]["text"]["text"] == f"Confirmed in Slack by {who}. It ran."
    assert buttons(updated.body["blocks"]) == [("open", "Open")]
    assert told(slack, bot, user_id) == []
    # its receipt says how: a Slack click, not a passkey; and it verifies offline
    receipt = tenant.page().get(f"/api/cards/{card_id}/receipt").json()
    assert receipt["confirmation"]["method"] == receipt["confirmation"]["channel"] == "slack"
    assert verify_receipt(receipt, receipt["server_key"]).kind == (
        "confirmed without a passkey (by a click on the card's Slack message, from the Slack user linked to the "
        "person): a record sealed by the server, not signed by the person")


async def test_in_the_owners_channel_and_declined(tenant, slack):
    bot = connect(tenant, slack)
    assert tenant.page().patch("/api/settings/slack", {"channel": "C0CARDS1"}).json()["channel"] == "C0CARDS1"
    user_id = link(tenant, bot)
    card_id = await file(tenant)
    [posted] = slack.wait_for("chat.postMessage", token=bot.token)
    assert posted.body["channel"] == "C0CARDS1"
    assert posted.body["blocks"][2]["elements"][0]["text"] == \
        f"Asked by Test agent · waiting on {tenant.person.name or tenant.person.email}"
    assert click(tenant, bot, user_id, "decline", card_id, channel="C0CARDS1").status_code == 200
    assert card(tenant, card_id).state is CardState.DECLINED
    assert trail(tenant, card_id)[-1].channel == "slack"
    [updated] = slack.of("chat.update", bot.token)
    assert updated.body["channel"] == "C0CARDS1"
    assert updated.body["blocks"][-2]["text"]["text"].startswith("Declined in Slack by ")


async def test_an_unlinked_person_gets_no_direct_message_and_a_workspace_without_slack_nothing(tenant, slack):
    connect(tenant, slack)
    posted, unlinked = len(slack.of("chat.postMessage")), tenant.runtime.slack.counts["slack_not_linked"]
    await file(tenant)
    other = new_tenant(tenant.runtime, tenant.origin)
    await file(other)
    deadline = time.monotonic() + 5
    while tenant.runtime.slack.counts["slack_not_linked"] == unlinked and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    assert tenant.runtime.slack.counts["slack_not_linked"] == unlinked + 1
    assert len(slack.of("chat.postMessage")) == posted


async def test_a_card_under_the_passkey_policy_offers_only_the_page(tenant, slack):
    bot = connect(tenant, slack)
    user_id = link(tenant, bot)
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "every"})
    card_id = await file(tenant)
    [posted] = slack.wait_for("chat.postMessage", token=bot.token)
    assert buttons(posted.body["blocks"]) == [("open", "Open to confirm with your passkey")]
    before = trail(tenant, card_id)
    assert click(tenant, bot, user_id, "confirm", card_id).status_code == 200
    assert told(slack, bot, user_id) == [routes.NEEDS_PASSKEY]
    assert card(tenant, card_id).state is CardState.PENDING and trail(tenant, card_id) == before
    assert slack.of("chat.update", bot.token) == []


async def test_a_button_for_a_card_that_now_needs_a_passkey_is_refused(tenant, slack):
    bot = connect(tenant, slack)
    user_id = link(tenant, bot)
    card_id = await file(tenant)
    [posted] = slack.wait_for("chat.postMessage", token=bot.token)
    assert ("confirm", "Confirm") in buttons(posted.body["blocks"])
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "every"})
    before = trail(tenant, card_id)
    for action in ("confirm", "decline"):
        assert click(tenant, bot, user_id, action, card_id).status_code == 200
    assert told(slack, bot, user_id) == [routes.NEEDS_PASSKEY] * 2
    assert card(tenant, card_id).state is CardState.PENDING and trail(tenant, card_id) == before
    assert tenant.note("n1")["text"] != "new text"


# -- forged, stale, replayed ----------------------------------------------------------------------------


async def test_forged_stale_and_replayed_requests_are_refused(tenant, slack):
    bot = connect(tenant, slack)
    user_id = link(tenant, bot)
    card_id = await file(tenant)
    slack.wait_for("chat.postMessage", token=bot.token)
    before = trail(tenant, card_id)
    body = action_body(bot.team_id, user_id, "confirm", card_id)
    t = now(tenant)
    signed = signed_headers(bot.secret, body, t)
    refused = {
        "no signature": {"Content-Type": "application/x-www-form-urlencoded"},
        "no timestamp": {k: v for k, v in signed.items() if k != "X-Slack-Request-Timestamp"},
        "another secret": signed_headers("0" * 32, body, t),
        "another body's signature": {**signed, "X-Slack-Signature": signed_headers(
            bot.secret, action_body(bot.team_id, user_id, "decline", card_id), t)["X-Slack-Signature"]},
        "301 s old": signed_headers(bot.secret, body, t - 301),
        "360 s ahead": signed_headers(bot.secret, body, t + 360),
        "not a time": signed_headers(bot.secret, body, "abc"),
        "digits in another script": signed_headers(bot.secret, body, "١٧٠٠"),
    }
    for why, headers in refused.items():
        answer = post(tenant, "/slack/actions", body, {k: v.encode() for k, v in headers.items()})
        assert answer.status_code == 401, why
        assert answer.json()["error"]["code"] == "not_slack", why
    assert card(tenant, card_id).state is CardState.PENDING and trail(tenant, card_id) == before
    # the same signed decline, twice: the first answers, the replay is refused
    decline = action_body(bot.team_id, user_id, "decline", card_id)
    headers = signed_headers(bot.secret, decline, t - 299)
    assert post(tenant, "/slack/actions", decline, headers).status_code == 200
    assert card(tenant, card_id).state is CardState.DECLINED
    after = trail(tenant, card_id)
    assert post(tenant, "/slack/actions", decline, headers).status_code == 401
    assert trail(tenant, card_id) == after and len(slack.of("chat.update", bot.token)) == 1
    # a team no app is connected for, and a slash command with a forged signature
    stranger = new_bot()
    assert click(tenant, stranger, user_id, "confirm", card_id).status_code == 401
    forged = command_body(bot.team_id, user_id, "unlink")
    assert post(tenant, "/slack/commands", forged, signed_headers("f" * 32, forged, t)).status_code == 401
    assert tenant.store.slack.link_of_user(bot.team_id, user_id) is not None


async def test_clicks_from_the_wrong_person_answer_nothing(tenant, slack):
    bot = connect(tenant, slack)
    owner_user = link(tenant, bot)
    member = tenant.add_person()
    member_user = link(tenant, bot, person=member)
    card_id = await file(tenant)
    slack.wait_for("chat.postMessage", token=bot.token)
    before = trail(tenant, card_id)

    # linked to no one
    assert click(tenant, bot, "U0NOBODY1", "confirm", card_id).status_code == 200
    assert told(slack, bot, "U0NOBODY1") == [routes.NOT_LINKED]
    # not their card
    assert click(tenant, bot, member_user, "confirm", card_id).status_code == 200
    assert told(slack, bot, member_user) == [routes.NOT_YOURS]
    # a card of another workspace, by id
    other = new_tenant(tenant.runtime, tenant.origin)
    other_card = await file(other)
    assert click(tenant, bot, owner_user, "confirm", other_card).status_code == 200
    assert told(slack, bot, owner_user) == [routes.NOT_FOUND]
    assert card(other, other_card).state is CardState.PENDING
    # a member removed since: their link acts for no one, not even on a card of theirs
    theirs = await file(tenant, "n2", token=tenant.connect(member))
    remove_member(tenant.runtime.desk, member)
    assert click(tenant, bot, member_user, "decline", theirs).status_code == 200
    assert told(slack, bot, member_user)[-1] == routes.NOT_LINKED

    assert card(tenant, card_id).state is CardState.PENDING and trail(tenant, card_id) == before
    assert slack.of("chat.update", bot.token) == []


async def test_a_user_linked_in_another_workspace_is_refused(tenant, slack):
    """The Slack workspace moved: linked while workspace A had it, now connected to workspace B."""
    bot = connect(tenant, slack)
    user_id = link(tenant, bot)
    assert tenant.page().request("DELETE", "/api/settings/slack").status_code == 204
    other = new_tenant(tenant.runtime, tenant.origin)
    answer = other.page().request("PUT", "/api/settings/slack", {"botToken": bot.token, "signingSecret": bot.secret})
    assert answer.status_code == 200, answer.text
    other_card = await file(other)
    assert click(tenant, bot, user_id, "confirm", other_card).status_code == 200
    assert told(slack, bot, user_id) == [routes.OTHER_WORKSPACE]
    assert card(other, other_card).state is CardState.PENDING
    assert len(trail(other, other_card)) == 1  # filed, nothing since


# -- linking ------------------------------------------------------------------------------------------


async def test_link_codes_are_single_use_expire_and_belong_to_one_workspace(tenant, slack, clock):
    bot = connect(tenant, slack)
    code = tenant.page().post("/api/settings/slack/link-code").json()
    assert code["command"] == f"/countersign link {code['code']}"
    # stored as its hash only
    assert tenant.store.slack.take_link_code(secret_hash(code["code"]), now(tenant)) is None
    spent = "That code is unknown, used or expired. Get a new one in countersign's Settings."
    assert command(tenant, bot, "U0FIRST03", f"link {code['code'].lower()}") == \
        f"Linked: cards for {tenant.person.email} in Acme now reach you here, and their buttons answer for you."
    assert tenant.store.slack.get_link(tenant.workspace_id, tenant.person.id).user_id == "U0FIRST03"
    assert command(tenant, bot, "U0FIRST04", f"link {code['code']}") == spent  # once only
    assert command(tenant, bot, "U0FIRST04", "link WXYZ-2345") == spent  # never issued
    late = tenant.page().post("/api/settings/slack/link-code").json()["code"]
    clock.advance(601)
    assert command(tenant, bot, "U0FIRST05", f"link {late}") == spent
    # a code from another workspace is no good in this workspace's Slack
    other = new_tenant(tenant.runtime, tenant.origin)
    other_bot = connect(other, slack)
    foreign = other.page().post("/api/settings/slack/link-code").json()["code"]
    assert command(tenant, bot, "U0FIRST06", f"link {foreign}").startswith("That code is for another countersign")
    assert tenant.store.slack.link_of_user(bot.team_id, "U0FIRST06") is None
    assert command(other, other_bot, "U0FIRST06", f"link {foreign}") == spent  # it was spent by that try
    assert command(tenant, bot, "U0FIRST03", "unlink").startswith("Unlinked")
    assert tenant.store.slack.get_link(tenant.workspace_id, tenant.person.id) is None
    assert command(tenant, bot, "U0FIRST03", "help") == routes.HELP


async def test_guessing_codes_is_limited(tenant, slack):
    bot = connect(tenant, slack)
    said = [command(tenant, bot, "U0GUESS01", f"link AAAA-AA{i:02d}") for i in range(11)]
    assert said[-1].startswith("Too many codes tried")
    good = tenant.page().post("/api/settings/slack/link-code").json()["code"]
    assert command(tenant, bot, "U0GUESS01", f"link {good}").startswith("Too many codes tried")
    assert tenant.store.slack.take_link_code(link_code_hash(good), now(tenant)) is not None  # not spent


async def test_unlinking_in_settings_stops_the_buttons(tenant, slack):
    bot = connect(tenant, slack)
    user_id = link(tenant, bot)
    assert tenant.page().request("DELETE", "/api/settings/slack/link").status_code == 204
    assert tenant.page().get("/api/settings/slack").json()["link"] is None
    card_id = await file(tenant)
    assert click(tenant, bot, user_id, "confirm", card_id).status_code == 200
    assert told(slack, bot, user_id) == [routes.NOT_LINKED]
    assert card(tenant, card_id).state is CardState.PENDING


# -- settings --------------------------------------------------------------------------------------------


async def test_only_owners_connect_and_a_refused_token_saves_nothing(tenant, slack):
    member = tenant.add_person("admin")
    bot = slack.add(new_bot())
    body = {"botToken": bot.token, "signingSecret": bot.secret}
    answer = tenant.page(member).request("PUT", "/api/settings/slack", body)
    assert answer.status_code == 403
    assert tenant.page(member).patch("/api/settings/slack", {"channel": None}).status_code == 403
    assert tenant.page(member).request("DELETE", "/api/settings/slack").status_code == 403
    assert tenant.page(member).get("/api/settings/slack").json()["canManage"] is False
    assert tenant.page(member).post("/api/settings/slack/link-code").status_code == 409  # not connected yet
    wrong = tenant.page().request("PUT", "/api/settings/slack", {**body, "botToken": "xoxb-1-not-a-real-token"})
    assert wrong.status_code == 422 and wrong.json()["error"]["message"] == \
        "botToken: Slack refused this bot token (invalid_auth); nothing was saved."
    for bad in ({**body, "botToken": "xoxp-user-token-123"}, {**body, "signingSecret": "short"},
                {**body, "channel": "#general"}, {**body, "extra": 1}):
        assert tenant.page().request("PUT", "/api/settings/slack", bad).status_code == 422, bad
    assert tenant.store.slack.get_app(tenant.workspace_id) is None
    # a Slack workspace is one countersign workspace's
    connect(tenant, slack)
    taken = new_tenant(tenant.runtime, tenant.origin).page().request("PUT", "/api/settings/slack", {
        "botToken": list(slack.bots)[-1], "signingSecret": slack.bots[list(slack.bots)[-1]].secret})
    assert taken.status_code == 409
    assert tenant.page().request("DELETE", "/api/settings/slack").status_code == 204
    assert tenant.page().get("/api/settings/slack").json()["connected"] is False


def test_the_app_manifest_names_these_routes_and_no_more_scopes_than_needed():
    import yaml

    from tests.support.aws import REPO_ROOT

    manifest = yaml.safe_load((REPO_ROOT / "infra" / "slack-app-manifest.yaml").read_text())
    origin = "https://countersign.example.com"
    assert manifest["settings"]["interactivity"] == {"is_enabled": True, "request_url": f"{origin}/slack/actions"}
    [slash] = manifest["features"]["slash_commands"]
    assert (slash["command"], slash["url"]) == ("/countersign", f"{origin}/slack/commands")
    assert manifest["oauth_config"]["scopes"] == {"bot": ["chat:write", "commands"]}
    paths = {route.path for route in routes.router.routes}
    assert paths == {"/slack/actions", "/slack/commands"}
