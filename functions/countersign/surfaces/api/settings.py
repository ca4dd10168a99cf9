"""The settings page: the person's own email settings (*Email me when an agent asks*, quiet
hours, a test email), and (owners and admins) the workspace's settings and who its members are."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request

from ...core.times import iso
from ...identity.sessions import Signed
from ...notify import SendError
from ...notify.message import SETTING_NAME, compose_test
from ...notify.quiet_hours import quiet_until
from ...settings import Settings
from ...store.workspaces import CHANNELS, DEFAULT_WORKSPACE_SETTINGS, MANAGERS, SWITCHABLE_CHANNELS, Person, QuietHours
from .errors import ApiError
from .schemas import ChannelsBody, MeChanges, MemberList, SettingsView, TestEmailView, WorkspaceChanges, errors
from .send_tests import take_test_slot
from .session import NOTICE_END, NOTICES, Acting, SignedIn, runtime_of

log = logging.getLogger("countersign.api")

router = APIRouter(tags=["settings"])

EDITORS = MANAGERS


def settings_view(signed: Signed, settings: Settings, now: int) -> dict:
    can_edit = signed.person.role in EDITORS
    workspace = {name: bool(signed.workspace.setting(name)) for name in DEFAULT_WORKSPACE_SETTINGS}
    quiet = signed.person.quiet_hours
    ends = quiet_until(quiet, now)
    return {
        "me": {
            "agent_requests_email": signed.person.agent_requests_email,
            "quiet_hours": None if quiet is None else quiet.as_dict(),
            "quiet_until": None if ends is None else iso(ends),
            "email_interval": settings.email_interval,
            "channels": {channel: signed.person.reached_by(channel) for channel in CHANNELS},
        },
        "workspace": workspace if can_edit else None,
        "canEditWorkspace": can_edit,
    }


@router.get("/settings", response_model=SettingsView, responses=errors(401))
def get_settings(request: Request, signed: SignedIn) -> dict:
    runtime = runtime_of(request)
    return settings_view(signed, runtime.desk.settings, runtime.desk.now())


@router.patch("/settings/me", response_model=SettingsView, responses=errors(401, 403, 422))
def patch_me(changes: MeChanges, request: Request, signed: Acting) -> dict:
    """Change the signed-in person's notification settings: *Email me when an agent asks* on or
    off, their quiet hours (a start, an end and an IANA time zone; null: none), and which channels
    tell them a card waits (``channels``: email, slack, push). What is left out stays."""
    runtime = runtime_of(request)
    given: dict = {}
    if "agent_requests_email" in changes.model_fields_set:
        if changes.agent_requests_email is None:
            raise ApiError(422, "invalid", "agent_requests_email: must be true or false.", field="agent_requests_email")
        given["agent_requests_email"] = changes.agent_requests_email
    if "quiet_hours" in changes.model_fields_set:
        body = changes.quiet_hours
        given["quiet_hours"] = None if body is None else QuietHours(start=body.start, end=body.end, zone=body.zone)
    if "channels" in changes.model_fields_set:
        given.update(_channel_changes(changes.channels, signed.person, given.get("agent_requests_email")))
    if not given:
        raise ApiError(422, "invalid", "body: name at least one of agent_requests_email, quiet_hours, channels.",
                       field="body")
    person = runtime.store.workspaces.update_person(signed.workspace.id, signed.person.id, **given)
    return settings_view(Signed(signed.session, person, signed.workspace), runtime.desk.settings, runtime.desk.now())


def _channel_changes(body: ChannelsBody | None, person: Person, email: bool | None) -> dict:
    """``channels`` as the person's stored changes: email is agent_requests_email, the others the
    channels turned off."""
    chosen = {} if body is None else {name: getattr(body, name) for name in body.model_fields_set}
    if body is None or not chosen or any(v is None for v in chosen.values()):
        raise ApiError(422, "invalid", "channels: name one or more of email, slack, push, each true or false.",
                       field="channels")
    out: dict = {}
    if "email" in chosen:
        if email is not None and email != chosen["email"]:
            raise ApiError(422, "invalid", "channels.email: says otherwise than agent_requests_email.",
                           field="channels.email")
        out["agent_requests_email"] = chosen["email"]
    if chosen.keys() & set(SWITCHABLE_CHANNELS):
        off = [c for c in SWITCHABLE_CHANNELS if not chosen.get(c, c not in person.channels_off)]
        out["channels_off"] = tuple(off)
    return out


def _interval_words(seconds: int) -> str:
    if seconds % 60 == 0:
        return "1 minute" if seconds == 60 else f"{seconds // 60} minutes"
    return f"{seconds} seconds"


def email_status(person: Person, settings: Settings, now: int) -> list[str]:
    """What the test email says of the person's card emails: on or off, how often, quiet hours."""
    if person.agent_requests_email:
        if settings.email_interval > 0:
            often = (f"at most one every {_interval_words(settings.email_interval)}; requests that arrive in "
                     "between are listed in the next one")
        else:
            often = "one for each request"
        lines = [f'"{SETTING_NAME}" is on: when an agent asks you to confirm something, an email comes here ({often}).']
    else:
        lines = [f'"{SETTING_NAME}" is off: no email comes when an agent asks. Turn it on in Settings to get them.']
    quiet = person.quiet_hours
    if quiet is not None:
        line = f"Quiet hours: {quiet.start} to {quiet.end} ({quiet.zone}). Card emails wait until they end."
        if quiet_until(quiet, now) is not None:
            line += " They run now; a test email goes out anyway."
        lines.append(line)
    return lines


