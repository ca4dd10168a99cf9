"""Installable and offline: the web app manifest and its icons, the service worker, and the last
waiting list shown as stale offline, with nothing that can be confirmed from it."""

from __future__ import annotations

import io
import json
import re

import httpx2 as httpx
from PIL import Image
from playwright.sync_api import expect

from tests.browser.pages import file_cards, new_context, ready, sign_in, status_of

PHONE = {"viewport": {"width": 412, "height": 823}, "is_mobile": True, "has_touch": True}
STALE = re.compile(r"^Offline — last updated .+; you can't answer until you're back online\.$")


def controlled(page) -> bool:
    return page.evaluate("() => navigator.serviceWorker.controller !== null")


def worker_ready(page) -> None:
    """Wait until the page's service worker is active (it registers after the first view is drawn)."""
    assert page.evaluate("() => navigator.serviceWorker.ready.then((r) => r.active !== null)")


def test_the_manifest_is_linked_valid_and_its_icons_load(live, browser, watch):
    _, server = live
    ctx = new_context(browser, watch)
    try:
        page = ctx.new_page()
        page.goto(f"{server.origin}/signin")
        ready(page, "signin")
        assert page.locator('link[rel="manifest"]').get_attribute("href") == "/manifest.webmanifest"
        themes = page.locator('meta[name="theme-color"]')
        assert sorted(themes.evaluate_all("(m) => m.map((x) => x.media)")) == [
            "(prefers-color-scheme: dark)", "(prefers-color-scheme: light)"]
        # Chromium's own reading of it: fetched (the CSP allows it) and parsed without an error.
        cdp = ctx.new_cdp_session(page)
        got = cdp.send("Page.getAppManifest")
        assert got["url"] == f"{server.origin}/manifest.webmanifest"
        assert got["errors"] == [], got["errors"]
        manifest = json.loads(got["data"])
        page_icon = page.locator('link[rel="apple-touch-icon"]').get_attribute("href")
    finally:
        ctx.close()
    assert watch.errors == []

    assert manifest["name"] == "countersign" and manifest["short_name"] == "countersign"
    assert manifest["start_url"] == "/confirm" and manifest["display"] == "standalone"
    assert re.fullmatch(r"#[0-9a-f]{6}", manifest["theme_color"])
    assert re.fullmatch(r"#[0-9a-f]{6}", manifest["background_color"])
    icons = {(i["sizes"], i.get("purpose", "any")): i for i in manifest["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= set(icons)
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=10) as http:
        r = http.get("/manifest.webmanifest")
        assert r.headers["content-type"] == "application/manifest+json" and r.json() == manifest
        for (sizes, _), icon in icons.items():
            r = http.get(icon["src"])
            assert r.status_code == 200 and r.headers["content-type"] == "image/png" == icon["type"]
            image = Image.open(io.BytesIO(r.content))
            assert image.format == "PNG" and "x".join(map(str, image.size)) == sizes
        maskable = Image.open(io.BytesIO(http.get(icons[("512x512", "maskable")]["src"]).content)).convert("RGBA")
        # Full bleed: a launcher may crop it to any shape, so even its corners are opaque.
        assert all(maskable.getpixel(xy)[3] == 255 for xy in ((0, 0), (511, 0), (0, 511), (511, 511)))
        apple = http.get(page_icon)
        assert apple.status_code == 200 and Image.open(io.BytesIO(apple.content)).size == (180, 180)


def test_the_worker_is_served_fresh_with_a_csp_that_allows_it(live):
    _, server = live
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=10) as http:
        r = http.get("/sw.js")
        assert r.status_code == 200 and r.headers["content-type"] == "text/javascript; charset=utf-8"
        assert r.headers["cache-control"] == "no-cache"  # a new worker reaches every browser at once
        page = http.get("/confirm")
        for directive in ("worker-src 'self'", "manifest-src 'self'"):
            assert directive in page.headers["content-security-policy"].split("; ")


