"""What ``bench/mcp_calls.py`` measures against: real servers on 127.0.0.1, a bare ``mcp`` SDK
server with one trivial tool in the same shapes as ours, and a raw JSON-RPC client.

* ``python bench/mcp_servers.py ours DATA PORT``: the local server as ``countersign serve`` runs it
  (:func:`countersign.surfaces.local.app.build_local`: the stateful ``/mcp`` endpoint behind the local
  Host/Origin check, request limits and bearer auth; the notifier delivering inline after filing
  into ``DATA/outbox``, the file mailer; the upkeep loop). uvicorn's access log is off (on both).
* ``python bench/mcp_servers.py bare - PORT``: the bare SDK server, local shape, under uvicorn.

It prints ``listening`` once the socket is bound.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)
import httpx2
import mcp_contract
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

from countersign.surfaces.mcp.elicitation import CONFIRM_SCHEMA

PACKS = "budget,mail"


def settings_env(data: Path, port: int) -> dict[str, str]:
    return {"COUNTERSIGN_DATA": str(data), "COUNTERSIGN_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "COUNTERSIGN_PACKS": PACKS}


# -- the bare SDK server ---------------------------------------------------------------------------


def bare_server():
    """One trivial tool (``ping``); one that asks a 2026-07-28 question and answers the retry
    (``confirm``: the protocol's two rounds, with sealed request state as ours, and no work); and
    one that makes one durable write (``record``: a row inserted in its own transaction in a SQLite
    file in WAL mode with ``synchronous = FULL``, as countersign's store commits, and nothing else),
    and the same write carrying a held budget change's three arguments (``record_budget``); and the
    least a server keeping countersign's contract does for a held budget change (``hold``:
    :mod:`mcp_contract`)."""
    server = MCPServer("bare", request_state_security=RequestStateSecurity(keys=[b"k" * 32], ttl=900,
                                                                           bind_principal=None))
    db = _durable_table()

    @server.tool()
    def ping() -> dict:
        return {"ok": True}

    @server.tool()
    def record() -> dict:
        with db:
            db.execute("INSERT INTO rows (at) VALUES (?)", (time.time(),))
        return {"ok": True}

    @server.tool()
    def record_budget(category_id: str, month: str, amount: str) -> dict:
        """``record`` carrying a held budget change's arguments: what the protocol alone costs for
        arguments (their validation, the transport's ``Mcp-Param-*`` check of them) beside the commit."""
        with db:
            db.execute("INSERT INTO rows (at) VALUES (?)", (time.time(),))
        return {"ok": True, "category_id": category_id, "month": month, "amount": amount}

    server.tool(name="hold")(mcp_contract.hold)  # the contract's least for a held call (bench/mcp_contract.py)

    @server.tool()
    async def confirm(ctx: Context) -> dict | InputRequiredResult:
        if ctx.request_state is None:
            params = ElicitRequestFormParams(message="Apply?", requested_schema=CONFIRM_SCHEMA)
            return InputRequiredResult(input_requests={"confirm": ElicitRequest(params=params)}, request_state="{}")
        return {"status": "completed"}

    return server


@functools.cache
def _durable_table() -> sqlite3.Connection:
    """The process's one table for ``record`` (the stateless shape builds a server per request)."""
    db = sqlite3.connect(str(Path(tempfile.mkdtemp(prefix="bare-")) / "bare.db"), check_same_thread=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, at REAL)")
    return db


def _no_rebinding():
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def bare_local_app():
    """The bare server in the local server's shape: one long-lived session manager (its lifespan
    must run), stateful sessions, SSE allowed — as :func:`countersign.surfaces.mcp.transport.stateful_app`."""
    return bare_server().streamable_http_app(streamable_http_path="/mcp", stateless_http=False, json_response=False,
                                             transport_security=_no_rebinding())


class BareStateless:
    """The bare server in the Lambda shape: a fresh session manager per request inside the SDK's
    lifespan, JSON responses, no auth, no store — as :class:`countersign.surfaces.mcp.transport.StatelessMCP`."""

    def __init__(self):
        self.server = bare_server()

    async def __call__(self, scope, receive, send):
        app = self.server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True,
                                              transport_security=_no_rebinding())
        async with app.router.lifespan_context(app):
            await app(scope, receive, send)


# -- real servers in their own processes ------------------------------------------------------------


@contextlib.contextmanager
def server_process(kind: str, data: Path | None, port: int):
    """A server (``ours`` or ``bare``) in a child process on 127.0.0.1:``port``, until the block ends."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, __file__, kind, str(data or "-"), str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "listening":
                break
        else:
            raise RuntimeError(f"the {kind} server did not start (exit {proc.wait()})")
        # keep reading what it prints (the SDK logs a failed tool at INFO): a full pipe would stop it
        threading.Thread(target=proc.stdout.read, daemon=True).start()
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(kind: str, data: str, port: int) -> int:
    from countersign import settings as settings_mod
    from countersign.surfaces.local.app import build_local
    from countersign.surfaces.local.run import serve

    if kind == "ours":
        app, _ = build_local(settings_mod.load(settings_env(Path(data), port)))
    else:
        app = bare_local_app()
    return serve(app, "127.0.0.1", port, on_listening=lambda: print("listening", flush=True), log_level="warning")


# -- a raw JSON-RPC client ----------------------------------------------------------------------------


class Capture(httpx2.AsyncBaseTransport):
    """Wraps a transport and keeps the last ``tools/call`` request the SDK client sent (headers and
    body): from a client that declares no elicitation (``plain``), from one that does (``asking``),
    and an answer round (``answer``), as templates for :class:`RawClient`."""

    def __init__(self, inner: httpx2.AsyncBaseTransport):
        self.inner = inner
        self.templates: dict[str, tuple[dict[str, str], dict[str, Any]]] = {}

    async def handle_async_request(self, request):
        if request.method == "POST":
            body = json.loads(await request.aread() or b"null")
            if isinstance(body, dict) and body.get("method") == "tools/call":
                meta = body["params"].get("_meta") or {}
                caps = next((v for k, v in meta.items() if k.endswith("clientCapabilities")), None) or {}
                key = "answer" if "requestState" in body["params"] else "asking" if caps.get("elicitation") else "plain"
                self.templates[key] = (dict(request.headers), body)
        return await self.inner.handle_async_request(request)

    async def aclose(self):
        await self.inner.aclose()


SKIP_HEADERS = {"host", "content-length", "mcp-session-id", "authorization", "mcp-name"}


class RawClient:
    """Plain JSON-RPC posts with httpx, shaped like the SDK client's own (from :class:`Capture`)."""

    def __init__(self, http: httpx2.AsyncClient, url: str, templates: dict):
        self.http, self.url, self.templates, self.id = http, url, templates, 1000

    async def call(self, tool: str, arguments: dict, *, asking: bool = False, answer: dict | None = None,
                   state: str | None = None) -> dict:
        headers, body = self.templates["answer" if state is not None else "asking" if asking else "plain"]
        self.id += 1
        params = {k: v for k, v in body["params"].items() if k not in ("inputResponses", "requestState")}
        params.update(name=tool, arguments=arguments)
        if state is not None:
            params.update(inputResponses={"confirm": answer}, requestState=state)
        sent = {**body, "id": self.id, "params": params}
        h = {k: v for k, v in headers.items() if k.lower() not in SKIP_HEADERS}
        h["mcp-name"] = tool
        response = await self.http.post(self.url, content=json.dumps(sent), headers=h)
        response.raise_for_status()
        return _result(response)

    async def ask_and_answer(self, tool: str, arguments: dict, answer: dict) -> dict:
        first = await self.call(tool, arguments, asking=True)
        if "requestState" not in first:
            raise RuntimeError(f"{tool} was not asked: {first}")
        return await self.call(tool, arguments, answer=answer, state=first["requestState"])


def _result(response) -> dict:
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()][-1]
    message = json.loads(text)
    if "error" in message:
        raise RuntimeError(f"JSON-RPC error: {message['error']}")
    return message["result"]


def structured(result: dict) -> dict:
    return result.get("structuredContent") or {}


def wait_until(check, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1], sys.argv[2], int(sys.argv[3])))
