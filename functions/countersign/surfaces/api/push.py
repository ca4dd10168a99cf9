"""Settings → Notifications, push (docs/channels.md, "Push to your phone"): the server's
application server key, the signed-in person's devices, turning one on and removing one, and the
page saying its device is signed in (``renew``): a device is pushed a card's contents only while
the page session of its browser lasts (``PushSubscription.signed_in``).

A device is the subscription its browser made (``PushSubscription.toJSON()``): an https endpoint of
its push service and the two keys messages are encrypted for. It is named from the request's
User-Agent ("Chrome on Android"); nothing else of it is kept. Plain http is refused unless
``COUNTERSIGN_UPSTREAM_PRIVATE`` allows a loopback endpoint (tests).
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from ...core.times import iso
from ...notify.push import GONE, SENT
from ...notify.quiet_hours import quiet_until
from ...store.errors import BadInput
from ...store.limits import LimitStore
from ...store.push_subscriptions import PushSubscription, endpoint_problem, subscription_id
from ...store.workspaces import Person
from .errors import ApiError, not_found
from .schemas import Strict, errors
from .send_tests import take_test_slot
from .session import Acting, SignedIn, runtime_of
from .slots import take_slot

router = APIRouter(tags=["push"])

KEY_PATTERN = r"^[A-Za-z0-9_-]{1,200}={0,2}$"
SUBSCRIPTION_ID = re.compile(r"^ps_[0-9a-f]{24}$")
NOT_YOUR_DEVICE = "This device gets none of your notifications: turn them on in Settings, Notifications."
# A page says its device is signed in once per load; one renewal a session is all it needs (the
# session's end is fixed at sign-in). More than this in a window from one session is a reload loop.
RENEW_WINDOW = 15 * 60
RENEW_LIMIT = 10


class PushKeys(Strict):
    p256dh: str = Field(pattern=KEY_PATTERN, description="The browser's P-256 public key (base64url)")
    auth: str = Field(pattern=KEY_PATTERN, description="The browser's auth secret (base64url)")


class PushSubscriptionBody(Strict):
    endpoint: str = Field(max_length=2048, description="The push service's URL for this device (https)")
    expirationTime: int | float | None = Field(default=None, description="As the browser gives it; not kept")
    keys: PushKeys


class PushDeviceView(BaseModel):
    id: str
    device: str
    createdAt: str
    lastUsedAt: str | None


class TestPushView(BaseModel):
    outcome: str = Field(description="sent")
    message: str = Field(description="What happened, in a sentence for the person")


class PushView(BaseModel):
    applicationServerKey: str
    devices: list[PushDeviceView]


def device_view(s: PushSubscription) -> dict:
    return {"id": s.id, "device": s.device, "createdAt": iso(s.created_at),
            "lastUsedAt": None if s.last_used_at is None else iso(s.last_used_at)}


BROWSERS = (("Edg/", "Edge"), ("SamsungBrowser/", "Samsung Internet"), ("Firefox/", "Firefox"),
            ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"), ("OPR/", "Opera"), ("Chrome/", "Chrome"),
            ("Safari/", "Safari"))
SYSTEMS = (("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"), ("CrOS", "ChromeOS"),
           ("Windows", "Windows"), ("Mac OS X", "macOS"), ("Macintosh", "macOS"), ("Linux", "Linux"))


def device_name(user_agent: str | None) -> str:
    """What Settings calls a device: its browser and system, from the User-Agent ("A browser" if unknown)."""
    agent = user_agent or ""
    browser = next((name for token, name in BROWSERS if token in agent), None)
    system = next((name for token, name in SYSTEMS if token in agent), None)
    if browser and system:
        return f"{browser} on {system}"
    return browser or (f"A browser on {system}" if system else "A browser")


@router.get("/settings/push", response_model=PushView, responses=errors(401))
def get_push(request: Request, signed: SignedIn) -> dict:
    """The key the page subscribes with, and the signed-in person's devices that get notifications."""
    runtime = runtime_of(request)
    devices = runtime.store.push_subscriptions.list_subscriptions(signed.workspace.id, signed.person.id)
    return {"applicationServerKey": runtime.push.application_server_key(),
            "devices": [device_view(s) for s in devices]}


@router.post("/settings/push/subscriptions", status_code=201, response_model=PushDeviceView,
             responses=errors(401, 403, 422))
def subscribe(request: Request, signed: Acting, body: PushSubscriptionBody) -> dict:
    """Turn notifications on for this device (the same endpoint again renews it). A card filed for
    you then shows on it: its title and who asked; tapping it opens the card."""
    runtime = runtime_of(request)
    problem = endpoint_problem(body.endpoint, allow_http=runtime.desk.settings.upstream_private)
    if problem is not None:
        raise BadInput("endpoint", problem)
    subscription = PushSubscription(
        id=subscription_id(body.endpoint), workspace_id=signed.workspace.id, person_id=signed.person.id,
        endpoint=body.endpoint, p256dh=body.keys.p256dh.rstrip("="), auth=body.keys.auth.rstrip("="),
        device=device_name(request.headers.get("user-agent")), created_at=runtime.desk.now(),
        signed_in_until=signed.session.expires_at)
    return device_view(runtime.store.push_subscriptions.add_subscription(subscription))


