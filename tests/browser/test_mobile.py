"""Mobile first: at 360 px nothing overflows sideways and every button is a comfortable target.
Screenshots of the pending list at 360 px are kept in test-artifacts/."""

from __future__ import annotations

from playwright.sync_api import expect

from countersign.store.docs import DocWrite
from tests.browser.pages import card, file_cards, new_context, ready, shot, sign_in

PHONE = {"viewport": {"width": 360, "height": 740}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}

LAYOUT = """() => {
    const buttons = [...document.querySelectorAll('button')].filter(b => b.offsetParent !== null);
    const links = [...document.querySelectorAll('nav a, .back a')].filter(a => a.offsetParent !== null);
    const wide = [...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > 360.5)
        .map(e => e.tagName + '.' + e.className);
    return {
        scrollWidth: document.documentElement.scrollWidth,
        bodyScrollWidth: document.body.scrollWidth,
        buttons: buttons.map(b => [b.textContent.trim(), b.getBoundingClientRect().height]),
        links: links.map(a => [a.textContent.trim(), a.getBoundingClientRect().height]),
        wide,
    };
}"""


def check_layout(page, where: str) -> dict:
    got = page.evaluate(LAYOUT)
    assert got["scrollWidth"] <= 360 and got["bodyScrollWidth"] <= 360, (where, got)
    assert got["wide"] == [], (where, got["wide"])
    small = [b for b in got["buttons"] + got["links"] if b[1] < 44]
    assert not small, (where, small)
    return got


def test_pending_list_at_360px(live, tenant, browser, watch):
    _, server = live
    # Long words, a long title and many lines: the worst a phone sees.
    tenant.store.docs.write_docs(tenant.workspace_id, [
        DocWrite("note", "long", {"title": "Quarterly-supplier-reconciliation-" + "x" * 60, "text": "short"}, 0),
    ])
    file_cards(tenant, [
        ("n1", "Pay Acme Wholesale Ltd. 1,250.00 from Checking"),
        ("n2", "line one\nline two with a very-long-unbroken-identifier-" + "y" * 80 + "\nline three"),
        ("long", "https://example.com/" + "z" * 120),
    ])
    ctx = new_context(browser, watch, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        expect(page.locator("article.card")).to_have_count(3)
        got = check_layout(page, "/confirm")
        assert len(got["buttons"]) == 6  # Confirm and Decline on each card
        path = shot(page, "pending-360")
        assert path.stat().st_size > 10_000
        shot(page, "pending-360-first-screen", full_page=False)

        # The decline form, then outcomes, still fit.
        first = page.locator("article.card").first
        first.get_by_role("button", name="Decline").click()
        expect(first.get_by_label("Reason (optional, the agent sees it)")).to_be_visible()
        check_layout(page, "/confirm decline form")
        shot(page, "pending-360-decline-form")
        first.get_by_label("Reason (optional, the agent sees it)").fill("Wrong account")
        first.locator("form").get_by_role("button", name="Decline").click()
        expect(first.locator("[data-outcome]")).to_have_attribute("data-outcome", "declined")
        second = page.locator("article.card").nth(1)
        second.get_by_role("button", name="Confirm").click()
        expect(second.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
        check_layout(page, "/confirm after answers")
        shot(page, "pending-360-answered")

        for path, view in (("/history", "history"), ("/settings", "settings"), ("/signin", "signin")):
            page.goto(server.origin + path)
            ready(page, view)
            check_layout(page, path)
            shot(page, f"{view}-360")
        page.goto(server.origin + "/settings/connections")
        ready(page, "settings")
        page.get_by_label("Name of the new connection").fill("Phone agent with a rather long name indeed")
        page.get_by_role("button", name="Create connection").click()
        expect(page.locator("#new-token")).to_be_visible()
        check_layout(page, "/settings new token")
        shot(page, "settings-360-new-token")
    finally:
        ctx.close()
    assert watch.errors == [] and watch.dialogs == [], (watch.errors, watch.dialogs)


def test_card_page_at_360px_without_session(live, tenant, browser):
    (held,) = file_cards(tenant, [("n1", "phone")])
    ctx = new_context(browser, **PHONE)
    try:
        page = ctx.new_page()
        page.goto(held["confirmationUrl"])
        ready(page, "signin")
        check_layout(page, "signed-out card link")
        sign_in(page, tenant)
        page.goto(held["confirmationUrl"])
        ready(page, "card")
        check_layout(page, "one card")
        shot(page, "card-360")
        expect(card(page, held["confirmationId"])).to_be_visible()
    finally:
        ctx.close()
