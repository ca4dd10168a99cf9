"""A request-body limit for any ASGI app: the body is read (up to the limit) before the app runs,
so an oversized request gets 413 and never reaches a parser."""

from __future__ import annotations

import json


class BodyLimit:
    def __init__(self, app, max_body: int):
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = content_length(scope)
        if declared is not None and declared > self.max_body:
            return await too_large(send, self.max_body)
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left before its request was whole; nothing to answer
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                return await too_large(send, self.max_body)
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def content_length(scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def too_large(send, limit: int) -> None:
    await send_json(
        send,
        413,
        {"error": {"code": "too_large", "message": f"The request body is over the {limit // 1024} KiB limit."}},
    )


async def send_json(send, status: int, payload: dict) -> None:
    body = json.dumps(payload).encode("utf-8")
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))],
    })
    await send({"type": "http.response.body", "body": body})
