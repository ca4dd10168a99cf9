"""Edit, then approve, and standing grants, as a person does them on a phone (docs/policy.md):

* on a budget card an agent filed, Edit opens its one editable field with the current value; a
  value the checker refuses gets the checker's sentence beside that field and nothing changes; an
  accepted one shows the new card (its own preview and Confirm); its Confirm runs it, the card says
  what was changed, and the agent is told "Ran with 80.00 instead of 120.00 …, changed by …";
* "Allow this again…" on such a card opens a form drafted from it; a bad limit gets the API's
  sentence beside its field; the grant's own card is then confirmed like any card; an agent's call
  inside it runs at once; Settings, Grants lists it with its use, and Revoke (after a confirm step)
  makes the next call wait again.
"""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.pages import call_tool, card, new_context, ready, sign_in, status_of
from tests.budget.ledger import seed_small

PHONE = {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True}
BUDGET = {"category_id": "cat_groceries", "month": "current", "amount": "120.00"}


def test_edit_a_refused_value_then_an_accepted_one_then_confirm(live, tenant, browser, watch):
    seed_small(tenant.store, tenant.workspace_id)
    asked = call_tool(tenant, "set_category_budget", BUDGET)
    assert asked["status"] == "pending", asked
    first = asked["confirmationId"]
    ctx = new_context(browser, watch, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        page.goto(f"{tenant.origin}/confirm?card={first}")
        ready(page, "card")
        shown = card(page, first)
        shown.get_by_role("button", name="Edit").click()
        amount = shown.get_by_label("amount budgeted")
        expect(amount).to_have_value("120.00")
        expect(amount).to_be_focused()

        amount.fill("a lot")
        with page.expect_response(f"**/api/cards/{first}/edit") as refused:
            shown.get_by_role("button", name="Save changes").click()
        assert refused.value.status == 422
        sentence = refused.value.json()["error"]["message"]
        assert sentence.startswith("amount: ")
        expect(shown.locator(".edit-field .field-error")).to_have_text(sentence)
        expect(amount).to_have_attribute("aria-invalid", "true")
        assert tenant.store.cards.get_card(tenant.workspace_id, first, tenant.runtime.desk.now()).state.value \
            == "pending"  # nothing changed

        amount.fill("80.00")
        with page.expect_response(f"**/api/cards/{first}/edit") as accepted:
            shown.get_by_role("button", name="Save changes").click()
        assert accepted.value.status == 200
        new_id = accepted.value.json()["id"]
        new = card(page, new_id)
        expect(new.locator(".title")).to_contain_text("→ 80.00?")
        by = tenant.person.name or tenant.person.email
        expect(new.locator("[data-edited=from]")).to_contain_text(f"Changed by {by} before confirming:")
        expect(new.locator("[data-edited=from] li")).to_have_text("amount budgeted: 120.00 → 80.00")
        assert page.url.endswith(f"/confirm?card={new_id}")
        expect(card(page, first)).to_have_count(0)

        new.get_by_role("button", name="Confirm").click()
        expect(new.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
        expect(new.locator("[data-edited=from]")).to_be_visible()  # the outcome says what was changed

        # The card it replaced, on its own page: edited, and where the change went.
        page.goto(f"{tenant.origin}/confirm?card={first}")
        ready(page, "card")
        old = card(page, first)
        expect(old.locator("[data-outcome]")).to_have_text("Edited — a new card with the changes replaced it")
        expect(old.get_by_role("link", name="See the card that replaced it")).to_have_attribute(
            "href", f"/confirm?card={new_id}")
    finally:
        ctx.close()
    told = status_of(tenant, first)  # the id the agent was given leads to the outcome
    assert (told["status"], told["confirmationId"]) == ("completed", new_id)
    assert told["message"] == f"Ran with 80.00 instead of 120.00 (amount budgeted), changed by {by}."
    assert watch.errors == [] and watch.dialogs == [], (watch.errors, watch.dialogs)


def test_allow_this_again_then_a_call_runs_under_it_and_settings_lists_the_use(live, tenant, browser, watch):
    seed_small(tenant.store, tenant.workspace_id)
    asked = call_tool(tenant, "set_category_budget", dict(BUDGET, amount="420.00"))
    first = asked["confirmationId"]
    ctx = new_context(browser, watch, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        page.goto(f"{tenant.origin}/confirm")
        ready(page, "confirm")
        shown = card(page, first)
        buttons = shown.locator(".answer > .actions button")
        expect(buttons).to_have_text(["Confirm", "Edit", "Decline", "Allow this again…"])
        shown.get_by_role("button", name="Allow this again…").click()

        limit = shown.get_by_label("Amount budgeted: at most, each time")
        expect(limit).to_have_value("420.00")
        expect(shown.get_by_label("Groceries")).to_be_checked()
        expect(shown.get_by_label("Name of the grant")).to_have_value("set_category_budget")
        shown.get_by_label("Name of the grant").fill("Groceries top-up")
        shown.get_by_label("Uses").fill("2")
        limit.fill("-5")
        with page.expect_response("**/api/standing-grants") as refused:
            shown.get_by_role("button", name="Continue to confirm").click()
        assert refused.value.status == 422
        sentence = refused.value.json()["error"]["message"]
        assert sentence == "limits.amount: must be more than zero."
        expect(shown.locator("[data-field$='-amount'] .field-error")).to_have_text(sentence)
        assert tenant.store.standing_grants.list_standing_grants(tenant.workspace_id) == []

        limit.fill("500.00")
        with page.expect_response("**/api/standing-grants") as filed:
            shown.get_by_role("button", name="Continue to confirm").click()
        assert filed.value.status == 201
        grant_card = filed.value.json()["id"]
        ready(page, "card")
        grant = card(page, grant_card)
        expect(grant.locator(".title")).to_contain_text("Let Test agent run set_category_budget without asking")
        expect(grant.locator(".lines")).to_contain_text("Amount budgeted: at most 500.00 a call")
        grant.get_by_role("button", name="Confirm").click()
        expect(grant.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")

        ran = call_tool(tenant, "set_category_budget", dict(BUDGET, amount="450.00"))
        assert ran["status"] == "completed" and ran["answeredVia"] == "grant", ran
        assert ran["message"].startswith("Ran under grant ‘Groceries top-up’: 1 of 2 uses left, expires ")

        page.goto(f"{tenant.origin}/settings")
        ready(page, "settings")
        page.locator("[data-settings-link=grants]").click()
        ready(page, "settings")
        assert page.url.endswith("/settings/grants")
        row = page.locator("li.grant")
        expect(row).to_have_count(1)
        expect(row.locator(".grant-head")).to_contain_text("Groceries top-up")
        expect(row.locator("[data-field=state]")).to_have_text("Active")
        expect(row.locator(".grant-who")).to_have_text("Test agent may run set_category_budget")
        expect(row.locator(".grant-terms li")).to_have_text(["Amount budgeted: at most 500.00 a call",
                                                             "Categories: Groceries"])
        expect(row.locator("[data-field=uses-left]")).to_have_text("1 of 2 uses left")
        expect(row.locator("[data-field=expires]")).to_contain_text("Expires ")
        row.locator("summary").click()
        use = row.locator(f"[data-use='{ran['confirmationId']}']")
        expect(use).to_contain_text("450.00")
        expect(use.get_by_role("link", name="See its card")).to_have_attribute(
            "href", f"/confirm?card={ran['confirmationId']}")

        use.get_by_role("link", name="See its card").click()
        ready(page, "card")
        expect(card(page, ran["confirmationId"]).locator("[data-grant]")).to_have_text(
            "Ran without a click, under your standing grant ‘Groceries top-up’.")
        page.go_back()
        ready(page, "settings")
        row.locator("summary").click()
        row.get_by_role("button", name="Revoke").click()
        expect(row.get_by_text("The next call it would have covered waits for you again.")).to_be_visible()
        with page.expect_response("**/revoke") as revoked:
            row.get_by_role("button", name="Revoke it").click()
        assert revoked.value.status == 200
        expect(row.locator("[data-field=state]")).to_have_text("Revoked")
        expect(row.get_by_role("button", name="Revoke")).to_have_count(0)
    finally:
        ctx.close()
    held = call_tool(tenant, "set_category_budget", dict(BUDGET, amount="460.00"))
    assert held["status"] == "pending"
    assert held["standingGrants"] == ["Not run under grant ‘Groceries top-up’: it was revoked."]
    assert watch.errors == [] and watch.dialogs == [], (watch.errors, watch.dialogs)


def test_allow_this_again_is_not_offered_where_granting_needs_a_passkey_the_person_lacks(live, tenant, browser):
    seed_small(tenant.store, tenant.workspace_id)
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "risky"})
    first = call_tool(tenant, "set_category_budget", BUDGET)["confirmationId"]
    ctx = new_context(browser, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        page.goto(f"{tenant.origin}/confirm?card={first}")
        ready(page, "card")
        expect(card(page, first).locator(".answer > .actions button")).to_have_text(["Confirm", "Edit", "Decline"])
    finally:
        ctx.close()
