"""The local server: one Starlette app serving ``/mcp``, ``/api``, the OAuth endpoints and the
confirm page on one origin, and its upkeep (:func:`build_local`: the composition root of
``countersign serve``).

* ``/mcp`` — the stateful MCP endpoint (:func:`~countersign.surfaces.mcp.transport.stateful_app`)
  behind the local Host and Origin check (:class:`~.loopback.LocalOrigin`).
* ``/api/…`` — the confirm API (:func:`~countersign.surfaces.api.app.create_api`), whose routes
  carry their ``/api`` prefix themselves (the Lambda serves the same app), so both are routed by
  :class:`~.routing.Prefix`.
* everything else — ``web/`` through :class:`~.page.ConfirmPage`, gzip (:class:`GZipMiddleware`)
  and the page's security headers (:class:`~.page.SecurityHeaders`).

The lifespan runs the MCP session manager and the upkeep (:meth:`Runtime.sweep`: settle cards a dead
process left running, deliver the emails still owed) at start-up and then every
``COUNTERSIGN_SWEEP_INTERVAL`` seconds, sends the webhooks card events owe every
:data:`WEBHOOK_INTERVAL` seconds (:mod:`countersign.notify.webhooks`: outside the gate's path), and
records the public URL in the data folder for the CLI.

Forwarding headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) are trusted only from the proxies
``COUNTERSIGN_TRUSTED_PROXIES`` names; :func:`~.run.serve` runs uvicorn with its own proxy handling off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import BaseRoute, Mount
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from ... import settings as settings_mod
from ...gate.offload import ASGIApp, Serving
from ...runtime import Runtime, build
from ...settings import Settings
from ..api.app import create_api
from ..http.request_limits import RequestLimit
from ..mcp.server import build_server
from ..mcp.transport import MCP_PATH, stateful_app
from ..oauth.endpoints import OAuthEndpoints
from .demo import seed_demo
from .loopback import LocalOrigin
from .page import WEB_DIR, ConfirmPage, SecurityHeaders
from .routing import Prefix, Where

log = logging.getLogger("countersign")

WEBHOOK_INTERVAL = 2.0  # seconds between looks for card events a workspace's webhooks are owed


def build_local(settings: Settings, demo: bool = False, runtime: Runtime | None = None,
                web_dir: Path | None = WEB_DIR) -> tuple[Starlette, dict | None]:
    """(the ASGI app, the demo's details when ``demo``) for ``settings`` (or a prepared ``runtime``)."""
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
        Where(oauth.serves, RequestLimit(oauth, runtime, "mcp")),
        Prefix("/api", api),
        Prefix("/slack", api),  # Slack's callbacks (countersign.surfaces.slack), served by the same app
    ]
    if web_dir is not None and web_dir.is_dir():
        routes.append(Mount("/", SecurityHeaders(GZipMiddleware(ConfirmPage(web_dir)))))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp_lifespan_app.router.lifespan_context(mcp_lifespan_app):
            record_public_url(runtime)
            upkeep = asyncio.create_task(_upkeep(runtime))
            webhooks = asyncio.create_task(_webhooks(runtime))
            try:
                yield
            finally:
                for task in (upkeep, webhooks):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

    trusted = settings.trusted_proxies
    # outermost: how many requests the loop serves now (a call alone may decide on the loop: gate.offload)
    middleware = [Middleware(counted, serving=runtime.desk.offload.serving)]
    if trusted:
        middleware.append(Middleware(ProxyHeadersMiddleware, trusted_hosts=list(trusted)))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.oauth = oauth  # its metadata-document fetcher can be set for a test (tests/conftest.py)
    return app, info


def counted(app: ASGIApp, serving: Serving) -> ASGIApp:
    return serving.count(app)


async def _upkeep(runtime: Runtime) -> None:
    while True:
        try:
            await anyio.to_thread.run_sync(runtime.sweep)
        except Exception:  # the next round tries again
            log.exception("upkeep failed")
        await asyncio.sleep(runtime.settings.sweep_interval)


async def _webhooks(runtime: Runtime) -> None:
    while runtime.webhooks is not None:
        await asyncio.sleep(WEBHOOK_INTERVAL)
        try:
            await anyio.to_thread.run_sync(runtime.webhooks.sweep)
        except Exception:  # the next round tries again
            log.exception("sending webhooks failed")


def record_public_url(runtime: Runtime) -> None:
    """Note the origin this server serves in the data folder, so ``countersign signin-link`` and
    ``connection create`` print links to it (an explicit ``COUNTERSIGN_PUBLIC_URL`` still wins)."""
    settings = runtime.desk.settings
    if settings.store.startswith("sqlite:///") and settings.data_dir.is_dir():
        try:
            settings_mod.record_public_url(settings.data_dir, settings.public_url)
        except OSError as exc:  # the links the CLI prints then name the default origin
            log.warning("could not record the public URL in %s: %s", settings.data_dir, exc.strerror or exc)