@router.post("/settings/me/test-email", response_model=TestEmailView, responses=errors(401, 403, 429, 502))
def send_test_email(request: Request, signed: Acting) -> dict:
    """Send the signed-in person a test email now (quiet hours do not hold it), at most
    :data:`.send_tests.TEST_LIMIT` per 15 minutes. Says what happened: sent, or not sent because the address no
    longer gets email (a bounce or a spam report); a refusal says why nothing was sent."""
    runtime = runtime_of(request)
    now, settings, person = runtime.desk.now(), runtime.desk.settings, signed.person
    take_test_slot(runtime.store.limits, "email", person.id, now, "test emails")
    suppression = runtime.store.suppressions.address_suppression(person.email)
    if suppression is not None:
        stopped = NOTICES.get(suppression.reason, NOTICES["bounce"]).format(email=person.email,
                                                                             date=iso(suppression.at)[:10])
        return {"outcome": "suppressed", "to": person.email,
                "message": f"Nothing was sent. {stopped}{NOTICE_END}"}
    sender = request.app.state.sender
    status = email_status(person, settings, now)
    email = compose_test(to=person.email, status=status, link=settings.pending_url, name=person.name,
                         from_address=sender.from_address)
    try:
        sender.send(email)
    except SendError as exc:
        log.warning("the test email to %s failed: %s", person.email, exc)
        raise ApiError(502, "send_failed", "Nothing was sent: the mail service did not take the email. Try again "
                                           "in a few minutes; if it keeps failing, "
                                           "tell whoever runs countersign.") from None
    return {"outcome": "sent", "to": person.email,
            "message": f"A test email is on its way to {person.email}. " + " ".join(status)}


@router.patch("/settings/workspace", response_model=SettingsView, responses=errors(401, 403, 422))
def patch_workspace(changes: WorkspaceChanges, request: Request, signed: Acting) -> dict:
    """Change workspace settings (owners and admins only)."""
    if signed.person.role not in EDITORS:
        raise ApiError(403, "forbidden", "Only the workspace's owners and admins can change its settings.")
    given = {name: getattr(changes, name) for name in changes.model_fields_set}
    if not given:
        raise ApiError(422, "invalid", f"body: name at least one of {', '.join(DEFAULT_WORKSPACE_SETTINGS)}.",
                       field="body")
    runtime = runtime_of(request)
    workspace = runtime.store.workspaces.update_workspace_settings(signed.workspace.id, given)
    return settings_view(Signed(signed.session, signed.person, workspace), runtime.desk.settings, runtime.desk.now())


@router.get("/settings/members", response_model=MemberList, responses=errors(401, 403))
def get_members(request: Request, signed: SignedIn) -> dict:
    """The workspace's members and their roles (owners and admins only). Roles change through the
    held ``grant_role`` and ``revoke_role`` tools; the operator adds and removes members."""
    if signed.person.role not in EDITORS:
        raise ApiError(403, "forbidden", "Only the workspace's owners and admins can see its members.")
    return {"members": [{"email": p.email, "name": p.name, "role": p.role, "addedAt": iso(p.created_at),
                         "you": p.id == signed.person.id}
                        for p in runtime_of(request).store.workspaces.list_persons(signed.workspace.id)]}