def test_the_worker_registers_after_the_first_view_and_controls_the_page_on_reload(live, tenant, browser, watch):
    (card_id,) = [r["confirmationId"] for r in file_cards(tenant, [("n1", "Pay Acme 1,250.00")])]
    ctx = new_context(browser, watch, **PHONE)
    events: list[str] = []
    ctx.on("request", lambda request: events.append(request.url.removeprefix(tenant.origin)))
    ctx.on("serviceworker", lambda worker: events.append("worker " + worker.url.removeprefix(tenant.origin)))
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        worker_ready(page)
        # Registered once the first view is drawn, after its requests (the sign-in page's here: the
        # session; the list it does not show is not asked for until the list is).
        assert events.count("worker /sw.js") == 1, events
        assert events.index("/api/session") < events.index("worker /sw.js"), events
        assert "/api/cards" not in events[:events.index("/api/signin/complete")], events

        page.reload()
        ready(page, "confirm")
        assert controlled(page)
        # The page works as before under it: a card is confirmed through the network.
        with page.expect_response(f"**/api/cards/{card_id}/confirm") as answer:
            page.locator(f'article.card[data-card-id="{card_id}"]').get_by_role("button", name="Confirm").click()
        assert answer.value.status == 200
        assert status_of(tenant, card_id)["status"] == "completed"
    finally:
        ctx.close()
    assert watch.errors == []


def test_offline_the_last_list_shows_as_stale_and_nothing_can_be_confirmed(live, tenant, browser, watch):
    ids = [r["confirmationId"] for r in file_cards(tenant, [("n1", "Pay Acme 1,250.00"), ("n2", "Pay Bolt 80.00")])]
    ctx = new_context(browser, watch, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        worker_ready(page)
        page.reload()  # under the worker, which keeps this list
        ready(page, "confirm")
        expect(page.locator("article.card")).to_have_count(2)
        assert controlled(page)

        ctx.set_offline(True)
        sent: list[str] = []
        page.on("request", lambda request: sent.append(request.method + " " + request.url))
        page.reload()
        ready(page, "offline")
        notice = page.locator("[data-stale]")
        expect(notice).to_have_text(STALE)
        assert notice.locator("time").get_attribute("datetime")
        cards = page.locator("article.card")
        expect(cards).to_have_count(2)
        assert sorted(cards.evaluate_all("(a) => a.map((x) => x.dataset.cardId)")) == sorted(ids)
        confirm = page.get_by_role("button", name="Confirm")
        expect(confirm).to_have_count(2)
        for i in range(2):
            expect(confirm.nth(i)).to_be_disabled()
            expect(page.get_by_role("button", name="Decline").nth(i)).to_be_disabled()
        confirm.first.click(force=True)  # a disabled button does nothing, even pressed
        page.wait_for_timeout(300)
        assert not [s for s in sent if s.startswith("POST ")], sent
        assert page.locator("#nav").is_hidden()
        for card_id in ids:
            assert status_of(tenant, card_id)["status"] == "pending"  # nothing reached the server

        # Back online, the page asks again and the cards can be answered.
        ctx.set_offline(False)
        ready(page, "confirm")
        expect(page.locator("[data-stale]")).to_have_count(0)
        expect(page.get_by_role("button", name="Confirm").first).to_be_enabled()
        expect(page.locator("article.card")).to_have_count(2)
    finally:
        ctx.close()
    assert watch.errors == [], watch.errors


def test_signing_out_forgets_the_kept_list(live, tenant, browser, watch):
    file_cards(tenant, [("n1", "Pay Acme 1,250.00")])
    ctx = new_context(browser, watch, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        worker_ready(page)
        page.reload()
        ready(page, "confirm")
        assert page.evaluate("() => caches.has('countersign-last-list')")
        page.goto(f"{tenant.origin}/settings")
        ready(page, "settings")
        with page.expect_response("**/api/signout"):
            page.get_by_role("button", name="Sign out").click()
        ready(page)
        assert not page.evaluate("() => caches.has('countersign-last-list')")
        ctx.set_offline(True)
        page.goto(f"{tenant.origin}/confirm")
        ready(page, "error")
        expect(page.locator("article.card")).to_have_count(0)
    finally:
        ctx.close()
