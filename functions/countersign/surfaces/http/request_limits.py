"""Request limits the product enforces itself, so one noisy agent cannot starve the others or the
confirm page (docs/operations.md, "Request limits").

Fixed windows of :data:`WINDOW` seconds, counted in the store, per:

* **connection** on ``/mcp`` (``COUNTERSIGN_LIMIT_CONNECTION``): keyed by the hash of the bearer
  token, which names exactly one connection (a wrong token gets nowhere past authentication);
* **address** on ``/mcp`` (``COUNTERSIGN_LIMIT_ADDRESS``): every agent behind one address,
  counted only for requests their connection's own limit let through, so an agent over its limit
  does not use up its neighbours' allowance;
* **address** on ``/api`` (``COUNTERSIGN_LIMIT_PAGE``): the confirm page, in its own counters,
  so agents never crowd out the person answering them.

A request's counters (:class:`~countersign.store.limits.RequestCounts`) are checked before its
work and taken once, all together, each on condition that it is under its limit:

* a request whose caller is read first (``/mcp`` with a bearer token: :class:`BearerAuth
  <countersign.surfaces.mcp.auth.BearerAuth>`; a click on a card with the page's session:
  :func:`countersign.surfaces.api.session.current`) has its counters read in that same read, and
  is refused there if one is at its limit; it is then counted by the write that files or answers
  its card (the card's own transaction), or, a question that files none, by the write that looks
  whether a card holds its request (``store.cards.request_holder``), or else by one write after
  its work, before its reply's last bytes are sent (so the caller's next request finds it counted);
* any other request is counted by one write before its work, as is a request whose caller could
  not be read (a wrong token, no session).

The counts go down in the request's ASGI scope (:data:`COUNTS_KEY`, :func:`counts_of`), read where
the caller is read and carried on by it as a value (``Principal.counts``, ``Signed.counts``) to the
gate's question and answer, and so to the write that files or answers the card: no context variable.

Over a limit: **429** with ``Retry-After`` (seconds to the next window). The one refusal that
comes in the reply instead is a race: another request took the last count between this one's
check and its card's write; the card's transaction is cancelled (nothing written) and the tool
call fails with the same sentence, or the click is answered 429. The address is CloudFront's
viewer address on a request that proves it came through CloudFront, else the connecting one
(:func:`countersign.surfaces.http.origin.client_address`). A limit of 0 is off (the local default;
template.yaml sets all three). If the store cannot count, the request goes through: a limit
never turns a store hiccup into an outage. That holds inside a card's transaction too: cancelled
only because a counter item was throttled, the card is written once more without the counters,
and the request is not counted (a warning in the log, the ``request_count_skipped`` metric).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from ...store.hashes import secret_hash
from ...store.limits import LimitStore, OverLimit, RequestCounts
from . import origin

log = logging.getLogger("countersign.limits")

WINDOW = 10
MCP_PATH = "/mcp"
CARD_CLICK = re.compile(r"/api/cards/[^/]+/.+")  # confirm, decline, edit, reopen, the passkey's steps
MCP_MESSAGE = "Too many requests from this connection or address. Wait {wait} s, then try again."
PAGE_MESSAGE = "Too many requests. Wait {wait} s, then try again."
COUNT_SKIPPED = "request_count_skipped"  # the metric of a request its card's transaction could not count
# Where a request's counts travel down: its ASGI scope, the one per-request value every layer is handed
COUNTS_KEY = "countersign.request_counts"


def counts_of(scope: Mapping[str, Any]) -> RequestCounts | None:
    """The counts the request limits put in this request's ``scope`` (None: no limit applies)."""
    return scope.get(COUNTS_KEY)


def _bearer_hash(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "").strip()
    if value[:7].lower() != "bearer " or not value[7:].strip():
        return None
    return secret_hash(value[7:].strip())


