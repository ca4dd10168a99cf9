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


def _current_nav(page) -> list[str]:
    return page.locator('#nav a[aria-current="page"]').all_inner_texts()


def test_a_registered_clients_name_is_shown_as_its_claim_with_where_it_returns(live, tenant, page, watch):
    _, server = live
    sign_in(page, tenant)
    page.goto(f"{server.origin}/confirm")
    ready(page, "confirm")
    assert _current_nav(page) == ["Waiting"]
    page.goto(_consent_url(server.origin))
    ready(page, "consent")
    expect(page.get_by_role("heading", level=1)).to_have_text("Connect an app calling itself “Framed client”?")
    expect(page.locator('[data-field="unverified"]')).to_have_text(
        "Unverified nameAny app can call itself “Framed client”: countersign cannot check who made it.")
    expect(page.locator('[data-field="returns-to"]')).to_have_text(
        "It will return to 127.0.0.1, an app on this device.")
    expect(page.locator('[data-field="decision"]')).to_have_text(
        "Allow it only if you started connecting an app just now. If you did not, deny.")
    expect(page.locator('[data-field="verified"]')).to_have_count(0)
    assert _current_nav(page) == []  # the consent screen is none of the nav's views
    assert watch.errors == [], watch.errors


def test_a_host_that_publishes_the_client_and_receives_the_answer_vouches_for_it(live, tenant, page,
                                                                                document_host, cimd_fetcher):
    _, server = live
    home = f"https://localhost:{document_host.port}/callback"
    url = document_host.serve_json("/page-vouched.json", {
        "client_id": document_host.url("/page-vouched.json"), "client_name": "Docs app", "redirect_uris": [home],
        "grant_types": ["authorization_code"], "response_types": ["code"], "token_endpoint_auth_method": "none"})
    _, challenge = pkce()
    with httpx2.Client(base_url=server.origin, timeout=30) as http:
        answer = http.get("/oauth/authorize", params={
            "response_type": "code", "client_id": url, "redirect_uri": home, "state": "s",
            "code_challenge": challenge, "code_challenge_method": "S256"})
    assert answer.status_code == 302, answer.text
    sign_in(page, tenant)
    page.goto(answer.headers["location"])
    ready(page, "consent")
    expect(page.get_by_role("heading", level=1)).to_have_text("Connect “Docs app” from localhost?")
    expect(page.locator('[data-field="verified"]')).to_have_text(
        "Verified: localhostlocalhost publishes this app’s name and is where it returns.")
    expect(page.locator('[data-field="unverified"]')).to_have_count(0)
    expect(page.locator('[data-field="returns-to"]')).to_have_text("It will return to localhost.")


def test_a_refused_request_shows_the_pages_error_view_with_a_way_back(live, tenant, page, watch):
    _, server = live
    sign_in(page, tenant)
    _, challenge = pkce()
    page.goto(f"{server.origin}/oauth/authorize?response_type=code&client_id=no-such-client&state=s"
              f"&redirect_uri={REDIRECT}&code_challenge={challenge}&code_challenge_method=S256")
    ready(page, "consent")
    assert page.url == f"{server.origin}/confirm?authorize_error=unknown_client"
    expect(page.get_by_role("heading", level=1)).to_have_text("This app is not registered here")
    expect(page.get_by_role("alert")).to_contain_text("a registration countersign does not know")
    expect(page.locator("main")).to_contain_text("Nothing was connected. Start connecting again from the app.")
    assert "invalid_" not in page.locator("main").inner_text()  # no raw OAuth error
    assert _current_nav(page) == []
    page.get_by_role("link", name="See what waits for you").click()
    ready(page, "confirm")
    assert page.url == f"{server.origin}/confirm" and _current_nav(page) == ["Waiting"]
    # A reason the page does not know (a hand-made address) reads as an incomplete request.
    page.goto(f"{server.origin}/confirm?authorize_error=<b>call+us</b>")
    ready(page, "consent")
    expect(page.get_by_role("heading", level=1)).to_have_text("This connection request is incomplete")
    assert "call" not in page.locator("main").inner_text()
    assert watch.errors == [], watch.errors
