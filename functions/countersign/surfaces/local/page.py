"""The confirm page: ``web/`` served as static files (:class:`ConfirmPage`), with the page's security
headers (:class:`SecurityHeaders`, whose values the deployment's CloudFront sends too: template.yaml).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

WEB_DIR = Path(__file__).resolve().parents[4] / "web"

# Settings' sections, each its own screen at /settings/<section> (web/settings.js, web/app.js).
SETTINGS_SECTIONS = ("notifications", "passkeys", "connections", "grants", "policy", "members", "upstreams",
                     "workspace", "slack", "webhooks")
PAGE_ROUTES = frozenset({"/", "/confirm", "/history", "/settings", "/signin",
                         *(f"/settings/{section}" for section in SETTINGS_SECTIONS)})

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

# The one inline script of index.html (it asks for the first view's API answers before any module
# has loaded, has the sign-in view's modules fetched when signed out, and sets Intl up while they
# download) is allowed by its hash, nothing else inline.
# Changing that script changes the hash: here, in template.yaml's SecurityHeadersPolicy and in
# docs/security.md (tests/browser/test_installable.py checks it against index.html, tests/deploy
# the template against this).
EARLY_SCRIPT_HASH = "'sha256-apMUzB4G57hZ49s+t3paqOjDwJa3A+lGkQV7Qawle8c='"
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; script-src 'self' {EARLY_SCRIPT_HASH}; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; worker-src 'self'; manifest-src 'self'; "
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
# the next visit, and so is the service worker's script (a new one must reach every browser at
# once); the assets have no hashed names (no build step), so they may be reused briefly.
PAGE_CACHE = "no-cache"
ASSET_CACHE = "public, max-age=300"
REVALIDATED = frozenset({"index.html", "sw.js"})


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
        response.headers["cache-control"] = PAGE_CACHE if name in REVALIDATED else ASSET_CACHE
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
