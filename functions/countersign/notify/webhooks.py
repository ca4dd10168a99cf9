"""Signed webhooks: a workspace's card events posted to its endpoints (Standard Webhooks).

A card's move writes the events it owes in its own transaction (:mod:`countersign.store.webhook_deliveries`);
nothing is sent on the gate's path. :class:`WebhookDeliverer` does the rest, outside it — locally
on the server's webhook loop and the sweep, on AWS in the notifier function (the table's stream
hands it each new event) and the sweeper:

* **fan-out**: a due event becomes one delivery per enabled endpoint that takes it, written in one
  transaction with the event marked done, so each (event, endpoint) has exactly one webhook id,
  reused by every retry. A ``card.lapsed`` due at a card's deadline is dropped if the card was
  answered, withdrawn or edited before it. The payload is built then, once: the card's id,
  workspace, tool, title and lines, its state and outcome, the card that replaced it (an edit's
  new card, by id), the connection that asked (by name) and the times — never its ticket,
  arguments, a code, a token or a session.
* **send**: the delivery is leased, its endpoint read (gone or off: dropped), its host resolved and
  refused if any address is private or reserved (the gateway's rule, :mod:`countersign.core.addresses`;
  ``COUNTERSIGN_UPSTREAM_PRIVATE`` allows one, for tests and a home lab), and the POST made to
  exactly the address checked (the certificate still verified for the host name), with no
  redirect followed, within :data:`TIMEOUT` seconds. Headers: ``webhook-id``,
  ``webhook-timestamp`` and ``webhook-signature`` (``v1,`` + base64 HMAC-SHA256 over
  ``id.timestamp.body`` with the base64-decoded secret).
* **retries**: any 2xx is delivered; anything else (another status, a timeout, a refused
  connection, a redirect) is tried again after ``30 s × 2^(n−1)`` (at most 4 h), the last try
  :data:`GIVE_UP_AFTER` (24 h) after the event; then the delivery is given up (``failed``).
* **disabling**: an endpoint whose every attempt has failed for :data:`DISABLE_AFTER` (24 h), at
  least :data:`MIN_FAILURES` in a row, is turned off; the workspace's owners are emailed once,
  through the same sender as card emails. Nothing more is sent there until an owner turns it on.

A deliverer never raises into its caller: each event and delivery is handled on its own.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import logging
import secrets
import socket
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from ..core.addresses import refused_address
from ..core.card_states import CardState
from ..core.sealing import Sealer, SealError
from ..core.times import iso
from ..settings import Settings
from ..store import Store
from ..store.cards import Card
from ..store.errors import NotFound
from ..store.webhook_deliveries import (
    ANSWERED,
    DELIVERED,
    DROPPED,
    EDITED,
    GAVE_UP,
    LAPSED,
    WebhookDelivery,
    WebhookEvent,
    delivery_id,
)
from ..store.webhook_endpoints import WebhookEndpoint
from . import outbound
from .card_channel import counted
from .interface import Email, Sender, SendError

log = logging.getLogger("countersign.notify.webhooks")

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
TIMEOUT = 10.0  # seconds for one attempt, connecting included
LEASE_SECONDS = 60  # longer than an attempt can take
FIRST_BACKOFF = 30
MAX_BACKOFF = 4 * 3600
GIVE_UP_AFTER = 24 * 3600
DISABLE_AFTER = 24 * 3600
MIN_FAILURES = 5
MAX_ERROR = 200

SENT, RETRYING, GAVE_UP_EVENT, DISABLED = "webhook_delivered", "webhook_retrying", "webhook_failed", \
    "webhook_disabled"
EVENTS = (SENT, RETRYING, GAVE_UP_EVENT, DISABLED)

SettingsSource = Settings | Callable[[], Settings]
Resolver = Callable[[str, int], list[str]]


def webhook_sealer(keys: list[bytes]) -> Sealer:
    """How endpoints' signing secrets are sealed: with the request-state keys, as upstream credentials are."""
    return Sealer(keys, purpose=b"cs-webhook-key", label="countersign-webhook")


