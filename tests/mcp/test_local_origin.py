"""The local ``/mcp`` answers only requests that name this server (docs/security.md): a ``Host``
of a loopback name or the public URL's host, and an ``Origin``, when a browser sends one, equal
to the configured public origin — not any ``http://localhost:<port>``. Clients outside a browser
send no ``Origin`` and are served as before."""

from __future__ import annotations

import httpx2
import pytest

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "origin-test", "version": "1"}}}


def post(tenant, **headers: str) -> httpx2.Response:
    return httpx2.post(tenant.url, json=INITIALIZE, timeout=10, headers={
        "Authorization": f"Bearer {tenant.token}", "Accept": "application/json, text/event-stream", **headers})


def test_no_origin_and_the_public_origin_are_served(tenant):
    assert post(tenant).status_code == 200
    assert post(tenant, Origin=tenant.origin).status_code == 200
    assert post(tenant, Origin=tenant.origin + "/").status_code == 200


@pytest.mark.parametrize("origin", [
    "http://localhost:1", "http://127.0.0.1:{port}", "https://localhost:{port}", "http://evil.example", "null",
])
def test_any_other_origin_is_refused_before_the_token_is_looked_at(tenant, live, origin):
    _, server = live
    refused = post(tenant, Origin=origin.format(port=server.port))
    assert refused.status_code == 403
    assert "Origin" in refused.text
    assert "mcp-session-id" not in refused.headers


def test_another_origin_is_refused_even_without_a_token(tenant):
    response = httpx2.post(tenant.url, json=INITIALIZE, headers={"Origin": "http://localhost:1"}, timeout=10)
    assert response.status_code == 403


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "localhost.evil.example", "127.0.0.2"])
def test_a_foreign_host_is_refused(tenant, host):
    """DNS rebinding: a name the attacker controls, pointed at 127.0.0.1."""
    assert post(tenant, Host=host).status_code == 421


def test_loopback_hosts_are_served(tenant, live):
    _, server = live
    for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}", "localhost"):
        assert post(tenant, Host=host).status_code == 200, host


def test_the_check_follows_the_configured_public_url(tenant, configure):
    configure(public_url="https://confirm.example.com")
    assert post(tenant, Origin="https://confirm.example.com").status_code == 200
    assert post(tenant, Host="confirm.example.com").status_code == 200
    assert post(tenant, Origin=tenant.origin).status_code == 403
