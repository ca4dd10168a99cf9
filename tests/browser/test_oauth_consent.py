"""The consent view itself: another origin cannot frame it (no clickjacked Allow), an unknown
request says so, and after Allow the page has kept no URL with the code."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx2
from playwright.sync_api import expect

from tests.browser.oauth_person import answer_consent
from tests.browser.pages import ready, sign_in
from tests.oauth.conftest import REDIRECT, pkce


def _consent_url(origin: str) -> str:
    """An /oauth/authorize request of a freshly registered client: the consent page's URL."""
    with httpx2.Client(base_url=origin, timeout=30) as http:
        client_id = http.post("/oauth/register", json={"client_name": "Framed client", "redirect_uris": [REDIRECT]}
                              ).json()["client_id"]
        _, challenge = pkce()
        answer = http.get("/oauth/authorize", params={
            "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s",
            "code_challenge": challenge, "code_challenge_method": "S256"})
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def test_another_origin_cannot_frame_the_consent_page(live, tenant, page, watch):
    _, server = live
    sign_in(page, tenant)
    consent = _consent_url(server.origin)
    attacker = server.origin.replace("localhost", "127.0.0.1") + "/attack"  # another origin, same machine
    page.route(attacker, lambda route: route.fulfill(
        status=200, content_type="text/html",
        body=f'<!doctype html><p>Win a prize!</p><iframe id="f" src="{consent}" width="800" height="600"></iframe>'))
    page.goto(attacker)
    page.wait_for_timeout(300)
    framed = [f for f in page.frames if f != page.main_frame]
    assert framed, "the iframe was not created"
    # Blocked by frame-ancestors 'none' (and X-Frame-Options: DENY): chromium shows its error page
    # in the frame instead; nothing of the consent page loaded there.
    assert [f.url for f in framed] == ["chrome-error://chromewebdata/"]
    assert page.frame_locator("#f").get_by_role("button", name="Allow").count() == 0

    headers = httpx2.get(consent).headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"


def test_an_unknown_or_answered_request_says_so(live, tenant, page):
    _, server = live
    sign_in(page, tenant)
    page.goto(f"{server.origin}/confirm?authorize=no-such-request-0123456789")
    ready(page, "consent")
    expect(page.locator('[data-outcome="authorization_not_found"]')).to_contain_text("Start connecting again")
    expect(page.get_by_role("button", name="Allow")).to_have_count(0)


def test_after_allow_the_page_keeps_no_url_with_the_code(live, tenant, page, watch):
    _, server = live
    sign_in(page, tenant)
    consent = _consent_url(server.origin)
    page.goto(consent)
    ready(page, "consent")
    expect(page.locator('[data-field="client-name"]')).to_have_text("Framed client")
    callback = answer_consent(page, REDIRECT)
    code = parse_qs(urlsplit(callback).query)["code"][0]
    # The consent page replaced itself: going back does not return to a page that had the code,
    # and nothing the page stored holds it.
    stored = page.evaluate("() => JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage})")
    assert code not in stored
    assert all(code not in url for url in watch.urls if url.startswith(server.origin))
    page.go_back()
    assert code not in page.url
    assert watch.errors == [], watch.errors