def new_secret() -> str:
    """A signing secret: ``whsec_`` and the base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def seal_secret(sealer: Sealer, workspace_id: str, endpoint_id: str, secret: str) -> str:
    return sealer.seal((workspace_id, endpoint_id), secret.encode("ascii"))


def unseal_secret(sealer: Sealer, workspace_id: str, endpoint_id: str, sealed: str) -> str:
    return sealer.unseal((workspace_id, endpoint_id), sealed, "webhook signing secret").decode("ascii")


def signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header's value for one message."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode("ascii")


def payload(event: WebhookEvent, card: Card, asked_by: str | None) -> str:
    """The JSON body an event's deliveries send (built once, from named fields only)."""
    state = CardState(event.state)
    answer = None
    if event.event == ANSWERED:
        answer = "declined" if state is CardState.DECLINED else "confirmed"
    replaced_by = None
    if event.event == EDITED:  # the new card its person's edit filed in its place: a consumer follows it there
        replaced_by = (card.edited or {}).get("into")
    data = {
        "card_id": card.id,
        "workspace_id": card.workspace_id,
        "tool": card.tool,
        "title": card.title,
        "lines": list(card.lines),
        "state": state.value,
        "answer": answer,
        "outcome": state.value if state.is_final else None,
        "replaced_by": replaced_by,
        # the card whose edit filed this one (``from``; once this one is edited in turn, ``replaces``)
        "replaces": (card.edited or {}).get("from") or (card.edited or {}).get("replaces"),
        "asked_by": {"connection": asked_by},
        "created_at": iso(card.created_at),
        "expires_at": iso(card.expires_at),
        "occurred_at": iso(event.at),
    }
    return json.dumps({"type": event.event, "timestamp": iso(event.at), "data": data}, ensure_ascii=False,
                      separators=(",", ":"))


def backoff(attempts: int) -> int:
    """Seconds before the next try after ``attempts`` failed ones."""
    return min(FIRST_BACKOFF * 2 ** max(attempts - 1, 0), MAX_BACKOFF)


def resolve(host: str, port: int) -> list[str]:
    """Every address of ``host`` (an IP literal stands for itself)."""
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)})


class Unreachable(Exception):
    """Why an attempt was not made (the endpoint's host cannot be used right now)."""


@dataclass(frozen=True)
class Target:
    url: str  # the URL with its host replaced by the address checked
    host: str  # what the Host header and the certificate name
    sni: str | None


