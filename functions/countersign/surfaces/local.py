"""The local server: one Starlette app serving ``/mcp``, ``/api`` and the confirm page on one origin,
its upkeep, and the demo data of ``countersign serve --demo``.

* ``/mcp`` — the stateful MCP endpoint (:func:`.mcp_http.stateful_app`) behind the local Host and
  Origin check (:class:`LocalOrigin`).
* ``/api/…`` — the confirm API (:func:`.api.app.create_api`), whose routes carry their ``/api``
  prefix themselves (the Lambda serves the same app), so both are routed by :class:`Prefix`.
* everything else — ``web/`` through :class:`ConfirmPage` (a :class:`StaticFiles`), gzip
  (:class:`GZipMiddleware`) and the page's security headers (:class:`SecurityHeaders`).

The lifespan runs the MCP session manager and the upkeep (:meth:`Runtime.sweep`: settle cards a dead
process left running, deliver the emails still owed) at start-up and then every
``COUNTERSIGN_SWEEP_INTERVAL`` seconds, and records the public URL in the data folder for the CLI.

Forwarding headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) are trusted only from the proxies
``COUNTERSIGN_TRUSTED_PROXIES`` names; :func:`serve` runs uvicorn with its own proxy handling off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Match, Mount, NoMatchFound
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from .. import accounts, settings as settings_mod
from ..gate.context import ActionContext
from ..logs.filters import redact_local_logs
from ..platform import heap
from ..runtime import Runtime, build
from ..settings import Settings
from ..store.errors import NotFound
from .limits import RequestLimit
from .mcp_http import MCP_PATH, stateful_app
from .mcp_tools import build_server
from .oauth_http import OAuthEndpoints, serves as serves_oauth

log = logging.getLogger("countersign")

WEB_DIR = Path(__file__).resolve().parents[3] / "web"
DEMO_EMAIL = "demo@example.com"


def build_local(settings: Settings, demo: bool = False, runtime: Runtime | None = None,
                web_dir: Path | None = WEB_DIR) -> tuple[Starlette, dict | None]:
    """(the ASGI app, the demo's details when ``demo``) for ``settings`` (or a prepared ``runtime``)."""
    from .api.app import create_api

    runtime = runtime or build(settings)
    info = seed_demo(runtime) if demo else None
    server = build_server(runtime.desk, runtime.state_keys)
    mcp, mcp_lifespan_app = stateful_app(server, runtime.store, live_url=lambda: runtime.desk.settings.public_url)
    api = create_api(runtime)
    oauth = OAuthEndpoints(runtime)
    routes: list[BaseRoute] = [
        # per connection and per address (off unless set), after the local Host/Origin check
        Prefix(MCP_PATH, LocalOrigin(RequestLimit(mcp, runtime, "mcp"), runtime)),
        # OAuth beside /mcp: /.well-known/oauth-*, /oauth/* (docs/oauth.md), counted per address with
        # /mcp as on Lambda
        Where(serves_oauth, RequestLimit(oauth, runtime, "mcp")),
        Prefix("/api", api),
    ]
    if web_dir is not None and web_dir.is_dir():
        routes.append(Mount("/", SecurityHeaders(GZipMiddleware(ConfirmPage(web_dir)))))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp_lifespan_app.router.lifespan_context(mcp_lifespan_app):
            record_public_url(runtime)
            upkeep = asyncio.create_task(_upkeep(runtime))
            try:
                yield
            finally:
                upkeep.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await upkeep

    trusted = settings.trusted_proxies
    middleware = [Middleware(ProxyHeadersMiddleware, trusted_hosts=list(trusted))] if trusted else []
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.oauth = oauth  # its metadata-document fetcher can be set for a test (tests/conftest.py)
    return app, info


async def _upkeep(runtime: Runtime) -> None:
    while True:
        try:
            await anyio.to_thread.run_sync(runtime.sweep)
        except Exception:  # the next round tries again
            log.exception("upkeep failed")
        await asyncio.sleep(runtime.settings.sweep_interval)


def record_public_url(runtime: Runtime) -> None:
    """Note the origin this server serves in the data folder, so ``countersign signin-link`` and
    ``connection create`` print links to it (an explicit ``COUNTERSIGN_PUBLIC_URL`` still wins)."""
    settings = runtime.desk.settings
    if settings.store.startswith("sqlite:///") and settings.data_dir.is_dir():
        try:
            settings_mod.record_public_url(settings.data_dir, settings.public_url)
        except OSError as exc:  # the links the CLI prints then name the default origin
            log.warning("could not record the public URL in %s: %s", settings.data_dir, exc.strerror or exc)


def serve(app: ASGIApp, host: str, port: int, on_listening: Callable[[], None] | None = None,
          log_level: str = "info") -> int:
    """Run ``app`` under uvicorn until stopped; ``on_listening`` once the socket is bound.

    uvicorn's own proxy handling is off: it would trust ``X-Forwarded-For`` from 127.0.0.1, so any
    local process could pose as any address (the app trusts only ``COUNTERSIGN_TRUSTED_PROXIES``).
    Returns 0, or 1 when the server could not start (uvicorn has said why).
    """
    config = uvicorn.Config(app, host=host, port=port, lifespan="on", proxy_headers=False, log_level=log_level)
    redact_local_logs()  # uvicorn's loggers exist now: every line it and the app write is redacted
    server = _Server(config, on_listening)
    try:
        server.run()
    except SystemExit as exc:  # uvicorn exits when the port is taken or the lifespan failed
        return 1 if exc.code else 0
    return 0


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_listening: Callable[[], None] | None):
        super().__init__(config)
        self.on_listening = on_listening

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            heap.settle(collect=True)  # the app is built and its lifespan started (countersign.platform.heap)
            if self.on_listening is not None:
                self.on_listening()


