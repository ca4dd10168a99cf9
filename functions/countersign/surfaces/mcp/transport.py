"""The MCP endpoint over Streamable HTTP, in its two shapes.

* :func:`stateful_app` — the local server: one long-lived session manager (started by the
  lifespan), stateful SSE sessions so 2025-era clients can be asked during the call; 2026-07-28
  requests are stateless on any server.
* :class:`StatelessMCP` — Lambda: stateless, JSON responses, a fresh session manager per request
  inside the SDK's lifespan (Mangum runs the ASGI lifespan around every invocation, and the SDK's
  session manager can be run only once per instance),
  ``GET /mcp`` → 405 so a standalone SSE stream never holds a Lambda open.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import Response

from ...gate.offload import IN_THREADS, ONE_AT_A_TIME, Offload
from ...store import Store  # whole: handed to BearerAuth, which reads a caller through four roles
from ..http.body_limit import BodyLimit
from .auth import BearerAuth

if TYPE_CHECKING:
    from ..oauth.endpoints import OAuthEndpoints

MCP_PATH = "/mcp"
# Arguments over 64 KiB are refused by the gate with a sentence naming them; a body far past that
# is refused before any JSON parser sees it.
MAX_MCP_BODY = 256 * 1024


def stateful_app(server: MCPServer, store: Store, *, live_url: Callable[[], str] | None = None):
    """(ASGI app for ``/mcp`` behind bearer auth, the Starlette app whose lifespan must run).

    The SDK's Host/Origin check is off here: the local server puts its own in front
    (:class:`countersign.surfaces.local.loopback.LocalOrigin`), which follows the configured public URL.
    ``live_url``: the public URL as it is now (the resource OAuth tokens must name, and where 401s
    point for its metadata); without it only connection tokens are accepted.
    """
    inner = server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=False, json_response=False,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return BodyLimit(BearerAuth(inner, store, public_url=live_url), MAX_MCP_BODY), inner


class StatelessMCP:
    """The Lambda shape of the endpoint (also usable under any ASGI server)."""

    def __init__(self, server: MCPServer, store: Store, live_url: Callable[[], str] | None = None,
                 offload: Offload = IN_THREADS):
        self.server = server
        self.auth = BodyLimit(BearerAuth(self._serve, store, public_url=live_url, offload=offload), MAX_MCP_BODY)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == MCP_PATH:
            return await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
        await self.auth(scope, receive, send)

    async def _serve(self, scope, receive, send):
        # Behind API Gateway and CloudFront the Host is the execute-api name or a custom domain;
        # DNS-rebinding protection guards servers on a workstation, not this one.
        app = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH, stateless_http=True, json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with app.router.lifespan_context(app):
            await app(scope, receive, send)


def lambda_app(server: MCPServer, store: Store, oauth: OAuthEndpoints | None = None):
    """The ASGI app of the ``mcp`` function: the stateless endpoint, and (``oauth``: the OAuth
    endpoints, :class:`~countersign.surfaces.oauth.endpoints.OAuthEndpoints`) the authorization server
    beside it, whose access tokens ``/mcp`` then accepts. An instance serves one request at a time,
    so what its layers write runs on the event loop (:data:`~countersign.gate.offload.ONE_AT_A_TIME`;
    the server's tools run where their desk's ``offload`` says: the handler builds it so)."""
    if oauth is None:
        mcp = StatelessMCP(server, store, offload=ONE_AT_A_TIME)
    else:
        mcp = StatelessMCP(server, store, live_url=lambda: oauth.runtime.desk.settings.public_url,
                           offload=ONE_AT_A_TIME)

    async def app(scope, receive, send):
        if oauth is not None and scope["type"] == "http" and oauth.serves(scope.get("path", "")):
            return await oauth(scope, receive, send)
        await mcp(scope, receive, send)

    return app


def lambda_handler(server: MCPServer, store: Store, base_path: str = "/", oauth: OAuthEndpoints | None = None):
    """The Mangum handler around :func:`lambda_app` (a named stage needs its ``base_path``)."""
    from mangum import Mangum  # only where a Lambda handler is made: the local server's start never loads it

    return Mangum(lambda_app(server, store, oauth), lifespan="off", api_gateway_base_path=base_path)
