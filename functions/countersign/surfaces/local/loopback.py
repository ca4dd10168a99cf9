"""``/mcp`` on a workstation: DNS-rebinding and cross-origin protection (:class:`LocalOrigin`)."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ...runtime import Runtime

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


class LocalOrigin:
    """``/mcp`` on a workstation answers only requests that name this server: a ``Host`` of a
    loopback name or the public URL's host (DNS rebinding), and an ``Origin``, when one is sent, equal
    to the public URL's origin (a web page on any other origin, another localhost port included, is
    refused). Clients outside a browser send no ``Origin``. Read per request from the desk's
    settings, as the API's own origin check is."""

    def __init__(self, app: ASGIApp, runtime: Runtime):
        self.app = app
        self.runtime = runtime

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            public = urlsplit(self.runtime.desk.settings.public_url)
            headers = Headers(scope=scope)
            host = (headers.get("host") or "").lower()
            if host != public.netloc.lower() and host.rsplit(":", 1)[0] not in LOOPBACK_HOSTS:
                return await PlainTextResponse("Invalid Host header", 421)(scope, receive, send)
            origin = headers.get("origin")
            if origin is not None and origin.rstrip("/").lower() != f"{public.scheme}://{public.netloc}".lower():
                message = "Invalid Origin header: /mcp answers pages of its own origin only"
                return await PlainTextResponse(message, 403)(scope, receive, send)
        await self.app(scope, receive, send)
