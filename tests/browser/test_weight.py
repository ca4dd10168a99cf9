"""The pending list's weight budget: with 50 cards waiting (the page shows 20), at most 24 KiB on
the wire, one origin, a handful of requests. Byte counts are exact and stable (times are not:
bench/page.py)."""

from __future__ import annotations

from playwright.sync_api import expect

from countersign.store.docs import DocWrite
from tests.browser.pages import file_cards, new_context, origin_of, sign_in

BUDGET = 24 * 1024
CARDS = 50


def test_pending_list_with_fifty_cards_is_at_most_24_kib(live, tenant, browser):
    _, server = live
    tenant.store.docs.write_docs(
        tenant.workspace_id,
        [
            DocWrite("note", f"w{i}", {"title": f"Supplier payment #{i:03d}", "text": f"invoice {i:03d}"}, 0)
            for i in range(CARDS)
        ],
    )
    file_cards(tenant, [(f"w{i}", f"Pay Acme Wholesale Ltd. INV-{i:04d}\n1,250.00 from Checking\nMemo: stock")
                        for i in range(CARDS)])
    login = new_context(browser)
    try:
        sign_in(login.new_page(), tenant)
        state = login.storage_state()
    finally:
        login.close()

    ctx = new_context(browser, storage_state=state, viewport={"width": 360, "height": 740})
    try:
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        urls, wire = {}, {}
        cdp.on("Network.requestWillBeSent", lambda e: urls.__setitem__(e["requestId"], e["request"]["url"]))
        cdp.on("Network.loadingFinished", lambda e: wire.__setitem__(e["requestId"], e["encodedDataLength"]))
        page.goto(f"{server.origin}/confirm")
        expect(page.locator("body")).to_have_attribute("data-ready", "1")
        expect(page.locator("article.card")).to_have_count(20)  # a page of the list
        page.wait_for_load_state("networkidle")
        assert page.evaluate("() => performance.getEntriesByName('app-ready').length") == 1
    finally:
        ctx.close()
    total = sum(wire.values())
    assert total <= BUDGET, (total, {urls.get(k): v for k, v in wire.items()})
    assert {origin_of(u) for u in urls.values()} == {server.origin}
    # the page, its style, its four modules (app, dom, cards, strings: loaded in parallel, no round
    # trip after another), the session and the cards: a few more would be fine, dozens would not (the
    # service worker and what it keeps come after the first view, and are not the page's requests)
    assert len(urls) <= 8, sorted(urls.values())
