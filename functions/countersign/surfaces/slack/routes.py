"""What Slack sends back: a card's buttons (``POST /slack/actions``, the app's interactivity
request URL) and the slash command (``POST /slack/commands``: ``/countersign link CODE``).

Every request is proved first (:mod:`.signed`: signature, five-minute window, never twice);
anything else is 401 and nothing is read beyond the request's team. A proved click acts as the
person the clicking Slack user is linked to, and only in the workspace the app belongs to, through
the confirm page's own path (:func:`countersign.gate.clicks.confirm_click` and ``decline_click``,
channel ``slack``): the ticket, the re-plan, drift and the one winner are the gate's. Refused,
with a message only the clicker sees and nothing written or answered: a Slack user linked to no
one, or to a person of another workspace, or to a member who was removed; a card that is not
theirs or not found; a card the workspace's passkey policy covers now (only a passkey on the
confirm page confirms it). Once answered, the card's message shows the outcome and loses its
buttons (``chat.update``).

Slack waits three seconds for an answer; a click's work (the card's action included) runs before
answering, as on the confirm page.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from ...core.card_states import CardState, Refusal
from ...gate import clicks
from ...notify.slack import CONFIRM, DECLINE, outcome_words
from ...runtime import Runtime
from ...store.errors import BadInput, Conflict, NotFound
from ...store.slack import SlackApp, SlackLink, slack_user_name
from ...toolkit import Unavailable
from ..api.session import CARD_ID, runtime_of
from .linking import TRIES, TRIES_WINDOW, link_code_hash
from .signed import NotSlack, verified_app

log = logging.getLogger("countersign.slack")

router = APIRouter(tags=["slack"])

CHANNEL = "slack"

NOT_LINKED = ("Your Slack user is not linked to anyone in countersign, so this button cannot answer for you. "
              "Get a code in countersign's Settings and send /countersign link CODE here.")
OTHER_WORKSPACE = ("Your Slack user is linked to a member of another countersign workspace than the one this Slack "
                   "app belongs to, so this button cannot answer for you. Nothing was done.")
NOT_FOUND = "This card is not found. Nothing was done."
NOT_YOURS = "This card waits on someone else; only they can answer it. Nothing was done."
NEEDS_PASSKEY = ("This card needs your passkey now: open it on the confirm page to answer it. Nothing was done "
                 "in Slack.")
HELP = ("/countersign link CODE links your Slack user to you in countersign (get the code in Settings); "
        "/countersign unlink removes the link.")


def _refused(reason: str) -> JSONResponse:
    return JSONResponse({"error": {"code": "not_slack", "message": "This request is not proved to come from the "
                                   "Slack app connected for its workspace; nothing was done."}}, status_code=401)


def _form(body: bytes) -> dict[str, str]:
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        return {}
    return {k: v[0] for k, v in fields.items() if v}


def _get(value: Any, *path: str) -> Any:
    for name in path:
        value = value.get(name) if isinstance(value, dict) else None
    return value


@router.post("/slack/actions", include_in_schema=False)
async def actions(request: Request) -> Response:
    """A button of a card's message (Slack's ``block_actions``)."""
    runtime = runtime_of(request)
    body = await request.body()
    try:
        payload = json.loads(_form(body).get("payload") or "null")
    except ValueError:
        payload = None
    team = _get(payload, "team", "id") or _get(payload, "user", "team_id")
    try:
        app = await runtime.desk.offload.off_the_loop(verified_app, runtime, body, request.headers, team)
    except NotSlack as refused:
        return _refused(str(refused))
    if isinstance(payload, dict):
        await runtime.desk.offload.off_the_loop(_click, runtime, app, payload)
    return Response(status_code=200)


@router.post("/slack/commands", include_in_schema=False)
async def commands(request: Request) -> Response:
    """The ``/countersign`` slash command: ``link CODE``, ``unlink``."""
    runtime = runtime_of(request)
    body = await request.body()
    form = _form(body)
    try:
        app = await runtime.desk.offload.off_the_loop(verified_app, runtime, body, request.headers,
                                                      form.get("team_id"))
    except NotSlack as refused:
        return _refused(str(refused))
    text = await runtime.desk.offload.off_the_loop(_command, runtime, app, form)
    return JSONResponse({"response_type": "ephemeral", "text": text})


# -- a click ----------------------------------------------------------------------------------------


def _click(runtime: Runtime, app: SlackApp, payload: dict[str, Any]) -> None:
    if payload.get("type") != "block_actions":
        return
    found = payload.get("actions")
    if not isinstance(found, list) or len(found) != 1 or not isinstance(found[0], dict):
        return
    action = found[0]
    which = action.get("action_id")
    if which not in (CONFIRM, DECLINE):
        return  # Open is a link: Slack tells us of it, there is nothing to do
    user_id = _get(payload, "user", "id")
    channel = _get(payload, "channel", "id") or _get(payload, "container", "channel_id")
    ts = _get(payload, "container", "message_ts") or _get(payload, "message", "ts")
    if not all(isinstance(v, str) and v for v in (user_id, channel, ts)):
        return

    def tell(text: str) -> None:
        runtime.slack.tell(app, channel, user_id, text)

    link = runtime.store.slack.link_of_user(app.team_id, user_id)
    if link is None:
        return tell(NOT_LINKED)
    if link.workspace_id != app.workspace_id:
        log.warning("a Slack click from a user linked in workspace %s reached workspace %s's app; refused",
                    link.workspace_id, app.workspace_id)
        return tell(OTHER_WORKSPACE)
    try:
        workspace, person = runtime.store.workspaces.get_member(app.workspace_id, link.person_id)
    except NotFound:  # the member was removed: their link acts for no one
        return tell(NOT_LINKED)
    card_id = action.get("value")
    if not isinstance(card_id, str) or not CARD_ID.fullmatch(card_id):
        return tell(NOT_FOUND)
    desk = runtime.desk
    try:
        card = desk.cards.get_card(app.workspace_id, card_id, desk.now())
    except NotFound:
        return tell(NOT_FOUND)
    if card.person_id != person.id:
        return tell(NOT_YOURS)
    who = person.name or person.email
    if card.state is CardState.PENDING and desk.card_needs_passkey(card, workspace):
        return tell(NEEDS_PASSKEY)
    try:
        if which == CONFIRM:
            card = clicks.confirm_click(desk, app.workspace_id, person, card_id, workspace=workspace, card=card,
                                        channel=CHANNEL)
        else:
            card = clicks.decline_click(desk, app.workspace_id, person, card_id, None, card=card, channel=CHANNEL)
    except Refusal as refusal:
        tell(refusal.message)
        card = desk.cards.get_card(app.workspace_id, card_id, desk.now())
        if card.state is not CardState.PENDING:  # answered elsewhere (or just now): the message says so
            runtime.slack.show_answered(app, channel, ts, card, person, workspace, outcome_words(card, None))
        return None
    except Unavailable as exc:
        return tell(exc.message)
    except NotFound:
        return tell(NOT_FOUND)
    runtime.slack.show_answered(app, channel, ts, card, person, workspace, outcome_words(card, who))
    return None


# -- the slash command ------------------------------------------------------------------------------


def _command(runtime: Runtime, app: SlackApp, form: dict[str, str]) -> str:
    user_id = form.get("user_id") or ""
    words = (form.get("text") or "").split()
    verb = words[0].lower() if words else ""
    if verb == "unlink" and len(words) == 1:
        link = runtime.store.slack.link_of_user(app.team_id, user_id)
        if link is None or link.workspace_id != app.workspace_id:
            return "Your Slack user is not linked to anyone in this countersign workspace."
        runtime.store.slack.unlink(link.workspace_id, link.person_id)
        return "Unlinked: cards no longer come to you here, and buttons here no longer answer for you."
    if verb != "link" or len(words) != 2:
        return HELP
    now = runtime.desk.now()
    if not runtime.store.limits.hit_rate_limit(f"slack-link:{app.team_id}:{user_id}", now, TRIES_WINDOW, TRIES):
        return "Too many codes tried; wait ten minutes, then try again with a new code from Settings."
    code = runtime.store.slack.take_link_code(link_code_hash(words[1]), now)
    if code is None:
        return "That code is unknown, used or expired. Get a new one in countersign's Settings."
    if code.workspace_id != app.workspace_id:
        return ("That code is for another countersign workspace than the one this Slack workspace is connected to. "
                "Nothing was linked.")
    try:
        workspace, person = runtime.store.workspaces.get_member(code.workspace_id, code.person_id)
        runtime.store.slack.link(SlackLink(code.workspace_id, code.person_id, app.team_id, user_id, now,
                                           user_name=slack_user_name(form.get("user_name"))))
    except NotFound:
        return "That code is unknown, used or expired. Get a new one in countersign's Settings."
    except Conflict as exc:
        return f"{exc} Nothing was linked."
    except BadInput:
        return "Slack did not say who you are; nothing was linked."
    return (f"Linked: cards for {person.email} in {workspace.name} now reach you here, and their buttons answer "
            "for you.")
