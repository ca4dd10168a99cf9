"""``create_api(runtime)``: the confirm API as one FastAPI app, routed under ``/api``, with what
Slack calls back under ``/slack`` (:mod:`countersign.surfaces.slack`).

The same app runs in the local server (mounted at ``/api``) and in the ``api`` Lambda (Mangum).
OpenAPI is served at ``/api/openapi.json``; the docs UI is off (it would load third-party files).
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from fastapi import FastAPI
from starlette.middleware.gzip import GZipMiddleware

from ...notify import Sender, sender_for
from ...runtime import Runtime
from ..http.request_limits import RequestLimit
from ..slack import routes as slack_routes
from . import (
    cards,
    connections,
    errors,
    lifetimes,
    oauth,
    passkey_cards,
    passkeys,
    policy,
    push,
    quorum,
    session,
    settings,
    signin,
    slack,
    standing_grants,
    upstreams,
    webhooks,
)
from .guard import Guard
from .schemas import add_documented

log = logging.getLogger("countersign.api")

SIGNIN_FLOOR_SECONDS = 0.25
LOOPBACK = ("localhost", "127.0.0.1", "::1")
COMPRESS_FROM = 1024


def create_api(runtime: Runtime, sender: Sender | None = None, *,
               signin_floor: float = SIGNIN_FLOOR_SECONDS) -> FastAPI:
    """The API for ``runtime``. ``sender`` delivers sign-in emails (default: the one
    ``COUNTERSIGN_MAIL`` names, as for card emails); ``signin_floor`` is the least time a sign-in
    request's work takes, known address or not."""
    app = FastAPI(
        title="countersign confirm API",
        version="1",
        description="What the confirm page calls: sign-in, cards, settings, connections and OAuth consent.",
        openapi_url="/api/openapi.json",
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        redirect_slashes=False,  # /api/cards/ is no endpoint: a JSON 404, not a redirect built from the Host header
    )
    public = urlsplit(runtime.desk.settings.public_url)
    if (
        public.scheme == "http"
        and public.hostname not in LOOPBACK
        and not (public.hostname or "").endswith(".localhost")
    ):
        # Browsers keep a Secure (__Host-) cookie only from https or from localhost itself.
        log.warning("COUNTERSIGN_PUBLIC_URL %s is plain http on a non-loopback host: browsers will not keep "
                    "the session cookie, so nobody can sign in to the confirm page. Serve it over https.",
                    runtime.desk.settings.public_url)
    app.state.runtime = runtime
    configured = runtime.settings
    if sender is None:
        sender = sender_for(configured.mail, configured.data_dir, configured.ses_configuration_set)
    app.state.sender = sender
    app.state.signin_floor = signin_floor
    errors.install(app)
    routers = [m.router for m in (signin, session, cards, settings, connections, oauth, passkeys, passkey_cards,
                                  upstreams, standing_grants, webhooks, slack, push, lifetimes,
                                  quorum, policy)]
    for router in routers:
        app.include_router(router, prefix="/api")
    app.include_router(slack_routes.router)  # /slack/actions, /slack/commands: Slack's, signed, no session
    # what OPTIONS and a 405 answer
    app.state.route_methods = errors.route_methods(routers, "/api") + errors.route_methods([slack_routes.router], "")
    built = app.openapi
    app.openapi = lambda: app.openapi_schema or add_documented(built())  # type: ignore[method-assign]
    # Innermost first: answers of 1 KiB or more are gzipped for a client that accepts it (through
    # CloudFront too, whose /api behaviour caches nothing); the page's per-address request limit
    # (countersign.surfaces.http.request_limits); the Guard's headers and body limit around everything.
    app.add_middleware(GZipMiddleware, minimum_size=COMPRESS_FROM)
    app.add_middleware(RequestLimit, runtime=runtime, kind="page")
    app.add_middleware(Guard)
    return app
