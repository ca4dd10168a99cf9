"""Driving a real server process from a test: start it (optionally set to die at a crash point),
file and answer requests over HTTP, restart it, and read what the shared SQLite file holds."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2

from countersign.core.ids import new_id
from countersign.identity import accounts
from countersign.store.sqlite import SQLiteStore
from tests.budget.ledger import seed_small
from tests.support.confirm_page import Page
from tests.support.harness import mcp_client
from tests.support.stepped_toolset import seed_parcels

from .forked import start_server

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    def __init__(self, data: Path, port: int, env: dict[str, str]):
        self.data, self.port = data, port
        full = {k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")}
        full.update(PYTHONPATH=os.pathsep.join((str(REPO), str(REPO / "functions"))), **env)
        self.log = open(data / f"server-{port}-{time.time_ns()}.log", "wb")
        self.proc = start_server([str(data), str(port)], full, self.log)
        self._wait_ready()

    @property
    def origin(self) -> str:
        return f"http://localhost:{self.port}"

    def _wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}: {self.output()}")
            try:
                if httpx2.get(f"{self.origin}/", timeout=1).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError("the server did not start: " + self.output())

    def output(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-3000:]

    def killed(self, timeout: float = 10) -> bool:
        """Whether the process died of SIGKILL (its crash point, or :meth:`kill`)."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return self.proc.returncode == -signal.SIGKILL

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


@dataclass
class Crashable:
    """One data folder, one workspace, and the server processes that come and go over it."""

    data: Path
    port: int = field(default_factory=free_port)
    server: ServerProcess | None = None

    def __post_init__(self) -> None:
        self.store = SQLiteStore(str(self.data / "countersign.db"))
        self.workspace, self.person = accounts.create_workspace(self.store.workspaces, "Acme",
                                                                f"{new_id('u')}@example.com")
        seed_small(self.store, self.workspace.id)
        seed_parcels(self.store, self.workspace.id)
        self.token = accounts.create_connection(self.store.workspaces, self.store.connections, self.workspace.id,
                                                self.person.id, "Agent").token

    def start(self, **env: str) -> ServerProcess:
        if self.server is not None:
            self.server.stop()
        self.server = ServerProcess(self.data, self.port, {k.upper(): v for k, v in env.items()})
        return self.server

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
        self.store.close()

    # -- an agent ----------------------------------------------------------------------------------

    def call(self, tool: str, args: dict) -> dict:
        async def go() -> dict:
            async with mcp_client(f"{self.server.origin}/mcp", self.token) as client:
                result = await client.call_tool(tool, args)
                return result.structured_content or {"error": result.content[0].text}

        return asyncio.run(go())

    # -- the person on the page --------------------------------------------------------------------

    def page(self) -> Page:
        return Page(self.server.origin).sign_in(self, self.person)

    def click(self, card_id: str, verb: str = "confirm") -> httpx2.Response:
        return self.page().post(f"/api/cards/{card_id}/{verb}")

    @property
    def desk(self):  # what Page.sign_in reads: the clock
        return self

    def now(self) -> int:
        return int(time.time())

    # -- what the file holds -----------------------------------------------------------------------

    def card(self, card_id: str):
        return self.store.cards.get_card(self.workspace.id, card_id, self.now())

    def events(self, card_id: str) -> list[str]:
        return [e.event for e in self.store.cards.audit_trail(self.workspace.id, card_id)]

    def payees(self, payee: str) -> int:
        return sum(1 for d in self.store.docs.list_docs(self.workspace.id, "budget_txns")
                   for t in d.data["transactions"] if t["payee"] == payee)

    def emails(self) -> list[Path]:
        folder = self.data / "outbox"
        return sorted(folder.glob("*.eml")) if folder.is_dir() else []

    def wait_for(self, condition, timeout: float = 20, what: str = "the condition") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}: {self.server.output() if self.server else ''}")


class Payments:
    """An outside payments service on loopback that honours ``Idempotency-Key``: one charge per key."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.charges: dict[str, dict[str, Any]] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # http.server's name
                key = self.headers["Idempotency-Key"]
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.calls.append(key)
                charge = outer.charges.setdefault(key, {"charge_id": f"ch_{len(outer.charges) + 1}", **body})
                raw = json.dumps(charge).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/charges"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
