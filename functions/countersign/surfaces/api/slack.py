"""Settings for Slack (docs/channels.md, "Slack"): the workspace's owners connect its Slack app,
pick where cards go and disconnect it; each person gets a one-time code to link their Slack user,
and sees or removes their link.

Connecting checks the bot token with Slack (``auth.test``: which Slack workspace and bot it is)
and stores it and the signing secret sealed; neither is ever shown again, logged or sent back.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from ...core.sealing import SealError
from ...core.times import iso
from ...identity.sessions import Signed
from ...logs.redaction import hold_secret
from ...notify.quiet_hours import quiet_until
from ...notify.slack import SlackCallError, call
from ...runtime import Runtime
from ...store.errors import BadInput, Conflict, NotFound
from ...store.slack import CHANNEL_ID, TEAM_ID, USER_ID, SlackApp, SlackLinkCode
from ..slack.linking import CODE_TTL, link_code_hash, new_link_code
from .errors import ApiError
from .schemas import Strict, TestSlackView, errors
from .send_tests import take_test_slot
from .session import Acting, SignedIn, runtime_of

router = APIRouter(tags=["slack"])

OWNERS = ("owner",)
BOT_TOKEN_PATTERN = r"^xoxb-[A-Za-z0-9-]{10,250}$"
SIGNING_SECRET_PATTERN = r"^[A-Za-z0-9]{16,128}$"
CHANNEL_PATTERN = CHANNEL_ID.pattern


class SlackConnectBody(Strict):
    botToken: str = Field(pattern=BOT_TOKEN_PATTERN, description="The app's Bot User OAuth Token (xoxb-…)")
    signingSecret: str = Field(pattern=SIGNING_SECRET_PATTERN, description="The app's Signing Secret")
    channel: str | None = Field(default=None, pattern=CHANNEL_PATTERN,
                                description="A channel id (C… or G…) to post every card in; empty: each person's "
                                            "direct messages")


class SlackChannelBody(Strict):
    channel: str | None = Field(pattern=CHANNEL_PATTERN, description="A channel id (C… or G…), or null for each "
                                                                     "person's direct messages")


class SlackRequestUrls(BaseModel):
    interactivity: str
    slashCommand: str


class SlackLinkView(BaseModel):
    slackUserId: str
    slackUserName: str | None  # as Slack named them when they linked; None for a link made before it was kept
    linkedAt: str


class SlackView(BaseModel):
    connected: bool
    teamId: str | None
    teamName: str | None
    channel: str | None
    connectedAt: str | None
    canManage: bool
    requestUrls: SlackRequestUrls
    link: SlackLinkView | None


class SlackLinkCodeView(BaseModel):
    code: str
    command: str
    expiresAt: str


def slack_view(runtime: Runtime, signed: Signed) -> dict:
    app = runtime.store.slack.get_app(signed.workspace.id)
    link = runtime.store.slack.get_link(signed.workspace.id, signed.person.id)
    if link is not None and (app is None or link.team_id != app.team_id):
        link = None  # a link to a Slack workspace no longer connected acts for no one
    public = runtime.desk.settings.public_url
    return {
        "connected": app is not None,
        "teamId": app.team_id if app else None,
        "teamName": app.team_name if app else None,
        "channel": app.channel if app else None,
        "connectedAt": iso(app.connected_at) if app else None,
        "canManage": signed.person.role in OWNERS,
        "requestUrls": {"interactivity": f"{public}/slack/actions", "slashCommand": f"{public}/slack/commands"},
        "link": {"slackUserId": link.user_id, "slackUserName": link.user_name,
                 "linkedAt": iso(link.linked_at)} if link else None,
    }


def _owner(signed: Signed) -> None:
    if signed.person.role not in OWNERS:
        raise ApiError(403, "forbidden", "Only the workspace's owners can connect Slack or change where cards go.")


@router.get("/settings/slack", response_model=SlackView, responses=errors(401))
def get_slack(request: Request, signed: SignedIn) -> dict:
    """The workspace's Slack app (never its credentials), the request URLs to give it, and the
    signed-in person's link."""
    return slack_view(runtime_of(request), signed)


@router.put("/settings/slack", response_model=SlackView, responses=errors(401, 403, 409, 422, 502))
def connect(body: SlackConnectBody, request: Request, signed: Acting) -> dict:
    """Connect (or replace) the workspace's Slack app (owners): the bot token is checked with Slack,
    then both credentials are stored sealed."""
    _owner(signed)
    runtime = runtime_of(request)
    hold_secret(body.botToken, body.signingSecret)  # out of every log line of this process, a library's too
    try:
        who = call(runtime.desk.settings.slack_api_url, body.botToken, "auth.test")
    except SlackCallError as exc:
        if exc.transient:
            raise ApiError(502, "slack_unreachable", "Slack could not be reached to check the bot token; nothing "
                           "was saved. Try again.") from None
        raise ApiError(422, "invalid", f"botToken: Slack refused this bot token ({exc.error}); nothing was saved.",
                       field="botToken") from None
    team_id, team_name, bot_user = who.get("team_id"), who.get("team"), who.get("user_id")
    if not (isinstance(team_id, str) and TEAM_ID.fullmatch(team_id) and isinstance(bot_user, str)
            and USER_ID.fullmatch(bot_user)):
        raise ApiError(422, "invalid", "botToken: this is not a bot token of a Slack workspace; nothing was saved.",
                       field="botToken")
    token, secret = runtime.slack.credentials.seal(signed.workspace.id, team_id, body.botToken, body.signingSecret)
    app = SlackApp(signed.workspace.id, team_id, str(team_name or "")[:200], bot_user, token, secret,
                   signed.person.id, runtime.desk.now(), body.channel)
    try:
        runtime.store.slack.connect_app(app)
    except Conflict as exc:
        raise ApiError(409, "conflict", str(exc)) from None
    except BadInput as exc:
        raise ApiError(422, "invalid", str(exc), field=exc.field) from None
    return slack_view(runtime, signed)


