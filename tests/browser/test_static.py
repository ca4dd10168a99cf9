"""The local server's static handler for web/: page routes, exact asset names, security headers,
nothing else (no listing, no traversal, no other method)."""

from __future__ import annotations

import re
import socket

import httpx2 as httpx
import pytest

from countersign.surfaces.local.page import CONTENT_SECURITY_POLICY, PAGE_ROUTES, SETTINGS_SECTIONS, WEB_DIR

PAGES = ["/", "/confirm", "/confirm?card=c_123", "/history", "/settings", "/signin", "/signin?x=1",
         "/settings/passkeys", "/settings/connections"]


def _security(headers):
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    for directive in ("default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
                      "connect-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"):
        assert directive in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"


@pytest.fixture
def http(live):
    _, server = live
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=10) as client:
        yield client


@pytest.mark.parametrize("path", PAGES)
def test_page_routes_serve_index(http, path):
    r = http.get(path)
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script type="module" src="/app.js"></script>' in r.text
    assert r.headers["cache-control"] == "no-cache"
    _security(r.headers)


@pytest.mark.parametrize("path,kind", [("/app.js", "text/javascript"), ("/cards.js", "text/javascript"),
                                       ("/dom.js", "text/javascript"), ("/app.css", "text/css")])
def test_assets_by_exact_name(http, path, kind):
    r = http.get(path, headers={"accept-encoding": "identity"})
    assert r.status_code == 200 and r.headers["content-type"].startswith(kind)
    assert "max-age" in r.headers["cache-control"] and r.headers["etag"]
    _security(r.headers)
    assert int(r.headers["content-length"]) == len(r.content)
    # gzip when asked, and a 304 for a known ETag.
    z = http.get(path, headers={"accept-encoding": "gzip, br"})
    assert z.headers["content-encoding"] == "gzip" and z.content == r.content
    assert z.headers["vary"] == "Accept-Encoding"
    again = http.get(path, headers={"accept-encoding": "gzip", "if-none-match": z.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    _security(again.headers)
    head = http.head(path, headers={"accept-encoding": "identity"})
    assert (
        head.status_code == 200
        and head.content == b""
        and head.headers["content-length"] == r.headers["content-length"]
    )


@pytest.mark.parametrize("path", [
    "/nope", "/confirm/", "/confirm/x", "/settings/", "/settings/nope",
    "/app.js/", "/web/app.js", "/.gitignore", "/favicon.ico", "/index",
    "/pyproject.toml", "/countersign.db", "/outbox", "/keys/signing.key", "/app.js%00", "/%2e%2e/pyproject.toml",
])
def test_everything_else_is_404(http, path):
    r = http.get(path)
    assert r.status_code == 404
    assert r.headers["x-content-type-options"] == "nosniff"


def test_raw_traversal_is_404(live):
    """A client that does not normalise the path (unlike httpx) still gets nothing outside web/."""
    _, server = live
    for target in (
        "/../pyproject.toml",
        "/..%2fpyproject.toml",
        "/%2e%2e%2fREADME.md",
        "/..\\README.md",
        "//etc/passwd",
    ):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            s.sendall(f"GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        status = data.split(b"\r\n", 1)[0]
        assert b" 404 " in status or b" 400 " in status, (target, status)
        assert b"[project]" not in data and b"root:" not in data


def test_the_page_and_the_server_know_the_same_settings_sections():
    """The page's routes of Settings' sections (web/app.js) are the server's (and so CloudFront's)."""
    app_js = (WEB_DIR / "app.js").read_text()
    listed = re.search(r"const SETTINGS_SECTIONS = \[(.*?)\];", app_js).group(1)
    assert tuple(re.findall(r"'([a-z]+)'", listed)) == SETTINGS_SECTIONS
    assert {f"/settings/{s}" for s in SETTINGS_SECTIONS} <= PAGE_ROUTES


def test_other_methods_are_refused(http):
    r = http.post("/confirm", content=b"x")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD"
    assert http.delete("/app.js").status_code == 405


def test_api_and_mcp_are_not_the_page(http):
    assert http.get("/api/session").headers["content-type"].startswith("application/json")
    assert http.get("/mcp").status_code in (401, 405, 406)
