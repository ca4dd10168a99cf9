"""The local server: one ASGI app serving ``/mcp``, ``/api`` and the confirm page on one origin."""

from __future__ import annotations

import contextlib
from pathlib import Path

from starlette.staticfiles import StaticFiles

from ..runtime import Runtime
from .mcp_http import MCP_PATH, stateful_app
from .mcp_tools import build_server

WEB_DIR = Path(__file__).resolve().parents[3] / "web"


class LocalApp:
    """Routes by path prefix; runs the MCP session manager for the life of the server."""

    def __init__(self, runtime: Runtime, api=None, web_dir: Path | None = WEB_DIR):
        self.runtime = runtime
        server = build_server(runtime.desk, runtime.state_keys)
        self.mcp, self._mcp_lifespan_app = stateful_app(server, runtime.store, runtime.settings.public_url)
        self.api = api
        self.web = StaticFiles(directory=str(web_dir), html=True) if web_dir and web_dir.is_dir() else None

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        path = scope.get("path", "")
        if path == MCP_PATH or path.startswith(MCP_PATH + "/"):
            return await self.mcp(scope, receive, send)
        if self.api is not None and (path == "/api" or path.startswith("/api/")):
            return await self.api(scope, receive, send)
        if self.web is not None and scope["type"] == "http":
            return await self.web(scope, receive, send)
        await _not_found(send)

    async def _lifespan(self, receive, send):
        inner = self._mcp_lifespan_app
        message = await receive()
        assert message["type"] == "lifespan.startup"
        async with contextlib.AsyncExitStack() as stack:
            try:
                await stack.enter_async_context(inner.router.lifespan_context(inner))
            except Exception as exc:  # pragma: no cover - start-up failure
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            message = await receive()
        await send({"type": "lifespan.shutdown.complete"})


async def _not_found(send):
    await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"Not found"})
