"""Talking to an upstream MCP server: one short session per operation.

Every operation (list the tools; call one tool, after checking its live definition against its
pin) opens a session, does its work and closes it. Nothing is kept between calls, so the same
code runs in the local server, in the CLI and in a Lambda function; a stdio upstream is a child
process for the length of one operation (about 200 ms to start one).

The gate is synchronous; :func:`run` runs one operation on an event loop of its own thread, so it
may be called from a request handler's thread or from inside a running loop alike.

What a failure means for a write (:class:`UpstreamError`): ``sent=False`` — nothing reached the
upstream (it could not be reached, its tools could not be listed, the tool changed); ``sent=True``
with :class:`OutcomeUnknown` — the call was sent and no answer came (the connection closed, the
time ran out): it may or may not have run, and it is never sent again by itself.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .env import Link

T = TypeVar("T")


class UpstreamError(Exception):
    def __init__(self, message: str, *, sent: bool = False):
        super().__init__(message)
        self.message = message
        self.sent = sent


class Unreachable(UpstreamError):
    """Nothing reached the upstream because it could not be reached (refused or dropped
    connection, no answer in time): says nothing about its tools or data, unlike a refusal."""


class OutcomeUnknown(UpstreamError):
    def __init__(self, message: str):
        super().__init__(message, sent=True)


def dump(tool: types.Tool) -> dict[str, Any]:
    return tool.model_dump(by_alias=True, mode="json", exclude_none=True)


def _client(link: Link) -> Client:
    if link.url:
        http = httpx2.AsyncClient(headers=link.headers, timeout=link.timeout, follow_redirects=False)
        return Client(streamable_http_client(link.url, http_client=http), mode="legacy",
                      read_timeout_seconds=link.timeout)
    params = StdioServerParameters(command=link.command[0], args=list(link.command[1:]))
    return Client(params, mode="legacy", read_timeout_seconds=link.timeout)


def _words(exc: BaseException) -> str:
    """The upstream's own words for a failure (the first MCP error inside any exception group)."""
    if isinstance(exc, MCPError):
        return exc.error.message
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _words(inner)
            if found:
                return found
    return f"{type(exc).__name__}: {exc}".rstrip(": ")


# What the SDK's client says itself when no answer can come (mcp.shared.jsonrpc_dispatcher,
# mcp.client.streamable_http): the connection or the SSE stream closed, or the request timed out.
_LOCAL_CLOSED = re.compile(r"Connection closed|SSE stream (ended|failed)\b.*", re.S)
_LOCAL_TIMEOUT = re.compile(r"Request '.*' timed out", re.S)


def _no_answer(error: types.ErrorData) -> bool:
    """Whether ``error`` is the SDK's own word that no answer came (the connection closed, the
    request timed out), not an upstream's error response that happens to carry the same code:
    -32000 is also JSON-RPC's generic "server error", which an upstream may well answer."""
    if error.code == types.CONNECTION_CLOSED:
        return bool(_LOCAL_CLOSED.fullmatch(error.message))
    return error.code == types.REQUEST_TIMEOUT and bool(_LOCAL_TIMEOUT.fullmatch(error.message))


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure to reach the upstream (a transport failure, a closed
    connection, a timeout), not an answer from it. An exception group counts when every failure
    in it does."""
    if isinstance(exc, BaseExceptionGroup):
        return bool(exc.exceptions) and all(_unreachable(e) for e in exc.exceptions)
    if isinstance(exc, MCPError):
        return _no_answer(exc.error)
    return isinstance(exc, (OSError, TimeoutError, httpx2.TransportError, anyio.BrokenResourceError,
                            anyio.ClosedResourceError, anyio.EndOfStream))


def _error_of(exc: BaseException) -> types.ErrorData | None:
    if isinstance(exc, MCPError):
        return exc.error
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _error_of(inner)
            if found is not None:
                return found
    return None


async def _list(c: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor = None
    while True:
        page = await c.session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor or len(tools) > 1000:
            return tools


async def list_tools(link: Link) -> list[dict[str, Any]]:
    """Every tool the upstream lists now, as plain JSON."""
    try:
        with anyio.fail_after(link.timeout):
            async with _client(link) as c:
                return link.redact([dump(t) for t in await _list(c)])
    except Exception as exc:  # noqa: BLE001 - any failure here means the tools cannot be listed now
        kind = Unreachable if _unreachable(exc) else UpstreamError
        raise kind(f"{link.name} could not be reached: {link.redact(_words(exc))}") from None


async def call(link: Link, tool: str, arguments: dict[str, Any], check: Callable[[dict | None], str | None]) -> dict:
    """Call ``tool`` once and return the upstream's result as plain JSON (``isError`` included).

    ``check`` sees the tool's live definition (None if no longer listed) before anything is sent;
    a sentence it returns stops the call (:class:`UpstreamError`, nothing sent)."""
    sent = False
    refused: str | None = None
    try:
        with anyio.fail_after(link.timeout):
            async with _client(link) as c:
                listed = {t.name: dump(t) for t in await _list(c)}
                refused = check(listed.get(tool))
                if refused is None:
                    request = types.CallToolRequest(params=types.CallToolRequestParams(name=tool,
                                                                                       arguments=arguments))
                    sent = True
                    result = await c.session.send_request(request, types.CallToolResult)
                    return link.redact(result.model_dump(by_alias=True, mode="json", exclude_none=True))
    except Exception as exc:  # noqa: BLE001 - sorted into unreachable, refused or unknown below
        words = link.redact(_words(exc))
        if not sent:
            raise UpstreamError(f"{link.name} could not be reached: {words}") from None
        error = _error_of(exc)  # (an upstream's own error response says it answered: refused, not unknown)
        if isinstance(exc, TimeoutError) or error is None or _no_answer(error) or error.code == types.INTERNAL_ERROR:
            raise OutcomeUnknown(words or "no answer") from None
        raise UpstreamError(f"{link.name} refused the call: {words}", sent=True) from None
    raise UpstreamError(refused or "refused")


async def observe(link: Link, checks: dict[str, Callable[[dict | None], str | None]],
                  reads: list[tuple[str, dict[str, Any]]]) -> list[dict]:
    """In one session: check the live definition of every tool in ``checks`` (a sentence returned
    stops everything), then make each read and return its result. Nothing but reads is sent."""
    refused: str | None = None
    try:
        with anyio.fail_after(link.timeout):
            async with _client(link) as c:
                listed = {t.name: dump(t) for t in await _list(c)}
                refused = next((r for name, check in checks.items() if (r := check(listed.get(name)))), None)
                if refused is None:
                    results = []
                    for tool, arguments in reads:
                        request = types.CallToolRequest(params=types.CallToolRequestParams(name=tool,
                                                                                           arguments=arguments))
                        result = await c.session.send_request(request, types.CallToolResult)
                        results.append(link.redact(result.model_dump(by_alias=True, mode="json", exclude_none=True)))
                    return results
    except Exception as exc:  # noqa: BLE001 - reads only: whatever failed, nothing was written
        if _unreachable(exc):
            raise Unreachable(f"{link.name} could not be reached: {link.redact(_words(exc))}") from None
        raise UpstreamError(f"{link.name} could not be read: {link.redact(_words(exc))}") from None
    raise UpstreamError(refused or "refused")


def run(operation: Callable[[], Awaitable[T]]) -> T:
    """Run ``operation`` to the end on a new event loop in a thread of its own."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = anyio.run(operation)
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="countersign-upstream", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
