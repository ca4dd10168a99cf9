"""A card two people approve, on the page: it shows who approved and who is still needed, its button
says which approval the click is, and the last approval runs it."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from countersign.identity import accounts
from tests.browser.pages import card, file_cards, ready, shot, sign_in, status_of

RULE = {"id": "q_notes", "name": "Two for notes", "when": "tool:publish_note", "needs": 2, "of": ["owner", "admin"],
        "decline": "any"}


def test_the_card_shows_approvals_and_the_last_one_runs_it(live, tenant, page):
    ana = accounts.add_person(tenant.store.workspaces, tenant.workspace_id, f"ana.{tenant.workspace_id}@example.com",
                              "admin", "Ana Costa")
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"quorum_rules": json.dumps([RULE])})
    held = file_cards(tenant, [("n1", "two keys")])[0]
    card_id = held["confirmationId"]
    assert held["quorum"]["needs"] == 2
    first = tenant.confirm_on_page(card_id, ana)
    assert [v["name"] for v in first.votes] == ["Ana Costa"] and tenant.note("n1")["text"] != "two keys"

    sign_in(page, tenant)
    page.goto(f"{tenant.origin}/confirm?card={card_id}")
    ready(page, "card")
    shown = card(page, card_id)
    expect(shown.locator("[data-quorum]")).to_have_text("Approved by Ana Costa · 1 more of owners, admins")
    button = shown.locator('[data-action="confirm"]')
    expect(button).to_have_text("Approve (2 of 2)")
    shot(page, "quorum-card")
    with page.expect_response(f"**/api/cards/{card_id}/confirm") as confirmed:
        button.click()
    assert confirmed.value.status == 200
    expect(card(page, card_id).locator('[data-outcome="completed"]')).to_be_visible()
    assert tenant.note("n1")["text"] == "two keys"
    assert status_of(tenant, card_id)["quorum"]["approvers"][0]["name"] == "Ana Costa"