class Prefix(BaseRoute):
    """``prefix`` and every path under it, handed on with the path unchanged: the MCP endpoint and the
    API route by their full paths (the Lambda serves them the same way). Unlike a path pattern, it
    matches any character, a line break included."""

    def __init__(self, prefix: str, app: ASGIApp):
        self.prefix, self.app = prefix, app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = scope.get("path", "")
        if scope["type"] == "http" and (path == self.prefix or path.startswith(self.prefix + "/")):
            return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


class Where(Prefix):
    """Every HTTP path ``serves(path)`` accepts, handed on unchanged (the OAuth endpoints' paths)."""

    def __init__(self, serves: Callable[[str], bool], app: ASGIApp):
        self.serves, self.app = serves, app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and self.serves(scope.get("path", "")):
            return Match.FULL, {}
        return Match.NONE, {}


# -- /mcp: DNS-rebinding and cross-origin protection ----------------------------------------------

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


# -- the confirm page -----------------------------------------------------------------------------

# The page's routes all answer with index.html; the script reads location to pick the view.
PAGE_ROUTES = frozenset({"/", "/confirm", "/history", "/settings", "/signin"})

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
}

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=()"),
)
# The page itself is always revalidated (cheap: an ETag answers 304) so a change takes effect on
# the next visit; the assets have no hashed names (no build step), so they may be reused briefly.
PAGE_CACHE = "no-cache"
ASSET_CACHE = "public, max-age=300"


def page_file(path: str) -> str | None:
    """The file of ``web/`` that ``path`` names: index.html for a page route, else a top-level file
    with a known extension by exact name. None for anything else (sub-folders, dot-files, other
    extensions, anything that could leave the folder)."""
    if path in PAGE_ROUTES:
        return "index.html"
    name = path[1:] if path.startswith("/") else ""
    if not name or "/" in name or "\\" in name or "\x00" in name or name.startswith("."):
        return None
    return name if os.path.splitext(name)[1].lower() in CONTENT_TYPES else None


class ConfirmPage(StaticFiles):
    """``web/`` as the confirm page: :func:`page_file` decides what exists, GET and HEAD only.

    ETags are weak, because the same file goes out gzipped or not (:class:`GZipMiddleware`
    decides), and every refusal is a response of its own (so the page's headers wrap it too).
    """

    def __init__(self, directory: Path):
        super().__init__(directory=directory)

    async def get_response(self, path: str, scope: Scope) -> Response:
        name = page_file(scope["path"])
        if name is None:
            return PlainTextResponse("Not found", 404, headers={"cache-control": "no-store"})
        try:
            return await super().get_response(name, scope)
        except HTTPException as exc:
            text = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, str(exc.detail))
            headers = {"cache-control": "no-store", **(exc.headers or {})}
            return PlainTextResponse(text, exc.status_code, headers=headers)

    def file_response(self, full_path: Any, stat_result: os.stat_result, scope: Scope,
                      status_code: int = 200) -> Response:
        name = os.path.basename(full_path)
        response = FileResponse(full_path, status_code=status_code, stat_result=stat_result,
                                media_type=CONTENT_TYPES[os.path.splitext(name)[1].lower()])
        response.headers["cache-control"] = PAGE_CACHE if name == "index.html" else ASSET_CACHE
        response.headers["etag"] = "W/" + response.headers["etag"]
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            return NotModifiedResponse(response.headers)
        return response

    def is_not_modified(self, response_headers: Headers, request_headers: Headers) -> bool:
        tags = [t.strip().removeprefix("W/") for t in request_headers.get("if-none-match", "").split(",")]
        return response_headers["etag"].removeprefix("W/") in tags


class SecurityHeaders:
    """The page's security headers (:data:`SECURITY_HEADERS`) on every response of the app it wraps."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS:
                    headers[name.decode()] = value.decode()
            await send(message)

        await self.app(scope, receive, with_headers)


# -- the demo -------------------------------------------------------------------------------------


def seed_demo(runtime: Runtime) -> dict:
    """Create (once) a demo workspace, owner, toolset data and agent token; mint a fresh sign-in link.

    Writes ``DATA/demo.json`` with ``mcp_url``, ``agent_token``, ``person_email``, ``confirm_url`` and
    ``signin_url``. Re-running with the same data folder keeps everything and only renews the link.
    """
    settings, store = runtime.settings, runtime.store
    path: Path = settings.data_dir / "demo.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    person = store.get_person_by_email(previous.get("person_email", DEMO_EMAIL))
    token = previous.get("agent_token")
    if person is None or not token:
        workspace, person = accounts.create_workspace(store, "Demo workspace", DEMO_EMAIL, "Dana Demo")
        token = accounts.create_connection(store, workspace.id, person.id, "Demo agent").token
        ctx = ActionContext.of(store, workspace, person, None, runtime.desk.now())
        for toolset in runtime.registry.toolsets:
            if toolset.demo is not None:
                toolset.demo(store, ctx)
    try:
        store.get_workspace(person.workspace_id)
    except NotFound:  # pragma: no cover - a demo.json from another store
        raise SystemExit(f"{path} names a workspace this store does not have; remove it and start again") from None
    info = {
        "mcp_url": f"{settings.public_url}/mcp",
        "agent_token": token,
        "person_email": person.email,
        "confirm_url": settings.pending_url,
        "signin_url": f"{settings.public_url}/signin#token={accounts.mint_signin_token(store, person)}",
    }
    settings.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Made 0600 as it is opened (it holds the agent's token), not chmod-ed after it was written.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older demo.json made under another umask
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps(info, indent=2) + "\n")
    return info
