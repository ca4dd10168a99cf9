"""The outermost layer of the API: security headers on every response, a 64 KiB body limit,
and a JSON 500 (with the same headers) for anything unexpected. Pure ASGI, so it also wraps
responses that Starlette's own middleware would otherwise send bare."""

from __future__ import annotations

import logging

from ..http.body_limit import BodyLimit, send_json

log = logging.getLogger("countersign.api")

MAX_BODY_BYTES = 64 * 1024

SECURITY_HEADERS = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
]
_REPLACED = {name for name, _ in SECURITY_HEADERS}


def _with_security_headers(headers) -> list[tuple[bytes, bytes]]:
    kept = [(k, v) for k, v in headers if k.lower() not in _REPLACED]
    return kept + SECURITY_HEADERS


class Guard:
    def __init__(self, app, max_body: int = MAX_BODY_BYTES):
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def guarded_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = dict(message, headers=_with_security_headers(message.get("headers", [])))
            await send(message)

        try:
            await BodyLimit(self.app, self.max_body)(scope, receive, guarded_send)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await send_json(
                    guarded_send,
                    500,
                    {
                        "error": {
                            "code": "internal",
                            "message": "Something went wrong on our side; nothing further was done. Try again.",
                        }
                    },
                )
