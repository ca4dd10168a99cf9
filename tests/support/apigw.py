"""API Gateway REST API (Lambda proxy, payload format 1.0) events for Lambda handlers, as the
deployed stack sends them (template.yaml: RestApi), and an httpx2 transport that turns a real
client's requests into such events and plays CloudFront's viewer-response function on the answers.

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
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2

from countersign.surfaces.http.challenge import restore_challenge

API_ID = "abc123"
REGION = "eu-west-1"
HOST = f"{API_ID}.execute-api.{REGION}.amazonaws.com"
STAGE = "origin"  # template.yaml: RestApiStage
# The REST API's resources (template.yaml) and the path prefix each proxies.
RESOURCES = {"/mcp": "/mcp", "/oauth/": "/oauth/{proxy+}", "/.well-known/": "/.well-known/{proxy+}",
             "/api/": "/api/{proxy+}", "/slack/": "/slack/{proxy+}"}


def _resource(path: str) -> tuple[str, dict | None]:
    """The resource a path matches, and its path parameters (a proxy resource's rest of the path)."""
    for prefix, resource in RESOURCES.items():
        if prefix.endswith("/") and path.startswith(prefix) and len(path) > len(prefix):
            return resource, {"proxy": path[len(prefix):]}
        if path == prefix:
            return resource, None
    return path, None


def http_event(
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | str | None = None,
    query: str = "",
    source_ip: str = "198.51.100.7",
    base64_body: bool = False,
    stage: str = STAGE,
) -> dict:
    """A REST API's Lambda proxy event (1.0): ``path`` without the stage, headers single- and
    multi-valued, the query parsed, the caller's address in ``requestContext.identity``. The
    deployed API's binary media type ``*/*`` makes every body base64 (``base64_body``)."""
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    headers.setdefault("host", HOST)
    raw = body.encode("utf-8") if isinstance(body, str) else body
    params = parse_qs(query, keep_blank_values=True)
    resource, path_parameters = _resource(path)
    event: dict[str, Any] = {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in params.items()} or None,
        "multiValueQueryStringParameters": params or None,
        "pathParameters": path_parameters,
        "stageVariables": None,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": API_ID,
            "domainName": headers["host"],
            "domainPrefix": API_ID,
            "extendedRequestId": f"ext-{time.monotonic_ns()}",
            "httpMethod": method,
            "identity": {"sourceIp": source_ip, "userAgent": headers.get("user-agent", "tests")},
            "path": f"/{stage}{path}",
            "protocol": "HTTP/1.1",
            "requestId": f"req-{time.monotonic_ns()}",
            "requestTime": "30/Nov/2026:00:00:00 +0000",
            "requestTimeEpoch": int(time.time() * 1000),
            "resourceId": "r35ource",
            "resourcePath": resource,
            "stage": stage,
        },
        "body": None,
        "isBase64Encoded": False,
    }
    if raw is not None:
        if base64_body:
            event["body"] = base64.b64encode(raw).decode("ascii")
            event["isBase64Encoded"] = True
        else:
            event["body"] = raw.decode("utf-8")
    return event


def answer_headers(result: dict) -> list[tuple[str, str]]:
    """A proxy answer's headers, every value of a repeated one (``multiValueHeaders``) included."""
    out = list((result.get("headers") or {}).items())
    for name, values in (result.get("multiValueHeaders") or {}).items():
        out += [(name, v) for v in values]
    return out


def set_cookies(result: dict) -> list[str]:
    """The ``Set-Cookie`` values of a proxy answer."""
    return [v for k, v in answer_headers(result) if k.lower() == "set-cookie"]


def as_the_viewer_gets_it(result: dict) -> dict:
    """``result`` with the status and (single-valued) headers the distribution's viewer-response
    function leaves: a refusal API Gateway carried as a 200 is a refusal again."""
    status, headers = restore_challenge(result["statusCode"], {k.lower(): v for k, v in
                                                                (result.get("headers") or {}).items()})
    return {**result, "statusCode": status, "headers": headers}


def through_cloudfront(result: dict) -> tuple[int, list[tuple[str, str]]]:
    """The status and headers a viewer gets for ``result`` through the distribution: its
    viewer-response function (``ChallengeFunction``) restores a carried refusal."""
    headers = answer_headers(result)
    single = {k.lower(): v for k, v in headers if k.lower() != "set-cookie"}
    status, restored = restore_challenge(result["statusCode"], single)
    return status, [*restored.items(), *[(k, v) for k, v in headers if k.lower() == "set-cookie"]]


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
    """Sends each request as a REST API event to the next instance in turn; answers as CloudFront's
    viewer-response function leaves them."""

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
        status, out_headers = through_cloudfront(result)
        return httpx2.Response(status, headers=out_headers, content=response_body(result), request=request)