class RenewBody(Strict):
    endpoint: str = Field(max_length=2048, description="This device's push subscription (its endpoint)")


def take_renew_slot(limits: LimitStore, session_hash: str, now: int) -> None:
    """Count one renewal by this session, or refuse it (429 with ``Retry-After``, saying nothing was
    renewed and when to try again): at most :data:`RENEW_LIMIT` per :data:`RENEW_WINDOW`."""
    take_slot(limits, f"push-renew:{session_hash}", now, RENEW_WINDOW, RENEW_LIMIT,
              f"Nothing was renewed: a signed-in page may say its device is signed in {RENEW_LIMIT} times every "
              "15 minutes.")


@router.post("/settings/push/renew", status_code=204, response_class=Response,
             responses=errors(401, 403, 404, 422, 429))
def renew(request: Request, signed: Acting, body: RenewBody) -> Response:
    """This device is signed in (the page calls it after signing in, and when it loads signed in
    with notifications on): its notifications show the card again until this session ends. Only
    for one of the signed-in person's own devices (404 otherwise, nothing written); at most
    :data:`RENEW_LIMIT` a session per 15 minutes (429 past it, the device neither read nor changed:
    the page says nothing of it)."""
    runtime = runtime_of(request)
    take_renew_slot(runtime.store.limits, signed.session.session_hash, runtime.desk.now())
    wanted = subscription_id(body.endpoint)
    device = next((s for s in runtime.store.push_subscriptions.list_subscriptions(signed.workspace.id,
                                                                                signed.person.id)
                   if s.id == wanted), None)
    until = signed.session.expires_at
    if device is None or (device.signed_in_until != until and not runtime.store.push_subscriptions.renew_subscription(
            signed.workspace.id, signed.person.id, device.id, until)):  # (or removed meanwhile)
        raise ApiError(404, "not_found", NOT_YOUR_DEVICE)
    return Response(status_code=204)


@router.delete("/settings/push/subscriptions/{subscription_id}", status_code=204, response_class=Response,
               responses=errors(401, 403, 404))
def unsubscribe(subscription_id: str, request: Request, signed: Acting) -> Response:
    """Stop notifications on that device (one of the signed-in person's own)."""
    removed = SUBSCRIPTION_ID.fullmatch(subscription_id) is not None and \
        runtime_of(request).store.push_subscriptions.remove_subscription(signed.workspace.id, signed.person.id,
                                                                         subscription_id)
    if not removed:
        raise not_found("device")
    return Response(status_code=204)


def push_status(person: Person, now: int) -> list[str]:
    """What a test notification says of the person's pushes: on or off, quiet hours."""
    if person.reached_by("push"):
        lines = ["Push is on for you: when an agent asks you to confirm something, a notification like this one "
                 "shows the request."]
    else:
        lines = ["Push is off for you: no notification comes when an agent asks. Turn it on in Settings, "
                 "Notifications."]
    quiet = person.quiet_hours
    if quiet is not None:
        line = f"Quiet hours: {quiet.start} to {quiet.end} ({quiet.zone}); a request made then is shown when they end."
        if quiet_until(quiet, now) is not None:
            line += " They run now; this test is sent anyway."
        lines.append(line)
    return lines


@router.post("/settings/push/subscriptions/{subscription_id}/test", response_model=TestPushView,
             responses=errors(401, 403, 404, 409, 429, 502))
def send_test_push(subscription_id: str, request: Request, signed: Acting) -> dict:
    """Send a test notification to that device (one of the signed-in person's own) now, through the
    path a card's push takes (quiet hours do not hold it), at most :data:`.send_tests.TEST_LIMIT` per 15 minutes."""
    runtime = runtime_of(request)
    now = runtime.desk.now()
    device = None if SUBSCRIPTION_ID.fullmatch(subscription_id) is None else next(
        (s for s in runtime.store.push_subscriptions.list_subscriptions(signed.workspace.id, signed.person.id)
         if s.id == subscription_id), None)
    if device is None:
        raise not_found("device")
    take_test_slot(runtime.store.limits, "push", signed.person.id, now, "test notifications")
    outcome = runtime.push.send_test(device, push_status(signed.person, now))
    if outcome == GONE:
        raise ApiError(409, "device_gone", "Nothing was shown: the device's push service says its subscription no "
                       "longer exists, so the device was removed. Turn notifications on again on it.")
    if outcome != SENT:
        raise ApiError(502, "send_failed", "Nothing was shown: the device's push service did not take the "
                       "notification. Try again in a while; if it keeps failing, remove the device and turn "
                       "notifications on again on it.")
    return {"outcome": "sent", "message": f"A test notification is on its way to {device.device}."}
