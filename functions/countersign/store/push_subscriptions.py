"""The push_subscriptions role: the devices a person turned notifications on for (Web Push).

:class:`PushSubscriptionStore` is the interface both stores implement; :class:`PushSubscription`
its record; :func:`check_subscription` the check both stores make before writing (bad input
raises :class:`~.errors.BadInput` and writes nothing). The rules every role keeps are stated in
:mod:`.workspaces`.

* A subscription is the browser's push endpoint (a URL of its push service) with the two keys its
  messages are encrypted for (RFC 8291: ``p256dh``, the browser's P-256 public key, and ``auth``,
  16 random bytes). Its id is derived from the endpoint, so one endpoint is one subscription.
* An endpoint belongs to at most one person: a browser that a second person turns notifications
  on in moves to them, so the first person's cards no longer show on a device they left.
* The store accepts an ``https`` endpoint, or ``http`` to a loopback address (tests only: the API
  and the sender refuse plain http unless ``COUNTERSIGN_UPSTREAM_PRIVATE`` allows it).
* ``signed_in_until``: when the page session of the browser that added it ends, as that browser
  last said (turning notifications on, then each time the page loads signed in:
  :meth:`PushSubscriptionStore.renew_subscription`). Past it the device is pushed only that a
  request waits, never what it is (:meth:`PushSubscription.signed_in`).
"""

from __future__ import annotations

import abc
import base64
import binascii
import hashlib
from dataclasses import dataclass
from urllib.parse import urlsplit

from .errors import BadInput
from .sessions import SESSION_LIFETIME

MAX_SUBSCRIPTIONS = 10  # per person: more devices than anyone carries
MAX_ENDPOINT = 1024
MAX_DEVICE = 80
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class PushSubscription:
    """One device's push subscription: where to post, the keys to encrypt for, and its name."""

    id: str
    workspace_id: str
    person_id: str
    endpoint: str
    p256dh: str  # base64url of the browser's 65-byte uncompressed P-256 public key
    auth: str  # base64url of the browser's 16-byte auth secret
    device: str  # what Settings calls it ("Chrome on Android"), from the user agent
    created_at: int
    last_used_at: int | None = None  # the last push its push service took
    signed_in_until: int | None = None  # when its browser's page session ends (None: an earlier release's record)

    def signed_in(self, now: int) -> bool:
        """Whether the browser that holds it is signed in at ``now``, as far as the server knows:
        before ``signed_in_until``. A record an earlier release kept without it was added signed in
        at ``created_at``, and that session ended at most :data:`SESSION_LIFETIME` later."""
        until = self.signed_in_until if self.signed_in_until is not None else self.created_at + SESSION_LIFETIME
        return now < until


def subscription_id(endpoint: str) -> str:
    """The id of the subscription at ``endpoint``: the same whoever adds it."""
    return "ps_" + hashlib.sha256(endpoint.encode("utf-8")).hexdigest()[:24]


class PushSubscriptionStore(abc.ABC):
    """Persons' push subscriptions."""

    @abc.abstractmethod
    def add_subscription(self, subscription: PushSubscription) -> PushSubscription:
        """Store it (:func:`check_subscription` first), replacing the one at the same endpoint,
        whoever's it was. :class:`BadInput` (field ``endpoint``) if the person has
        :data:`MAX_SUBSCRIPTIONS` others already, and then nothing is written. The limit holds
        inside the write: of devices added at the same instant, no more are stored than it allows."""

    @abc.abstractmethod
    def list_subscriptions(self, workspace_id: str, person_id: str) -> list[PushSubscription]:
        """The person's subscriptions, oldest first."""

    @abc.abstractmethod
    def remove_subscription(self, workspace_id: str, person_id: str, subscription_id: str) -> bool:
        """Delete the person's subscription; False if they have none by that id (another
        person's is never removed)."""

    @abc.abstractmethod
    def renew_subscription(self, workspace_id: str, person_id: str, subscription_id: str,
                           signed_in_until: int) -> bool:
        """Its browser is signed in until ``signed_in_until`` (the page loaded with a session that
        ends then); False, and nothing written, if the person has none by that id (another
        person's is never changed)."""

    @abc.abstractmethod
    def touch_subscription(self, workspace_id: str, person_id: str, subscription_id: str, now: int) -> None:
        """Its push service took a push at ``now`` (nothing happens if it is gone)."""


# -- checks -----------------------------------------------------------------------------------------


def _key(value: object, size: int) -> bool:
    if not isinstance(value, str) or not value or len(value) > 200:
        return False
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return False
    return len(raw) == size and (size != 65 or raw[0] == 4)


def endpoint_problem(endpoint: object, allow_http: bool) -> str | None:
    """Why ``endpoint`` cannot be a push endpoint, or None. ``allow_http``: plain http to a
    loopback address is allowed too (tests)."""
    if not isinstance(endpoint, str) or len(endpoint) > MAX_ENDPOINT:
        return f"a push service's https URL of at most {MAX_ENDPOINT} characters."
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname
        parts.port  # noqa: B018  (a port that is not a number raises)
    except ValueError:
        return "is not a URL."
    if not host or parts.username or parts.password or parts.fragment:
        return "is not a push service's URL."
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and allow_http and host in LOOPBACK_HOSTS:
        return None
    return "must be https: a push service never takes plain http."


def check_subscription(subscription: PushSubscription) -> None:
    problem = endpoint_problem(subscription.endpoint, allow_http=True)
    if problem is not None:
        raise BadInput("endpoint", problem)
    if subscription.id != subscription_id(subscription.endpoint):
        raise BadInput("id", "is not the id of this endpoint.")
    if not _key(subscription.p256dh, 65):
        raise BadInput("keys.p256dh", "the browser's P-256 public key, base64url (65 bytes, uncompressed).")
    if not _key(subscription.auth, 16):
        raise BadInput("keys.auth", "the browser's auth secret, base64url (16 bytes).")
    if not isinstance(subscription.device, str) or len(subscription.device) > MAX_DEVICE:
        raise BadInput("device", f"at most {MAX_DEVICE} characters.")
    if subscription.signed_in_until is not None and not _time(subscription.signed_in_until):
        raise BadInput("signed_in_until", "a time in epoch seconds.")


def _time(value: object) -> bool:
    return type(value) is int and 0 <= value < 2**53