@router.patch("/settings/slack", response_model=SlackView, responses=errors(401, 403, 404, 422))
def pick_channel(body: SlackChannelBody, request: Request, signed: Acting) -> dict:
    """Where cards go (owners): one channel (the app must be in it), or each person's direct messages."""
    _owner(signed)
    runtime = runtime_of(request)
    try:
        runtime.store.slack.set_channel(signed.workspace.id, body.channel)
    except NotFound:
        raise ApiError(404, "not_found", "Slack is not connected to this workspace.") from None
    return slack_view(runtime, signed)


@router.delete("/settings/slack", status_code=204, response_class=Response, responses=errors(401, 403))
def disconnect(request: Request, signed: Acting) -> Response:
    """Disconnect the workspace's Slack app (owners): its credentials are deleted; cards are no
    longer posted and buttons of messages already posted answer nothing."""
    _owner(signed)
    runtime_of(request).store.slack.disconnect_app(signed.workspace.id)
    return Response(status_code=204)


@router.post("/settings/slack/link-code", status_code=201, response_model=SlackLinkCodeView,
             responses=errors(401, 403, 409))
def link_code(request: Request, signed: Acting) -> dict:
    """A one-time code for the signed-in person to send the bot (``/countersign link CODE``):
    valid for ten minutes, once. Shown in this answer only."""
    runtime = runtime_of(request)
    if runtime.store.slack.get_app(signed.workspace.id) is None:
        raise ApiError(409, "slack_not_connected", "Slack is not connected to this workspace; an owner connects it "
                       "first.")
    code = new_link_code()
    expires_at = runtime.desk.now() + CODE_TTL
    runtime.store.slack.put_link_code(SlackLinkCode(link_code_hash(code), signed.workspace.id, signed.person.id,
                                                    expires_at))
    return {"code": code, "command": f"/countersign link {code}", "expiresAt": iso(expires_at)}


@router.delete("/settings/slack/link", status_code=204, response_class=Response, responses=errors(401, 403))
def unlink(request: Request, signed: Acting) -> Response:
    """Remove the signed-in person's link: cards no longer reach them in Slack, and buttons there no
    longer answer for them."""
    runtime_of(request).store.slack.unlink(signed.workspace.id, signed.person.id)
    return Response(status_code=204)


def slack_status(signed: Signed, app: SlackApp, now: int) -> list[str]:
    """What the test message says of the person's Slack messages: on or off, where they go, quiet hours."""
    person = signed.person
    if not person.reached_by("slack"):
        lines = ["Slack is off for you: no message comes when an agent asks. Turn it on in Settings, "
                 "Notifications, to get them."]
    elif app.channel:
        lines = [f"Slack is on for you: when an agent asks you to confirm something, a message with the request "
                 f"is posted in the channel your workspace's owners picked ({app.channel}), naming you."]
    else:
        lines = ["Slack is on for you: when an agent asks you to confirm something, a message with the request "
                 "comes here."]
    quiet = person.quiet_hours
    if quiet is not None:
        line = (f"Quiet hours: {quiet.start} to {quiet.end} ({quiet.zone}). A request made then is posted when "
                "they end, if it still waits.")
        if quiet_until(quiet, now) is not None:
            line += " They run now; a test message is sent anyway."
        lines.append(line)
    return lines


@router.post("/settings/slack/test", response_model=TestSlackView, responses=errors(401, 403, 409, 429, 502))
def send_test_message(request: Request, signed: Acting) -> dict:
    """Send the signed-in person a test message in Slack now, from the bot to their linked Slack
    user (quiet hours do not hold it), at most :data:`.send_tests.TEST_LIMIT` per 15 minutes."""
    runtime = runtime_of(request)
    now = runtime.desk.now()
    app = runtime.store.slack.get_app(signed.workspace.id)
    if app is None:
        raise ApiError(409, "slack_not_connected", "Nothing was sent: Slack is not connected to this workspace; an "
                       "owner connects it first.")
    link = runtime.store.slack.get_link(signed.workspace.id, signed.person.id)
    if link is None or link.team_id != app.team_id:
        raise ApiError(409, "slack_not_linked", "Nothing was sent: link your Slack user first (Get a link code, "
                       "then send it to the bot).")
    take_test_slot(runtime.store.limits, "slack", signed.person.id, now, "test messages")
    status = slack_status(signed, app, now)
    try:
        runtime.slack.send_test(app, link, status)
    except SlackCallError as exc:
        raise ApiError(502, "send_failed", f"Nothing was sent: Slack did not take the message ({exc.error}). "
                       "If it keeps failing, an owner connects the Slack app again.") from None
    except SealError:
        raise ApiError(502, "send_failed", "Nothing was sent: the Slack app's credentials could not be read; an "
                       "owner connects the Slack app again.") from None
    return {"outcome": "sent", "message": "A test message is on its way to you in Slack. " + " ".join(status)}
