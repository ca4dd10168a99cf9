"""Web Push: a filed card shown as a notification on each device its person turned them on for.

docs/channels.md ("Push to your phone") says what it can and cannot answer, and why.

* **Keys.** The server's VAPID key (RFC 8292) is a P-256 key derived from one secret, kept like
  the other keys (:func:`countersign.runtime.vapid_secret`: ``COUNTERSIGN_VAPID_KEY`` or a
  Secrets Manager ARN on AWS, else ``keys/vapid.key`` in the data folder, made on first use).
  :func:`application_server_key` is its public half, which the page subscribes with.
* **What is sent.** A small JSON message (:func:`message`): the card's id, its title, who asked,
  where the page shows it, and whether a click may answer it without a passkey (the workspace's
  passkey policy, :meth:`~countersign.gate.desk.CardDesk.card_needs_passkey`, the rule Slack's
  Confirm button follows), and then the words of its Confirm and Decline buttons. Never a
  ticket, code, token or session. Encrypted for each subscription per RFC 8291 (``aes128gcm``,
  :func:`encrypt`, with ``http_ece``) and signed with a VAPID JWT (py-vapid) whose ``aud`` is the push
  service's origin.
* **Where it goes.** The push service's host is resolved and refused if any address is private
  or reserved, plain http refused (the webhooks' rule, :func:`~countersign.notify.webhooks.target`;
  ``COUNTERSIGN_UPSTREAM_PRIVATE`` allows both, for tests), and the POST made to exactly the
  address checked, no redirect followed.
* **Answers.** 201 (any 2xx): the subscription's last use is recorded. 404 or 410: the push service
  says the subscription is gone, and it is dropped. Anything else is counted ``push_failed`` and
  logged; the card's email and the page still carry it, so nothing is retried.
* **A device signed out.** Each device's record says until when its browser's page session lasts
  (:meth:`~countersign.store.push_subscriptions.PushSubscription.signed_in`: set when notifications
  are turned on, renewed each time the page loads signed in there). A device past it is pushed
  only that a request waits (:func:`sign_in_message`): no title, no who asked, no buttons, and a
  tap opens the page, which asks to sign in. A lock screen left signed out shows nothing of the
  card, and no button is offered that the API would refuse without a session. The message is
  chosen per device, for a card's push and for the one after quiet hours alike.
* **Each person's choice.** Nothing is pushed to a person who turned push off in Settings
  (``push_off``). A card filed while their quiet hours run is held (``push_quiet``), as for Slack,
  and when they end the sweep pushes once for the cards held that still wait
  (:meth:`PushNotifier.after_quiet`): the card's own push when one waits, else one that says how
  many wait (:func:`waiting_message`, naming the first few) and opens the list. At most one push
  per card; none for a card answered meanwhile.
* **Rate limit.** At most :data:`LIMIT` cards per person per :data:`WINDOW` seconds are pushed
  (counted in the store, so every instance shares it); past it ``push_rate_limited``.

Locally the filing call hands the card over (``notifier(card)``, beside its email) and the push is
sent on a worker thread. On AWS the stream notifier calls :meth:`PushNotifier.send_card` for each
card filed. A notifier never raises.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..core.card_states import CardState
from ..store import Store
from ..store.cards import Card
from ..store.outbox import Notification
from ..store.push_subscriptions import PushSubscription, endpoint_problem
from ..store.workspaces import Person, Workspace
from . import outbound
from .card_channel import CardChannel, PasskeyRule, SettingsSource
from .webhooks import Resolver, Unreachable, resolve, target

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePrivateKey

log = logging.getLogger("countersign.notify.push")

SENT = "push_sent"
GONE = "push_gone"  # the push service said the subscription no longer exists: dropped
FAILED = "push_failed"
RATE_LIMITED = "push_rate_limited"
OFF = "push_off"  # its person turned push off in Settings (Person.reached_by)
QUIET = "push_quiet"  # its person's quiet hours ran: not pushed (the card waits on the page)
EVENTS = (SENT, GONE, FAILED, RATE_LIMITED, OFF, QUIET)

WINDOW = 60  # seconds
LIMIT = 10  # cards pushed to one person per window
TTL = 3600  # how long a push service keeps a message for a device that is offline
TIMEOUT = 10.0
WAITING_TITLES = 3  # titles the push after quiet hours names (a message stays far below 4 KiB)
MAX_TITLE = 200  # characters of the card's title a notification carries (a message stays far below 4 KiB)
JWT_LIFETIME = 12 * 3600

_CURVE_ORDER = int("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551", 16)


# -- the server's key -------------------------------------------------------------------------------


def vapid_private_key(secret: str) -> EllipticCurvePrivateKey:
    """The P-256 key derived from ``secret`` (as the signing key's seed is its SHA-256): a scalar
    in [1, n-1], the same on every instance that holds the secret."""
    # cryptography when a key is first needed: the MCP function builds this notifier and never pushes
    from cryptography.hazmat.primitives.asymmetric import ec

    digest = hashlib.sha256(b"countersign-vapid\x00" + secret.encode("utf-8")).digest()
    return ec.derive_private_key(int.from_bytes(digest, "big") % (_CURVE_ORDER - 1) + 1, ec.SECP256R1())


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def application_server_key(secret: str) -> str:
    """The public key the page subscribes with: base64url of the uncompressed point (65 bytes)."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat  # (see vapid_private_key)

    point = vapid_private_key(secret).public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return b64url(point)


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encrypt(data: bytes, p256dh: str, auth: str) -> bytes:
    """``data`` encrypted for one subscription (RFC 8291, ``aes128gcm``): ECDH between a key made for
    this message alone and the browser's ``p256dh`` key, with its ``auth`` secret; the body's header
    (RFC 8188) carries the salt and the message key's public half, as a push service expects."""
    # http-ece and cryptography when a push is sent (see vapid_private_key)
    import http_ece
    from cryptography.hazmat.primitives.asymmetric import ec

    message_key = ec.generate_private_key(ec.SECP256R1())
    return http_ece.encrypt(data, private_key=message_key, dh=unb64url(p256dh), auth_secret=unb64url(auth),
                            version="aes128gcm")


def vapid_subject(public_url: str) -> str:
    """Who runs this server, as the JWT's ``sub`` names them: its https origin, or a mailto."""
    parts = urlsplit(public_url)
    if parts.scheme == "https" and parts.hostname:
        return f"https://{parts.hostname}"
    return "mailto:countersign@localhost"


# -- the message --------------------------------------------------------------------------------------


# The words of a notification's two buttons. The message carries them (the service worker is a
# classic script and cannot import the page's strings module), so sw.js holds no English.
ACTION_LABELS = {"confirm": "Confirm", "decline": "Decline"}


def message(card: Card, who: str, url: str, answerable: bool) -> str:
    """The JSON a card's push carries (the service worker shows it): with its buttons' words
    (``labels``) only when a click may answer it."""
    body: dict = {"card": card.id, "title": card.title[:MAX_TITLE], "body": who[:MAX_TITLE], "url": url,
                  "answerable": answerable}
    if answerable:
        body["labels"] = ACTION_LABELS
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def waiting_message(titles: list[str], url: str) -> str:
    """The JSON of the one push that tells of several cards held for quiet hours: how many wait,
    the first few titles, and the waiting list's path (the service worker opens it)."""
    shown = [title[:MAX_TITLE] for title in titles[:WAITING_TITLES]]
    if len(titles) > WAITING_TITLES:
        shown.append(f"and {len(titles) - WAITING_TITLES} more")
    body = {"waiting": len(titles), "title": f"{len(titles)} requests are waiting for your answer",
            "body": "\n".join(shown), "url": url}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


SIGN_IN_TITLE = "A request is waiting for you"
SIGN_IN_BODY = "Sign in on this device to see it and answer."
SIGN_IN_BODY_MANY = "Sign in on this device to see them and answer."


def sign_in_message(url: str, waiting: int = 1) -> str:
    """The JSON of a push to a device whose page session ended: that ``waiting`` requests wait and
    the page to open (its waiting list, which asks to sign in first) — nothing of any card: no
    id, title, who asked or buttons."""
    one = waiting <= 1
    body = {"signIn": True, "title": SIGN_IN_TITLE if one else f"{waiting} requests are waiting for you",
            "body": SIGN_IN_BODY if one else SIGN_IN_BODY_MANY, "url": url}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


TEST_TITLE = "Test notification from countersign"
SETTINGS_PATH = "/settings/notifications"


def test_message(lines: list[str], url: str) -> str:
    """The JSON of a test notification: its title, what it says of the person's pushes, and where
    a tap opens (Settings → Notifications)."""
    body = {"test": True, "title": TEST_TITLE, "body": " ".join(lines)[:4 * MAX_TITLE], "url": url}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


class PushNotifier(CardChannel):
    thread_name = "push"
    channel = "push"

    def __init__(self, store: Store, vapid_secret: Callable[[], str], settings: SettingsSource, *,
                 needs_passkey: PasskeyRule | None = None, clock: Callable[[], float] = time.time,
                 on_event: Callable[[str], None] | None = None, background: bool = False,
                 resolver: Resolver = resolve, timeout: float = TIMEOUT):
        super().__init__(store, settings, needs_passkey=needs_passkey, clock=clock, on_event=on_event,
                         background=background)
        self.vapid_secret = vapid_secret
        self.resolver = resolver
        self.timeout = timeout

    def application_server_key(self) -> str:
        return application_server_key(self.vapid_secret())

    # -- sending ------------------------------------------------------------------------------------

    def send_card(self, workspace_id: str, card_id: str) -> int:
        """Push the card to its person's devices if it still waits; how many took it. Never raises."""
        try:
            return self._send_card(workspace_id, card_id)
        except Exception:
            log.exception("pushing card %s failed", card_id)
            self._event(FAILED)
            return 0

    deliver = send_card

    def might_reach(self, card: Card) -> bool:
        return bool(self.store.push_subscriptions.list_subscriptions(card.workspace_id, card.person_id))

    def _send_card(self, workspace_id: str, card_id: str) -> int:
        now = int(self.clock())
        card = self.store.cards.get_card(workspace_id, card_id, now)
        if card.state is not CardState.PENDING:
            return 0
        reach = self._reach(workspace_id, card.person_id, [card.id], now)
        if reach is None:
            return 0
        workspace, person, subscriptions = reach
        answerable = self.needs_passkey is not None and not self.needs_passkey(card, workspace)
        body = message(card, self.asked_by(card, person), self._page_path(card.id), answerable)
        return self._send_each(subscriptions, body, 1, now)

    def _send_each(self, subscriptions: list[PushSubscription], body: str, waiting: int, now: int) -> int:
        """``body`` to each device signed in at ``now``; to the others only that ``waiting``
        requests wait (:func:`sign_in_message`). How many took it."""
        signed_out = sign_in_message(self._path_of(self.settings.pending_url), waiting)
        return sum(self.send(s, body if s.signed_in(now) else signed_out) for s in subscriptions)

    def _reach(self, workspace_id: str, person_id: str, card_ids: list[str],
               now: int) -> tuple[Workspace, Person, list[PushSubscription]] | None:
        """The person's workspace, the person and their devices, if a push about ``card_ids`` may
        go to them now: they have a device, push is on, their quiet hours do not run (else the
        cards are held until they end) and the rate limit allows one more."""
        subscriptions = self.store.push_subscriptions.list_subscriptions(workspace_id, person_id)
        if not subscriptions:
            return None
        workspace, person = self.store.workspaces.get_member(workspace_id, person_id)
        if not person.reached_by("push"):
            self._event(OFF)
            return None
        if self.held_for_quiet_hours(person, card_ids, now):
            self._event(QUIET)
            return None
        if not self.store.limits.hit_rate_limit(f"push-{person_id}", now, WINDOW, LIMIT):
            self._event(RATE_LIMITED)
            return None
        return workspace, person, subscriptions

    # -- when quiet hours end -----------------------------------------------------------------------

    def after_quiet(self, wait: Notification, now: int) -> int:
        """One push for the cards held for quiet hours that still wait: the card's own when one
        does, else one that says how many wait and opens the list. How many devices took it."""
        try:
            cards = self.still_waiting(wait, now)
            if len(cards) <= 1:
                return self._send_card(wait.workspace_id, cards[0].id) if cards else 0
            reach = self._reach(wait.workspace_id, wait.person_id, [c.id for c in cards], now)
            if reach is None:
                return 0
            body = waiting_message([c.title for c in cards], self._path_of(self.settings.pending_url))
            return self._send_each(reach[2], body, len(cards), now)
        except Exception:
            log.exception("pushing the cards held for quiet hours (%s) failed", wait.card_id)
            self._event(FAILED)
            return 0

    def _page_path(self, card_id: str) -> str:
        """Where the page shows the card, as a path of the page's own origin (the service worker opens it)."""
        return self._path_of(self.settings.card_url(card_id))

    @staticmethod
    def _path_of(page_url: str) -> str:
        url = urlsplit(page_url)
        return f"{url.path}?{url.query}" if url.query else url.path

    def send(self, subscription: PushSubscription, body: str) -> int:
        """One encrypted, signed POST to the subscription's push service: 1 if it took it."""
        return int(self.push_to(subscription, body) == SENT)

    def push_to(self, subscription: PushSubscription, body: str) -> str:
        """One encrypted, signed POST to the subscription's push service; the outcome: :data:`SENT`,
        :data:`GONE` (the subscription was dropped) or :data:`FAILED`."""
        status, error = self._post(subscription, body.encode("utf-8"))
        now = int(self.clock())
        if status is not None and 200 <= status < 300:
            self.store.push_subscriptions.touch_subscription(subscription.workspace_id, subscription.person_id,
                                                             subscription.id, now)
            return self._event(SENT)
        if status in (404, 410):
            self.store.push_subscriptions.remove_subscription(subscription.workspace_id, subscription.person_id,
                                                              subscription.id)
            log.info("push subscription %s is gone (HTTP %s): dropped", subscription.id, status)
            return self._event(GONE)
        log.warning("a push to subscription %s failed: %s", subscription.id, error)
        return self._event(FAILED)

    # -- the test notification from Settings ----------------------------------------------------------

    def send_test(self, subscription: PushSubscription, lines: list[str]) -> str:
        """A test notification to one device now, through the path a card's push takes (quiet
        hours, the per-person choice and the card rate limit do not hold it); the outcome, as
        :meth:`push_to`'s."""
        return self.push_to(subscription, test_message(lines, self._path_of(self.settings.public_url +
                                                                              SETTINGS_PATH)))

    def _post(self, subscription: PushSubscription, data: bytes) -> tuple[int | None, str | None]:
        # py-vapid and httpx2 when a push is sent, never at a function's cold start
        import httpx2
        from py_vapid import Vapid02

        settings = self.settings
        problem = endpoint_problem(subscription.endpoint, allow_http=settings.upstream_private)
        if problem is not None:
            return None, f"the endpoint {problem}"
        try:
            where = target(subscription.endpoint, settings.upstream_private, self.resolver)
        except Unreachable as exc:
            return None, str(exc)
        encrypted = encrypt(data, subscription.p256dh, subscription.auth)
        parts = urlsplit(subscription.endpoint)
        claims = {"sub": vapid_subject(settings.public_url), "aud": f"{parts.scheme}://{parts.netloc}",
                  "exp": int(time.time()) + JWT_LIFETIME}  # the push service's clock is the real one
        headers = {
            **Vapid02(vapid_private_key(self.vapid_secret())).sign(claims),
            "Host": where.host,
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
            "TTL": str(TTL),
            "Urgency": "high",
        }
        extensions = {"sni_hostname": where.sni} if where.sni else {}
        try:
            with outbound.client(self.timeout) as client:
                response = client.post(where.url, content=encrypted, headers=headers, extensions=extensions)
        except httpx2.TimeoutException:
            return None, f"no answer within {self.timeout:g} s"
        except httpx2.HTTPError as exc:
            return None, f"could not connect ({type(exc).__name__})"
        return response.status_code, None if 200 <= response.status_code < 300 else f"HTTP {response.status_code}"
