"""API Gateway HTTP API (payload 2.0) events for Lambda handlers, and an httpx2 transport that
turns a real client's requests into such events.

Each :class:`LambdaInstance` stands for one Lambda instance: its own thread with its own event
loop (Mangum calls ``run_until_complete``), invoked one event at a time.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2

API_ID = "abc123"
REGION = "eu-west-1"
HOST = f"{API_ID}.execute-api.{REGION}.amazonaws.com"


def http_event(
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | str | None = None,
    query: str = "",
    source_ip: str = "198.51.100.7",
    base64_body: bool = False,
    stage: str = "$default",
) -> dict:
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    headers.setdefault("host", HOST)
    cookies = [c.strip() for c in headers.pop("cookie", "").split(";") if c.strip()]
    raw = body.encode("utf-8") if isinstance(body, str) else body
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": API_ID,
            "domainName": headers["host"],
            "domainPrefix": API_ID,
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": "tests",
            },
            "requestId": f"req-{time.monotonic_ns()}",
            "routeKey": "$default",
            "stage": stage,
            "time": "30/Nov/2026:00:00:00 +0000",
            "timeEpoch": int(time.time() * 1000),
        },
        "isBase64Encoded": False,
    }
    if cookies:
        event["cookies"] = cookies
    if raw is not None:
        if base64_body:
            event["body"] = base64.b64encode(raw).decode("ascii")
            event["isBase64Encoded"] = True
        else:
            event["body"] = raw.decode("utf-8")
    return event


class LambdaContext:
    function_name = "countersign-test"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:countersign-test"
    aws_request_id = "test-request"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


class LambdaInstance:
    """One warm instance of a Lambda function."""

    def __init__(self, handler: Callable[[dict, Any], dict]):
        self.handler = handler
        self.pool = ThreadPoolExecutor(
            max_workers=1, initializer=lambda: asyncio.set_event_loop(asyncio.new_event_loop())
        )
        self.invocations = 0

    def invoke(self, event: dict) -> dict:
        self.invocations += 1
        return self.pool.submit(self.handler, event, LambdaContext()).result()

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def response_body(result: dict) -> bytes:
    body = result.get("body") or ""
    return base64.b64decode(body) if result.get("isBase64Encoded") else body.encode("utf-8")


class LambdaTransport(httpx2.AsyncBaseTransport):
    """Sends each request as an API Gateway event to the next instance in turn."""

    def __init__(self, instances: list[LambdaInstance], base64_bodies: bool = True):
        self.instances = instances
        self.turn = itertools.cycle(instances)
        self.base64_bodies = base64_bodies

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        url = urlsplit(str(request.url))
        headers = {k.lower(): v for k, v in request.headers.items()}
        event = http_event(request.method, url.path, headers=headers, body=body or None, query=url.query,
                           base64_body=self.base64_bodies and bool(body))
        instance = next(self.turn)
        result = await anyio.to_thread.run_sync(instance.invoke, event)
        out_headers = list((result.get("headers") or {}).items())
        out_headers += [("set-cookie", c) for c in result.get("cookies") or []]
        return httpx2.Response(
            result["statusCode"], headers=out_headers, content=response_body(result), request=request
        )
