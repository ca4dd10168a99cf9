"""OAuth over real HTTP against the live server: a client the way an MCP client behaves (raw
requests, so every refusal can be asked for), and the person's consent the way the page does it."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.support.confirm_page import Page
from tests.support.harness import SECRETS, new_tenant

REDIRECT = "http://127.0.0.1:45678/callback"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/oauth/" in str(item.fspath):
            item.add_marker(pytest.mark.oauth)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    SECRETS.add(verifier)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


@dataclass
class Flow:
    """One client (registered by DCR unless given) and a signed-in person on the page."""

    origin: str
    http: httpx2.Client
    page: Page
    workspace_id: str
    client_id: str = ""

    def register(self, redirect_uris=(REDIRECT,), name: str = "Raw client", **extra) -> httpx2.Response:
        response = self.http.post("/oauth/register", json={"client_name": name, "redirect_uris": list(redirect_uris),
                                                           "grant_types": ["authorization_code", "refresh_token"],
                                                           "response_types": ["code"], **extra})
        if response.status_code == 201:
            self.client_id = response.json()["client_id"]
        return response

    def authorize(self, challenge: str, *, redirect_uri: str | None = REDIRECT, **params) -> httpx2.Response:
        query = {"response_type": "code", "client_id": self.client_id, "code_challenge": challenge,
                 "code_challenge_method": "S256", "state": "st-1", "resource": f"{self.origin}/mcp", **params}
        if redirect_uri is not None:
            query["redirect_uri"] = redirect_uri
        return self.http.get("/oauth/authorize", params={k: v for k, v in query.items() if v is not None})

    def request_id(self, response: httpx2.Response) -> str:
        assert response.status_code == 302, response.text
        location = response.headers["location"]
        assert location.startswith(f"{self.origin}/confirm?authorize="), location
        return parse_qs(urlsplit(location).query)["authorize"][0]

    def allow(self, request_id: str, **kw) -> httpx2.Response:
        return self.page.post(f"/api/oauth/requests/{request_id}/allow", {"workspaceId": self.workspace_id}, **kw)

    def code(self, challenge: str, **params) -> str:
        """Authorize and Allow: the code from the redirect the page would go to."""
        allowed = self.allow(self.request_id(self.authorize(challenge, **params)))
        assert allowed.status_code == 200, allowed.text
        query = parse_qs(urlsplit(allowed.json()["redirectTo"]).query)
        SECRETS.add(query["code"][0])
        return query["code"][0]

    def token(self, **form) -> httpx2.Response:
        response = self.http.post("/oauth/token", data={"client_id": self.client_id, **form})
        if response.status_code == 200:
            SECRETS.update(response.json()[k] for k in ("access_token", "refresh_token") if k in response.json())
        return response

    def exchange(self, code: str, verifier: str, **extra) -> httpx2.Response:
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier, "redirect_uri": REDIRECT,
                "resource": f"{self.origin}/mcp", **extra}
        return self.token(**form)

    def tokens(self) -> dict:
        verifier, challenge = pkce()
        response = self.exchange(self.code(challenge), verifier)
        assert response.status_code == 200, response.text
        return response.json()

    def mcp(self, token: str | None, body: dict | None = None) -> httpx2.Response:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                   "MCP-Protocol-Version": "2025-11-25"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return self.http.post("/mcp", headers=headers, json=body or {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}})


@pytest.fixture
def flow(live, tenant):
    _, server = live
    http = httpx2.Client(base_url=server.origin, timeout=30, follow_redirects=False)
    page = Page(server.origin).sign_in(tenant.runtime, tenant.person)
    found = Flow(server.origin, http, page, tenant.workspace_id)
    assert found.register().status_code == 201
    yield found
    http.close()
    page.close()


@pytest.fixture
def other_tenant(live):
    runtime, server = live
    return new_tenant(runtime, server.origin)
