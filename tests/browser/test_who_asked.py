"""A card says who asked — the agent's name, "You, from Settings", "An owner, from the command
line" — and marks what cannot be undone; on a 360 px phone the badge and the line fit whole."""

from __future__ import annotations

from playwright.sync_api import expect

from countersign.surfaces.upstream_requests import file_change
from tests.browser.pages import call_tool, card, new_context, ready, sign_in
from tests.browser.test_mobile import PHONE, check_layout


def test_who_asked_and_what_cannot_be_undone_on_the_waiting_list(live, tenant, browser, watch):
    bought = call_tool(tenant, "buy_credits", {"credits": 20})
    edited = call_tool(tenant, "publish_note", {"note_id": "n1", "text": "new text"})
    by_cli = file_change(tenant.runtime.desk, tenant.workspace_id, tenant.person, "buy_credits", {"credits": 30})
    ctx = new_context(browser, watch, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        expect(page.locator("article.card")).to_have_count(3)
        agent_card, note_card, cli_card = (card(page, i) for i in (bought["confirmationId"],
                                                                   edited["confirmationId"], by_cli.id))
        expect(agent_card.locator(".meta strong").first).to_have_text("Test agent")
        expect(agent_card.locator(".meta")).to_contain_text("Asked by Test agent")
        expect(agent_card.locator(".badge-irreversible")).to_have_text("Can't be undone")
        expect(note_card.locator(".badge-irreversible")).to_have_count(0)
        expect(cli_card.locator(".meta")).to_contain_text("An owner, from the command line")
        expect(cli_card.locator(".meta")).not_to_contain_text("Asked by")
        expect(cli_card.locator(".badge-irreversible")).to_be_visible()
        badge = cli_card.locator(".badge-irreversible").evaluate(
            "b => [b.scrollWidth <= b.clientWidth, b.getBoundingClientRect().right <= innerWidth]")
        assert badge == [True, True]
        check_layout(page, "/confirm with badges")
    finally:
        ctx.close()


def test_a_change_asked_from_settings_says_you(live, tenant, page):
    sign_in(page, tenant)
    filed = page.request.post(f"{tenant.origin}/api/settings/passkey-policy", data={"policy": "risky"},
                              headers={"X-CSRF-Token": csrf(page, tenant), "Origin": tenant.origin})
    assert filed.status == 201, filed.text()
    card_id = filed.json()["id"]
    page.goto(f"{tenant.origin}/confirm?card={card_id}")
    ready(page, "card")
    meta = card(page, card_id).locator(".meta")
    expect(meta).to_contain_text("You, from Settings")
    expect(meta.locator("strong").first).to_have_text("You")
    expect(meta).not_to_contain_text("Asked by")


def csrf(page, tenant) -> str:
    return page.request.get(f"{tenant.origin}/api/session").json()["csrfToken"]
