"""Routes of the local server that hand a request on with its path unchanged: ``/mcp`` and ``/api``
carry their full paths (the Lambda functions serve them the same way), and the OAuth endpoints are
a set of paths (:class:`Where`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import ASGIApp, Receive, Scope, Send


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