class RequestLimit:
    """ASGI middleware counting each HTTP request; ``kind`` is ``"mcp"`` or ``"page"``."""

    def __init__(self, app: Any, runtime: Any, kind: str, clock: Callable[[], int] | None = None):
        if kind not in ("mcp", "page"):
            raise ValueError(f"kind must be mcp or page, got {kind!r}")
        self.app, self.runtime, self.kind = app, runtime, kind
        self.clock = clock or runtime.desk.now

    def limits(self) -> tuple[int, int]:
        """(per connection, per address) for this kind of endpoint, read at each request."""
        settings = self.runtime.desk.settings
        if self.kind == "mcp":
            return settings.limit_connection, settings.limit_address
        return 0, settings.limit_page

    def keys(self, scope: dict) -> list[tuple[str, int]]:
        """The counters this request is charged to, in order, with their limits."""
        per_connection, per_address = self.limits()
        out = []
        if per_connection:
            token = _bearer_hash(origin.scope_headers(scope))
            if token is not None:
                out.append((f"mcp-connection:{token[:32]}", per_connection))
        if per_address:
            address = origin.scope_address(scope, origin.accepted(self.runtime))
            out.append((f"{self.kind}-address:{address}", per_address))
        return out

    def read_with_caller(self, scope: dict) -> bool:
        """Whether this request's caller is read before any of its work, its counters with it:
        ``/mcp`` with a bearer token (BearerAuth); a click on a card with a cookie (the page's
        session). Any other request is counted before its work."""
        path, headers = scope.get("path", ""), origin.scope_headers(scope)
        if self.kind == "mcp":
            return (path == MCP_PATH or path.startswith(MCP_PATH + "/")) and _bearer_hash(headers) is not None
        return scope.get("method") == "POST" and CARD_CLICK.fullmatch(path) is not None and "cookie" in headers

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        keys = self.keys(scope)
        if not keys:
            return await self.app(scope, receive, send)
        counts = RequestCounts(tuple(keys), int(self.clock()), WINDOW,
                               MCP_MESSAGE if self.kind == "mcp" else PAGE_MESSAGE)
        # each count is a write: off the loop where it serves other calls (countersign.gate.offload)
        offload, limits = self.runtime.desk.offload, self.runtime.store.limits
        if not self.read_with_caller(scope) and not await offload.off_the_loop(take, limits, counts):
            return await self._too_many(send, counts.wait)
        started = False

        async def sending(message: dict) -> None:
            nonlocal started
            started = True
            if message["type"] == "http.response.body" and not message.get("more_body") and not (
                    counts.taken or counts.skipped):
                # counted before the reply ends, not after: a client's next request always finds this one counted
                await offload.off_the_loop(take, limits, counts)
            await send(message)

        try:  # the counts go down in the request's scope, read where its caller is read, then passed on as values
            await self.app({**scope, COUNTS_KEY: counts}, receive, sending)
        except OverLimit:  # refused where its caller (and its counters) were read, before any work
            if started:
                raise
            return await self._too_many(send, counts.wait)
        if counts.skipped:  # its card's transaction went through without the counters (one was throttled)
            self.runtime.desk.event(COUNT_SKIPPED)
        elif not counts.taken:  # no card's transaction counted it, and no reply ended: one write, after its work
            await offload.off_the_loop(take, limits, counts)

    async def _too_many(self, send, wait: int) -> None:
        if self.kind == "mcp":
            payload: dict = {"error": "rate_limited", "error_description": MCP_MESSAGE.format(wait=wait)}
        else:
            payload = {"error": {"code": "rate_limited", "message": PAGE_MESSAGE.format(wait=wait)}}
        body = json.dumps(payload).encode("utf-8")
        await send({"type": "http.response.start", "status": 429, "headers": [
            (b"content-type", b"application/json"), (b"retry-after", str(wait).encode("ascii")),
            (b"cache-control", b"no-store"), (b"content-length", str(len(body)).encode("ascii")),
        ]})
        await send({"type": "http.response.body", "body": body})


def take(limits: LimitStore, counts: RequestCounts) -> bool:
    """Take ``counts`` in one write, if not taken yet: whether the request may go on (True if the
    store could not count: never an outage from a counter)."""
    if counts.taken or counts.skipped:
        return True
    try:
        return limits.take_counts(counts)
    except Exception:
        log.exception("counting a request against %s failed; let through",
                      ", ".join(key.split(":", 1)[0] for key, _ in counts.counters))
        return True


def check(limits: LimitStore, counts: RequestCounts | None) -> None:
    """Where a request's caller was read, with its counters in ``counts`` if it was found: refuse
    the request (:class:`OverLimit`) if one is at its limit. Counters not read (no caller found)
    are taken now, in one write, before any work."""
    if counts is None or counts.taken:
        return
    if counts.seen is None and not take(limits, counts):
        raise OverLimit(counts)
    if counts.over():
        raise OverLimit(counts)
