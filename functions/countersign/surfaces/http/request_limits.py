"""Request limits the product enforces itself, so one noisy agent cannot starve the others or the
confirm page (docs/operations.md, "Request limits").

Fixed windows of :data:`WINDOW` seconds, counted in the store (:meth:`LimitStore.hit_rate_limit`:
one conditional write, DynamoDB or SQLite, the same code on both), per:

* **connection** on ``/mcp`` (``COUNTERSIGN_LIMIT_CONNECTION``): keyed by the hash of the bearer
  token, which names exactly one connection (a wrong token gets nowhere past authentication);
* **address** on ``/mcp`` (``COUNTERSIGN_LIMIT_ADDRESS``): every agent behind one address,
  counted only for requests their connection's own limit let through, so an agent over its limit
  does not use up its neighbours' allowance;
* **address** on ``/api`` (``COUNTERSIGN_LIMIT_PAGE``): the confirm page, in its own counters,
  so agents never crowd out the person answering them.

The address is CloudFront's viewer address on a request that proves it came through CloudFront,
else the connecting one (:func:`countersign.surfaces.http.origin.client_address`). Over a limit: **429**
with ``Retry-After`` (seconds to the next window). A limit of 0 is off (the local default;
template.yaml sets all three). If the store cannot count, the request goes through: a limit
never turns a store hiccup into an outage.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from ...store.hashes import secret_hash
from . import origin

log = logging.getLogger("countersign.limits")

WINDOW = 10
MCP_MESSAGE = "Too many requests from this connection or address. Wait {wait} s, then try again."
PAGE_MESSAGE = "Too many requests. Wait {wait} s, then try again."


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

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        keys = self.keys(scope)
        if keys:
            now = int(self.clock())
            # each count is a write: off the loop where it serves other calls (countersign.gate.offload)
            if not await self.runtime.desk.offload.off_the_loop(self._count, keys, now):
                return await self._too_many(send, WINDOW - now % WINDOW)
        await self.app(scope, receive, send)

    def _count(self, keys: list[tuple[str, int]], now: int) -> bool:
        """Charge the request to ``keys`` in order, up to the first one over its limit; whether it may go on."""
        for key, limit in keys:
            try:
                allowed = self.runtime.store.limits.hit_rate_limit(key, now, WINDOW, limit)
            except Exception:
                log.exception("counting a request against %s failed; let through", key.split(":", 1)[0])
                allowed = True
            if not allowed:
                return False
        return True

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
