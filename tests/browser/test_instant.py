"""Instant on a slow phone, by structure (bench/page.py measures the times; tests never assert them):
every module the page imports is fetched with the page's first round of requests, and so are the
first view's API answers, each asked for once; the view is drawn without waiting for the session;
signed out, the sign-in view's modules come with the first round too; the one inline script is the
one the CSP allows."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from countersign.identity.sessions import mint_signin_token
from countersign.surfaces.local.page import CONTENT_SECURITY_POLICY, EARLY_SCRIPT_HASH, WEB_DIR
from tests.browser.pages import file_cards, new_context, ready, sign_in, status_of

SLOW_4G = {"offline": False, "latency": 150, "downloadThroughput": 1.6e6 / 8, "uploadThroughput": 750e3 / 8}
STATIC_IMPORT = re.compile(r"^import\s[^'\"]*?from\s+'\./([\w-]+\.js)';", re.M)


def static_imports(name: str, seen: set[str] | None = None) -> set[str]:
    """Every module ``name`` imports statically, directly or not (dynamic import() excluded)."""
    seen = set() if seen is None else seen
    for module in STATIC_IMPORT.findall((WEB_DIR / name).read_text()):
        if module not in seen:
            seen.add(module)
            static_imports(module, seen)
    return seen


def index_html() -> str:
    return (Path(WEB_DIR) / "index.html").read_text()


def test_every_module_the_page_imports_is_modulepreloaded():
    imported = static_imports("app.js")
    assert {"dom.js", "cards.js", "strings.js"} <= imported  # the parser above reads them
    assert "passkeys.js" not in imported  # loaded by the views that use it, not by every first view
    preloaded = set(re.findall(r'<link rel="modulepreload" href="/([\w-]+\.js)">', index_html()))
    assert preloaded == imported


def test_the_one_inline_script_is_allowed_by_its_hash_and_nothing_else_inline():
    scripts = re.findall(r"<script>(.*?)</script>", index_html(), re.S)
    assert len(scripts) == 1
    digest = "'sha256-" + base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode() + "'"
    assert digest == EARLY_SCRIPT_HASH, (
        f"index.html's inline script changed: its hash is {digest}; put it in EARLY_SCRIPT_HASH "
        "(countersign/surfaces/local/page.py), template.yaml's SecurityHeadersPolicy and docs/security.md")
    script_src = next(d for d in CONTENT_SECURITY_POLICY.split("; ") if d.startswith("script-src "))
    assert script_src == f"script-src 'self' {EARLY_SCRIPT_HASH}"
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY and "'unsafe-eval'" not in CONTENT_SECURITY_POLICY
    assert not re.search(r"\son[a-z]+=", index_html())  # no inline event handler either


@pytest.mark.parametrize("where", ["list", "card"])
def test_the_api_is_asked_with_the_first_scripts_not_after_them(live, tenant, browser, watch, where):
    """Under Slow 4G: the first view's API requests leave before any module has arrived, no module
    waits for another to ask for it, and each answer is asked for once (the inline script's is taken)."""
    (card_id,) = [r["confirmationId"] for r in file_cards(tenant, [("n1", "Pay Acme 1,250.00")])]
    login = new_context(browser)
    try:
        sign_in(login.new_page(), tenant)
        state = login.storage_state()
    finally:
        login.close()
    path = "/confirm" if where == "list" else f"/confirm?card={card_id}"
    wanted = ["/api/session", "/api/cards" if where == "list" else f"/api/cards/{card_id}"]
    ctx = new_context(browser, watch, storage_state=state)
    try:
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", SLOW_4G)
        sent: dict[str, tuple[str, float, str]] = {}
        done: dict[str, float] = {}
        cdp.on("Network.requestWillBeSent", lambda e: sent.__setitem__(e["requestId"], (
            e["request"]["url"].removeprefix(tenant.origin), e["timestamp"], e["initiator"]["type"])))
        cdp.on("Network.loadingFinished", lambda e: done.__setitem__(e["requestId"], e["timestamp"]))
        page.goto(tenant.origin + path)
        expect(page.locator("body")).to_have_attribute("data-ready", "1")
        expect(page.locator("button[data-action='confirm']").first).to_be_enabled()
        page.wait_for_load_state("networkidle")
    finally:
        ctx.close()
    assert watch.errors == []
    urls = [url for url, _, _ in sent.values()]
    for url in wanted:
        assert urls.count(url) == 1, urls
    modules = {rid: url for rid, (url, _, _) in sent.items() if url.endswith(".js")}
    assert sorted(modules.values()) == ["/app.js", "/cards.js", "/dom.js", "/strings.js"], urls
    # Every module is asked for by the document (the parser, or its preload scanner), none by a script.
    assert {rid: sent[rid][2] for rid in modules} == {rid: "parser" for rid in modules}, sent
    first_module_in = min(done[rid] for rid in modules)
    for url, when, _ in sent.values():
        if url in wanted:
            assert when < first_module_in, (url, sent, done)


def signed_in_state(browser, tenant) -> dict:
    login = new_context(browser)
    try:
        sign_in(login.new_page(), tenant)
        return login.storage_state()
    finally:
        login.close()


def test_the_view_is_drawn_before_the_session_and_a_confirm_waits_for_its_token(live, tenant, browser, watch):
    """The list is drawn from its own answer while the session's is still on its way (over HTTP/1.1
    it is the request that may wait for a connection): Confirm pressed then sends nothing until
    the session (its CSRF token) is in, then goes once and runs; the page is ready only then."""
    (card_id,) = [r["confirmationId"] for r in file_cards(tenant, [("n1", "Pay Acme 1,250.00")])]
    ctx = new_context(browser, watch, storage_state=signed_in_state(browser, tenant))
    held: list = []
    posted: list[str] = []
    try:
        page = ctx.new_page()
        page.route("**/api/session", lambda route: held.append(route))
        page.on("request", lambda request: posted.append(request.url) if request.method == "POST" else None)
        page.goto(tenant.origin + "/confirm")
        card = page.locator(f"article.card[data-card-id='{card_id}']")
        expect(card.get_by_role("button", name="Confirm")).to_be_enabled()
        assert len(held) == 1
        card.get_by_role("button", name="Confirm").click()
        page.wait_for_timeout(300)
        assert posted == []
        expect(page.locator("body")).not_to_have_attribute("data-ready", "1")
        with page.expect_response(f"**/api/cards/{card_id}/confirm") as answered:
            held[0].continue_()
        assert answered.value.status == 200
        expect(card.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
        expect(page.locator("body")).to_have_attribute("data-ready", "1")
        expect(page.locator("#nav")).to_be_visible()
    finally:
        ctx.close()
    assert watch.errors == []
    assert posted == [f"{tenant.origin}/api/cards/{card_id}/confirm"]
    assert status_of(tenant, card_id)["status"] == "completed"


@pytest.mark.parametrize("where", ["list", "link"])
def test_signed_out_the_signin_view_loads_with_the_first_files(live, tenant, browser, watch, where):
    """Signed out, the sign-in view's modules are asked for as soon as the page knows (the API's
    401 at the list's address, the address itself for an email's link), before the page's own
    modules have arrived, and together (signin.js does not wait to ask for its strings)."""
    path = "/confirm" if where == "list" else f"/signin#token={mint_signin_token(tenant.store.sessions, tenant.person)}"
    ctx = new_context(browser, watch)
    try:
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", SLOW_4G)
        sent: dict[str, tuple[str, float]] = {}
        done: dict[str, float] = {}
        cdp.on("Network.requestWillBeSent", lambda e: sent.__setitem__(e["requestId"], (
            e["request"]["url"].removeprefix(tenant.origin), e["timestamp"])))
        cdp.on("Network.loadingFinished", lambda e: done.__setitem__(e["requestId"], e["timestamp"]))
        page.goto(tenant.origin + path)
        ready(page, "signin")
        button = "Sign in" if where == "link" else "Email me a sign-in link"
        expect(page.get_by_role("button", name=button)).to_be_enabled()
    finally:
        ctx.close()
    assert watch.errors == []
    ids = {url: rid for rid, (url, _) in sent.items()}
    urls = [url for url, _ in sent.values()]
    for module in ("/signin.js", "/strings-signin.js"):
        assert urls.count(module) == 1, urls
        assert sent[ids[module]][1] < done[ids["/app.js"]], (module, sent, done)
    assert sent[ids["/strings-signin.js"]][1] < done[ids["/signin.js"]], (sent, done)
