"""The person changes their mind: from History, a declined request is asked again and confirmed."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.pages import call_tool, card, file_cards, ready, shot, sign_in, status_of


def test_reopen_a_declined_request_from_history_and_confirm_it(live, tenant, page, watch):
    held = file_cards(tenant, [("n1", "second thoughts")])[0]
    first = held["confirmationId"]
    tenant.decline_on_page(first, "not now")
    assert call_tool(tenant, "publish_note", {"note_id": "n1", "text": "second thoughts"})["status"] == "declined"

    sign_in(page, tenant)
    page.goto(f"{tenant.origin}/history")
    ready(page, "history")
    old = card(page, first)
    expect(old.locator('[data-outcome="declined"]')).to_be_visible()
    with page.expect_response(f"**/api/cards/{first}/reopen") as reopened:
        old.get_by_role("button", name="Ask me again").click()
    assert reopened.value.status == 200
    fresh = reopened.value.json()["id"]
    ready(page, "card")
    assert page.url.endswith(f"/confirm?card={fresh}")
    shot(page, "reopened")
    with page.expect_response(f"**/api/cards/{fresh}/confirm") as confirmed:
        card(page, fresh).get_by_role("button", name="Confirm").click()
    assert confirmed.value.status == 200
    expect(card(page, fresh).locator('[data-outcome="completed"]')).to_be_visible()
    assert tenant.note("n1")["text"] == "second thoughts"
    # The agent polling the card it was first given is pointed to the one that ran.
    old_status = status_of(tenant, first)
    assert old_status["laterRequest"] == {"confirmationId": fresh, "status": "completed"}