def target(url: str, allow_private: bool, resolver: Resolver = resolve) -> Target:
    """Where to POST ``url``: its host resolved once, every address checked (unless
    ``allow_private``), the first one used. :class:`Unreachable` saying why not."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "https" and not allow_private:
        raise Unreachable("the endpoint is not https")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = resolver(host, port)
    except (OSError, UnicodeError):
        raise Unreachable(f"the host {host} does not resolve") from None
    if not addresses:
        raise Unreachable(f"the host {host} has no address")
    if not allow_private and any(refused_address(a) for a in addresses):
        raise Unreachable(f"the host {host} resolves to a private or reserved address")
    address = addresses[0]
    netloc = f"[{address}]" if ":" in address else address
    if parts.port:
        netloc += f":{parts.port}"
    pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    return Target(pinned, parts.netloc.rpartition("@")[2], host if parts.scheme == "https" else None)


def compose_disabled(to: str, endpoint: WebhookEndpoint, workspace_name: str, settings_url: str,
                     from_address: str) -> Email:
    """The email that tells an owner an endpoint was turned off (where it pointed: its host only)."""
    parts = urlsplit(endpoint.url)
    where = f"{parts.scheme}://{parts.hostname}"
    reason = endpoint.disabled_reason or "its deliveries kept failing"
    text = (f"countersign stopped sending webhooks to {where} (endpoint {endpoint.id}) for the workspace "
            f"{workspace_name}: {reason}.\n\nNothing more is sent to it until an owner turns it on again, in "
            f"Settings ({settings_url}) or with `countersign webhook enable {endpoint.id}`. Its delivery log says "
            "what the endpoint answered.\n")
    body = "".join(f"<p>{html.escape(p)}</p>" for p in text.strip().split("\n\n"))
    return Email(to=to, subject="A webhook endpoint was turned off", text=text,
                 html=f"<!doctype html><html><body>{body}</body></html>", from_address=from_address)


class WebhookDeliverer:
    """Fans out due events and sends due deliveries (see the module's docstring)."""

    def __init__(self, store: Store, keys: list[bytes], settings: SettingsSource, sender: Sender | None = None,
                 clock: Callable[[], float] = time.time, on_event: Callable[[str], None] | None = None,
                 resolver: Resolver = resolve, timeout: float = TIMEOUT):
        self.endpoints = store.webhook_endpoints
        self.deliveries = store.webhook_deliveries
        self.cards = store.cards
        self.connections = store.connections
        self.workspaces = store.workspaces
        self.sealer = webhook_sealer(keys)
        self._settings = settings
        self.sender = sender
        self.clock = clock
        self.on_event = on_event
        self.resolver = resolver
        self.timeout = timeout
        self.counts: Counter[str] = Counter()

    @property
    def settings(self) -> Settings:
        return self._settings() if callable(self._settings) else self._settings

    def now(self) -> int:
        return int(self.clock())

    def _count(self, name: str) -> None:
        counted(self.counts, self.on_event, name)  # metrics never break a delivery

    # -- what the server and the functions call ----------------------------------------------------

    def deliver_event(self, event_id: str) -> int:
        """Fan out ``event_id`` if it is due and not done, then try each delivery it made once.
        Returns how many deliveries were tried (the stream notifier's work for one record)."""
        event = self.deliveries.get_event(event_id)
        if event is None or event.done or event.due_at > self.now():
            return 0
        tried = 0
        for delivery in self._fan_out(event):
            tried += self._send(delivery)
        return tried

    def sweep(self, limit: int = 50) -> int:
        """Everything owed now: due events fanned out, due deliveries tried. Returns deliveries tried."""
        tried = 0
        for event in self.deliveries.due_events(self.now(), limit):
            try:
                for delivery in self._fan_out(event):
                    tried += self._send(delivery)
            except Exception:  # one event never stops the others; it is due again next time
                log.exception("fanning out webhook event %s failed", event.id)
        for delivery in self.deliveries.due_deliveries(self.now(), limit):
            try:
                tried += self._send(delivery)
            except Exception:
                log.exception("webhook delivery %s failed", delivery.id)
        return tried

    # -- fan-out -----------------------------------------------------------------------------------

    def _fan_out(self, event: WebhookEvent) -> list[WebhookDelivery]:
        now = self.now()
        deliveries: list[WebhookDelivery] = []
        try:
            card = self.cards.get_card(event.workspace_id, event.card_id, now)
        except NotFound:
            card = None
        moot = card is None or (event.event == LAPSED and event.state == CardState.EXPIRED.value
                                and card.state is not CardState.EXPIRED)
        if not moot:
            assert card is not None
            body = payload(event, card, self._asked_by(card))
            deliveries = [
                WebhookDelivery(id=delivery_id(event.id, e.id), endpoint_id=e.id, workspace_id=event.workspace_id,
                                event_id=event.id, event=event.event, card_id=event.card_id, created_at=event.at,
                                payload=body, due_at=now)
                for e in self.endpoints.list_endpoints(event.workspace_id) if e.enabled and e.takes(event.event)
            ]
        if not self.deliveries.fan_out(event, deliveries):
            return []  # another deliverer fanned it out: its deliveries are its own
        return deliveries

    def _asked_by(self, card: Card) -> str | None:
        if not card.connection_id:
            return None
        try:
            return self.connections.get_connection(card.workspace_id, card.connection_id).name
        except NotFound:
            return None

    # -- sending -----------------------------------------------------------------------------------

    def _send(self, delivery: WebhookDelivery) -> int:
        """Lease, send once, record. 1 if an attempt was made, else 0."""
        now = self.now()
        leased = self.deliveries.lease_delivery(delivery, now, LEASE_SECONDS)
        if leased is None:
            return 0
        try:
            endpoint = self.endpoints.get_endpoint(leased.workspace_id, leased.endpoint_id)
        except NotFound:
            self.deliveries.finish_delivery(leased, now, DROPPED, error="the endpoint was removed", attempted=False)
            return 0
        if not endpoint.enabled:
            self.deliveries.finish_delivery(leased, now, DROPPED, error="the endpoint is turned off", attempted=False)
            return 0
        status, error = self._post(endpoint, leased)
        now = self.now()
        if status is not None and 200 <= status < 300:
            self.deliveries.finish_delivery(leased, now, DELIVERED, status_code=status)
            self.endpoints.record_attempt(endpoint.workspace_id, endpoint.id, now, True,
                                          disable_after=DISABLE_AFTER, min_failures=MIN_FAILURES)
            self._count(SENT)
            return 1
        last_try = leased.created_at + GIVE_UP_AFTER
        due = min(now + backoff(leased.attempts + 1), last_try)
        if now >= last_try:
            self.deliveries.finish_delivery(leased, now, GAVE_UP, status_code=status, error=error)
            self._count(GAVE_UP_EVENT)
        else:
            self.deliveries.retry_delivery(leased, now, due, status_code=status, error=error)
            self._count(RETRYING)
        recorded = self.endpoints.record_attempt(endpoint.workspace_id, endpoint.id, now, False,
                                                 disable_after=DISABLE_AFTER, min_failures=MIN_FAILURES)
        if recorded is not None and recorded[1]:
            self._count(DISABLED)
            self._tell_owners(recorded[0])
        return 1

    def _post(self, endpoint: WebhookEndpoint, delivery: WebhookDelivery) -> tuple[int | None, str | None]:
        """(the status code, why it failed) of one POST; the status is None when nothing answered."""
        # httpx2 (the MCP SDK's HTTP client) when a webhook is sent, not at the API's or MCP's cold start
        import httpx2

        try:
            where = target(endpoint.url, self.settings.upstream_private, self.resolver)
            secret = unseal_secret(self.sealer, endpoint.workspace_id, endpoint.id, endpoint.secret_sealed)
        except (Unreachable, SealError) as exc:
            return None, str(exc)[:MAX_ERROR]
        body = delivery.payload.encode("utf-8")
        timestamp = self.now()
        headers = {
            "Host": where.host,
            "Content-Type": "application/json",
            "User-Agent": "countersign-webhooks",
            "webhook-id": delivery.id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signature(secret, delivery.id, timestamp, body),
        }
        extensions = {"sni_hostname": where.sni} if where.sni else {}
        try:
            with outbound.client(self.timeout) as client:
                response = client.post(where.url, content=body, headers=headers, extensions=extensions)
        except httpx2.TimeoutException:
            return None, f"no answer within {self.timeout:g} s"
        except httpx2.HTTPError as exc:
            return None, f"could not connect ({type(exc).__name__})"
        if 300 <= response.status_code < 400:
            return response.status_code, "a redirect (not followed)"
        if not 200 <= response.status_code < 300:
            return response.status_code, f"HTTP {response.status_code}"
        return response.status_code, None

    def _tell_owners(self, endpoint: WebhookEndpoint) -> None:
        log.warning("webhook endpoint %s of workspace %s was turned off: %s", endpoint.id, endpoint.workspace_id,
                    endpoint.disabled_reason)
        if self.sender is None:
            return
        try:
            workspace = self.workspaces.get_workspace(endpoint.workspace_id)
            owners = [p for p in self.workspaces.list_persons(endpoint.workspace_id) if p.role == "owner"]
        except Exception:
            log.exception("could not read the owners of workspace %s", endpoint.workspace_id)
            return
        settings = self.settings
        for owner in owners:
            try:
                self.sender.send(compose_disabled(owner.email, endpoint, workspace.name, f"{settings.public_url}/",
                                                  self.sender.from_address))
            except SendError as exc:
                log.warning("could not tell %s that a webhook endpoint was turned off: %s", owner.id, exc)
