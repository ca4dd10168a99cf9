"""Text from data is text (never markup), the page keeps to its own origin, and its CSP holds."""

from __future__ import annotations

from playwright.sync_api import expect

from countersign.store.docs import DocWrite
from tests.browser.pages import card, file_cards, ready, sign_in

TITLE = "<img src=x onerror=alert(1)>"
TEXT = "<script>alert(2)</script>"
NEW = '"><svg onload=alert(3)>'
AGENT = "<b onmouseover=alert(4)>bot</b>"


def test_markup_in_data_shows_as_text(live, tenant, page, watch):
    _, server = live
    tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", "x1", {"title": TITLE, "text": TEXT}, 0)])
    token = tenant.connect(name=AGENT)
    (held,) = file_cards(tenant, [("x1", NEW)], token=token)
    card_id = held["confirmationId"]

    sign_in(page, tenant)
    one = card(page, card_id)
    expect(one.locator(".title")).to_have_text(f"Change note ‘{TITLE}’?")
    expect(one.locator(".lines li")).to_have_text(f"{TEXT} → {NEW}")
    expect(one.locator(".meta strong")).to_have_text(AGENT)
    page.get_by_role("button", name="Confirm").hover()
    one.locator(".meta strong").hover()
    one.get_by_role("button", name="Confirm").click()
    expect(one.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
    expect(one.locator(".result")).to_contain_text(NEW)

    for path in ("/history", f"/confirm?card={card_id}", "/settings/connections"):
        page.goto(server.origin + path)
        ready(page)
        expect(page.locator("body")).to_contain_text(AGENT if path.startswith("/settings") else TITLE)

    # No element the data tried to inject exists, no handler ran, nothing was fetched for it.
    page.goto(f"{server.origin}/history")
    ready(page, "history")
    assert (
        page.locator("main img, main script, main svg, main [onerror], main [onload], main [onmouseover]").count() == 0
    )
    page.wait_for_timeout(100)
    assert watch.dialogs == [], watch.dialogs
    assert not any(u.endswith("/x") for u in watch.urls), watch.urls
    assert watch.errors == [], watch.errors
    assert watch.origins == {server.origin}, watch.origins


def test_page_obeys_its_csp_and_is_not_frameable(live, tenant, page, watch):
    """Every view renders without a CSP violation; the page refuses to be framed."""
    _, server = live
    file_cards(tenant, [("n1", "csp")])
    sign_in(page, tenant)
    for path in ("/confirm", "/history", "/settings", "/signin"):
        page.goto(server.origin + path)
        ready(page)
    headers = page.goto(server.origin + "/confirm").headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    ready(page, "confirm")

    # An inline script injected into the live page is blocked by the CSP (and reported).
    page.evaluate("""() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1';
                             document.body.append(s); }""")
    assert page.evaluate("() => window.__ran") is None
    violations = [e for e in watch.errors if "Content Security Policy" in e]
    assert len(violations) == 1, watch.errors
    assert watch.dialogs == []
    assert watch.origins == {server.origin}
