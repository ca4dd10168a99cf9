"""The outermost layer of the API: security headers on every response, a 64 KiB body limit,
and a JSON 500 (with the same headers) for anything unexpected. Pure ASGI, so it also wraps
responses that Starlette's own middleware would otherwise send bare."""

from __future__ import annotations

import json
import logging

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

        declared = _content_length(scope)
        if declared is not None and declared > self.max_body:
            return await _too_large(guarded_send, self.max_body)
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left before its request was whole; nothing to answer
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                return await _too_large(guarded_send, self.max_body)
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        try:
            await self.app(scope, replay, guarded_send)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await _json(guarded_send, 500, {"error": {
                    "code": "internal", "message": "Something went wrong on our side; nothing further was done. Try again."}})


def _content_length(scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _too_large(send, limit: int) -> None:
    await _json(send, 413, {"error": {"code": "too_large", "message": f"The request body is over the {limit // 1024} KiB limit."}})


async def _json(send, status: int, payload: dict) -> None:
    body = json.dumps(payload).encode("utf-8")
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))],
    })
    await send({"type": "http.response.body", "body": body})
