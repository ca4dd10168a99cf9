"""The local server: one ASGI app serving ``/mcp``, ``/api`` and the confirm page on one origin."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import anyio

from ..runtime import Runtime
from .limits import RequestLimit
from .mcp_http import MCP_PATH, stateful_app
from .mcp_tools import build_server
from .oauth_http import OAuthEndpoints, serves as serves_oauth

log = logging.getLogger("countersign")

WEB_DIR = Path(__file__).resolve().parents[3] / "web"


class LocalApp:
    """Routes by path prefix; runs the MCP session manager for the life of the server, and the
    upkeep (:meth:`Runtime.sweep`: settle cards a dead process left running, deliver the emails
    still owed) at start-up and then every ``COUNTERSIGN_SWEEP_INTERVAL`` seconds."""

    def __init__(self, runtime: Runtime, api=None, web_dir: Path | None = WEB_DIR):
        self.runtime = runtime
        server = build_server(runtime.desk, runtime.state_keys)
        mcp, self._mcp_lifespan_app = stateful_app(server, runtime.store, runtime.settings.public_url,
                                                   live_url=lambda: runtime.desk.settings.public_url)
        self.mcp = RequestLimit(mcp, runtime, "mcp")  # per connection and per address (off unless set)
        self.oauth = OAuthEndpoints(runtime)  # OAuth beside /mcp: /.well-known/oauth-*, /oauth/* (docs/oauth.md)
        self.api = api
        self.web = StaticSite(web_dir) if web_dir and web_dir.is_dir() else None

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        path = scope.get("path", "")
        if path == MCP_PATH or path.startswith(MCP_PATH + "/"):
            return await self.mcp(scope, receive, send)
        if scope["type"] == "http" and serves_oauth(path):
            return await self.oauth(scope, receive, send)
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
            except Exception as exc:  # noqa: BLE001  # pragma: no cover - any start-up failure is reported to the server
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            upkeep = asyncio.create_task(self._upkeep())
            await send({"type": "lifespan.startup.complete"})
            message = await receive()
            upkeep.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await upkeep
        await send({"type": "lifespan.shutdown.complete"})

    async def _upkeep(self) -> None:
        while True:
            try:
                await anyio.to_thread.run_sync(self.runtime.sweep)
            except Exception:  # the next round tries again
                log.exception("upkeep failed")
            await asyncio.sleep(self.runtime.settings.sweep_interval)


async def _not_found(send):
    await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"Not found"})


# -- the confirm page: a small static handler ------------------------------------------------------

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
COMPRESSIBLE = (".html", ".js", ".mjs", ".css", ".svg", ".txt", ".json", ".webmanifest")

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
# The page itself is always revalidated (cheap: an ETag answers 304) so a deploy takes effect on
# the next visit; the assets have no hashed names (no build step), so they may be reused briefly.
PAGE_CACHE = b"no-cache"
ASSET_CACHE = b"public, max-age=300"


@dataclass(frozen=True)
class _File:
    stamp: tuple[int, int]
    content_type: bytes
    body: bytes
    gzipped: bytes | None
    etag: str


class StaticSite:
    """Serves ``web/index.html`` for the page routes and top-level files of ``web/`` by exact name.

    Nothing else: no directory listing, no sub-folders, no dot-files, no path that could leave the
    folder. GET and HEAD only. Every answer carries the page's security headers.
    """

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._cache: dict[str, _File] = {}

    def _name_for(self, path: str) -> str | None:
        if path in PAGE_ROUTES:
            return "index.html"
        name = path[1:] if path.startswith("/") else ""
        if not name or "/" in name or "\\" in name or "\x00" in name or name.startswith("."):
            return None
        if os.path.splitext(name)[1].lower() not in CONTENT_TYPES:
            return None
        return name

    def _load(self, name: str) -> _File | None:
        path = self.directory / name
        try:
            st = path.stat()
        except OSError:
            return None
        if not path.is_file():
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        cached = self._cache.get(name)
        if cached is not None and cached.stamp == stamp:
            return cached
        body = path.read_bytes()
        ext = os.path.splitext(name)[1].lower()
        gzipped = None
        if ext in COMPRESSIBLE and len(body) > 512:
            gzipped = gzip.compress(body, compresslevel=9, mtime=0)
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        loaded = _File(stamp, CONTENT_TYPES[ext].encode(), body, gzipped, etag)
        self._cache[name] = loaded
        return loaded

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        name = self._name_for(path)
        found = self._load(name) if name else None
        if found is None:
            return await _respond(send, 404, [(b"content-type", b"text/plain; charset=utf-8"),
                                              (b"cache-control", b"no-store")], b"Not found")
        method = scope.get("method", "GET")
        if method not in ("GET", "HEAD"):
            return await _respond(send, 405, [(b"content-type", b"text/plain; charset=utf-8"),
                                              (b"allow", b"GET, HEAD")], b"Method not allowed")
        request = {k.lower(): v for k, v in scope.get("headers", [])}
        gzipped = found.gzipped if _accepts_gzip(request.get(b"accept-encoding", b"")) else None
        use_gzip = gzipped is not None
        etag = found.etag[:-1] + '-gz"' if use_gzip else found.etag
        headers = [
            (b"content-type", found.content_type),
            (b"cache-control", PAGE_CACHE if name == "index.html" else ASSET_CACHE),
            (b"etag", etag.encode()),
        ]
        if found.gzipped is not None:
            headers.append((b"vary", b"Accept-Encoding"))
        if etag in _etags(request.get(b"if-none-match", b"")):
            return await _respond(send, 304, headers, b"", head=True, length_set=True)
        body = found.body if gzipped is None else gzipped
        if use_gzip:
            headers.append((b"content-encoding", b"gzip"))
        headers.append((b"content-length", str(len(body)).encode()))
        await _respond(send, 200, headers, body, head=method == "HEAD", length_set=True)


def _accepts_gzip(value: bytes) -> bool:
    for part in value.decode("latin-1").split(","):
        token, _, params = part.strip().partition(";")
        if token.strip().lower() in ("gzip", "*"):
            q = params.strip().lower()
            return not (q.startswith("q=") and q[2:].strip() in ("0", "0.0", "0.00", "0.000"))
    return False


def _etags(value: bytes) -> set[str]:
    tags = set()
    for part in value.decode("latin-1").split(","):
        tag = part.strip()
        if tag.startswith("W/"):
            tag = tag[2:]
        if tag:
            tags.add(tag)
    return tags


async def _respond(send, status: int, headers: list, body: bytes, head: bool = False, length_set: bool = False):
    headers = list(headers) + list(SECURITY_HEADERS)
    if not length_set:
        headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})
