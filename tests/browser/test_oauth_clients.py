"""The TypeScript SDKs' OAuth clients (@modelcontextprotocol/sdk 1.32, @modelcontextprotocol/client
2.4) and mcp-remote 0.15, from npm, through the same flow as the Python SDK: discovery,
registration (dynamic, or a client ID metadata document), the authorize URL opened in chromium
by the person (signed in), Allow, the client's own redirect handling, the token, a held write,
the card confirmed on the page, and the agent seeing it completed."""

from __future__ import annotations

import json
import os
import queue
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.oauth_person import answer_consent, open_consent
from tests.browser.pages import card, ready, sign_in
from tests.support.harness import SECRETS, TRANSCRIPT

CLIENTS = Path(__file__).resolve().parents[1] / "clients"


class Node:
    """A node process whose stdout and stderr lines arrive on two queues."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None):
        if shutil.which("node") is None or not (CLIENTS / "node_modules" / "mcp-remote").is_dir():
            pytest.fail("the TypeScript MCP clients are not installed: run scripts/bootstrap --node")
        self.process = subprocess.Popen(["node", *args], cwd=CLIENTS, env={**os.environ, **(env or {})},
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, bufsize=1)
        self.queues: dict[str, queue.Queue[str]] = {"stdout": queue.Queue(), "stderr": queue.Queue()}
        self.seen: list[str] = []
        for name, lines in self.queues.items():
            threading.Thread(target=self._pump, args=(getattr(self.process, name), lines), daemon=True).start()

    def _pump(self, stream, lines: queue.Queue[str]) -> None:
        for line in stream:
            self.seen.append(line)
            lines.put(line.rstrip("\n"))

    def line(self, stream: str = "stdout", timeout: float = 30) -> str:
        try:
            return self.queues[stream].get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no answer from node:\n" + "".join(self.seen[-40:])) from None

    def send(self, obj) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(obj) + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _confirm_on_page(page, server, card_id: str, client_name: str) -> None:
    page.goto(f"{server.origin}/confirm")
    ready(page, "confirm")
    one = card(page, card_id)
    expect(one.locator(".meta")).to_contain_text(f"Asked by {client_name}")
    one.get_by_role("button", name="Confirm").click()
    expect(one.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")


@pytest.mark.parametrize("sdk,registration", [("sdk1", "dynamic"), ("sdk1", "metadata document"),
                                              ("client2", "dynamic"), ("client2", "metadata document")])
def test_typescript_sdk_connects_with_oauth(live, tenant, page, sdk, registration, document_host, cimd_fetcher):
    _, server = live
    name = f"TypeScript {sdk} ({registration})"
    redirect = f"http://127.0.0.1:{_free_port()}/callback"
    metadata_url = "-"
    if registration == "metadata document":
        metadata_url = document_host.serve_json(f"/{sdk}.json", {
            "client_id": document_host.url(f"/{sdk}.json"), "client_name": name, "redirect_uris": [redirect],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        })
    sign_in(page, tenant)
    node = Node(["oauth.mjs", sdk, tenant.url, redirect, metadata_url, name])
    try:
        first = json.loads(node.line())
        assert "authorize" in first, first
        open_consent(page, first["authorize"])
        expect(page.locator('[data-field="client-name"]')).to_have_text(name)
        node.send({"callback": answer_consent(page, redirect)})
        answer = json.loads(node.line())
        assert "held" in answer, answer
        held = answer["held"]
        assert held["status"] == "pending", held
        _confirm_on_page(page, server, held["confirmationId"], name)
        node.send({"poll": held["confirmationId"]})
        status = json.loads(node.line())
        assert status.get("status", {}).get("status") == "completed", status
        assert tenant.note("n1")["text"] == f"from {sdk}"
        secrets = json.loads(node.line())["secrets"]
        assert len(secrets) == 4  # code, verifier, access and refresh token: all seen, none printed
        SECRETS.update(secrets)
        TRANSCRIPT.append(json.dumps([held, status]).encode())
    finally:
        node.stop()


def test_mcp_remote_connects_with_oauth_and_proxies_a_held_write(live, tenant, page, tmp_path):
    _, server = live
    callback_port = _free_port()
    sign_in(page, tenant)
    node = Node(["node_modules/mcp-remote/dist/proxy.js", tenant.url, str(callback_port)],
                env={"MCP_REMOTE_CONFIG_DIR": str(tmp_path), "BROWSER": "/bin/true"})
    try:
        while "Please authorize this client by visiting:" not in node.line("stderr"):
            pass
        authorize_url = node.line("stderr").strip()
        open_consent(page, authorize_url)
        expect(page.locator('[data-field="redirect-host"]')).to_contain_text("localhost")
        client_name = page.locator('[data-field="client-name"]').inner_text()
        # Allow: chromium goes to mcp-remote's own callback server, which takes the code.
        with page.expect_response(f"http://localhost:{callback_port}/oauth/callback**") as came_back:
            page.get_by_role("button", name="Allow").click()
        assert came_back.value.status == 200

        def rpc(message_id: int, method: str, params: dict) -> dict:
            node.send({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params})
            while True:
                line = node.line()
                found = json.loads(line)
                if found.get("id") == message_id:
                    TRANSCRIPT.append(line.encode())
                    return found

        rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "stdio host", "version": "1"}})
        node.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        held = rpc(2, "tools/call", {"name": "publish_note", "arguments": {"note_id": "n2", "text": "via mcp-remote"}})
        held = held["result"]["structuredContent"]
        assert held["status"] == "pending", held
        _confirm_on_page(page, server, held["confirmationId"], client_name)
        status = rpc(3, "tools/call", {"name": "get_confirmation_status",
                                       "arguments": {"confirmation_id": held["confirmationId"]}})
        assert status["result"]["structuredContent"]["status"] == "completed", status
        assert tenant.note("n2")["text"] == "via mcp-remote"
    finally:
        node.stop()
        for path in tmp_path.rglob("*tokens.json"):  # what mcp-remote kept: into the secret scan
            tokens = json.loads(path.read_text())
            SECRETS.update(str(tokens[k]) for k in ("access_token", "refresh_token") if tokens.get(k))
    [connection] = [c for c in tenant.store.connections.list_connections(tenant.workspace_id) if c.name == client_name]
    assert not connection.revoked
