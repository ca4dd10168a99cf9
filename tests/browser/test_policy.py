"""Settings, Policy, as a person uses it on a phone (docs/policy.md, "Policy as data"):

* the owner adds a quorum rule: the page files its held card, says the change waits and links the
  card; confirmed there, the rule is in force (read back through the API) and listed in the policy's
  words; removing it is a held change too;
* a rule no one can satisfy, and what no grant may cover written wrong, get the API's sentence beside
  the field, and nothing is filed or written; a good "no grant may cover" rule is a held change too;
* a member who is not the owner reads the same words, with no way to change them and a sentence
  saying only the owner can;
* History and the card say what a lapse meant: "Declined — no answer in time" where the workspace
  counts an unanswered request as declined, "Expired — nothing ran" where it does not.
"""

from __future__ import annotations

import time

from playwright.sync_api import expect

from countersign.core import lifetimes
from countersign.core.times import iso
from countersign.identity import accounts
from tests.browser.pages import call_tool, card, new_context, ready, sign_in

PHONE = {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True}
NO_QUORUM = "none (one person's yes runs a held request)"
BIG_BUDGETS = "Big budgets: an amount over 500 needs 2 of owners, admins; one no declines it"


def _admin(tenant, name: str = "Ana Costa"):
    return accounts.add_person(tenant.store.workspaces, tenant.workspace_id,
                               f"{name.split()[0].lower()}.{tenant.workspace_id}@example.com", "admin", name)


def _pending(tenant) -> list:
    cards, _ = tenant.store.cards.list_pending_cards(tenant.workspace_id, tenant.person.id, tenant.runtime.desk.now())
    return cards


def _open_policy(page, tenant) -> None:
    page.goto(f"{tenant.origin}/settings/policy")
    ready(page, "settings")
    expect(page.get_by_role("heading", level=1)).to_have_text("Policy")


def _confirm_the_linked_card(page, waiting) -> str:
    """Follow the page's link to the change's card and confirm it; the card's id."""
    link = waiting.get_by_role("link", name="Open the request")
    card_id = link.get_attribute("data-card-link")
    link.click()
    ready(page, "card")
    shown = card(page, card_id)
    shown.get_by_role("button", name="Confirm").click()
    expect(shown.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
    return card_id


def test_the_owner_adds_a_quorum_rule_confirms_it_and_it_is_in_force_then_removes_it(live, tenant, browser, watch):
    _admin(tenant)
    ctx = new_context(browser, watch, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        _open_policy(page, tenant)
        quorum = page.locator("[data-policy-section=quorum]")
        expect(quorum.locator(".policy-summary")).to_have_text(NO_QUORUM)
        quorum.get_by_text("Add a quorum rule").click()
        quorum.get_by_label("Name of the rule").fill("Big budgets")
        quorum.get_by_label("Covers").select_option(label="an amount over…")
        quorum.get_by_label("Amount").fill("500")
        quorum.get_by_label("Approvals needed").fill("2")
        quorum.get_by_label("owners").check()
        quorum.get_by_label("admins").check()
        with page.expect_response("**/api/quorum-rules") as filed:
            quorum.get_by_role("button", name="Continue to confirm").click()
        assert filed.value.status == 201, filed.value.text()
        waiting = quorum.locator("[data-field=waiting]")
        expect(waiting).to_have_text("This change waits for your confirmation; nothing changes until you confirm "
                                     "it. Open the request")
        card_id = filed.value.json()["id"]
        expect(waiting.get_by_role("link")).to_have_attribute("href", f"/confirm?card={card_id}")
        assert [c.id for c in _pending(tenant)] == [card_id]
        assert tenant.page().get("/api/quorum-rules").json()["rules"] == []  # nothing changes before the Confirm

        assert _confirm_the_linked_card(page, waiting) == card_id
        rules = tenant.page().get("/api/quorum-rules").json()["rules"]
        assert [(r["name"], r["when"], r["needs"], r["of"], r["decline"], r["words"]) for r in rules] == [
            ("Big budgets", "over:500", 2, ["owner", "admin"], "any", BIG_BUDGETS)]

        _open_policy(page, tenant)
        quorum = page.locator("[data-policy-section=quorum]")
        expect(quorum.locator(".policy-summary")).to_have_count(0)
        expect(quorum.locator("li[data-rule]")).to_have_text([f"{BIG_BUDGETS}Remove"])
        with page.expect_response("**/api/quorum-rules") as filed:
            # each Remove says which rule it removes to a screen reader
            quorum.get_by_role("button", name=f"Remove: {BIG_BUDGETS}", exact=True).click()
        assert filed.value.status == 201, filed.value.text()
        _confirm_the_linked_card(page, quorum.locator("[data-field=waiting]"))
        assert tenant.page().get("/api/quorum-rules").json()["rules"] == []
        _open_policy(page, tenant)
        expect(page.locator("[data-policy-section=quorum] .policy-summary")).to_have_text(NO_QUORUM)
    finally:
        ctx.close()
    assert watch.errors == [], watch.errors


def test_a_refused_rule_gets_the_sentence_beside_its_field_and_nothing_is_written(live, tenant, browser, watch):
    _admin(tenant)
    before = tenant.store.workspaces.get_workspace(tenant.workspace_id).settings
    ctx = new_context(browser, watch, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        _open_policy(page, tenant)
        quorum = page.locator("[data-policy-section=quorum]")
        quorum.get_by_text("Add a quorum rule").click()
        quorum.get_by_label("Name of the rule").fill("Three admins")
        quorum.get_by_label("Covers").select_option(label="every held request")
        quorum.get_by_label("Approvals needed").fill("3")
        quorum.get_by_label("admins").check()
        with page.expect_response("**/api/quorum-rules") as refused:
            quorum.get_by_role("button", name="Continue to confirm").click()
        assert refused.value.status == 422
        sentence = refused.value.json()["error"]["message"]
        assert sentence == ("rules[0].needs: no one in the workspace can satisfy this rule: it needs 3 approvals of "
                            "admins, and 1 member is one of them. Nothing was changed.")
        expect(quorum.locator("[data-field=quorum-needs] .field-error")).to_have_text(sentence)
        expect(quorum.get_by_label("Approvals needed")).to_have_attribute("aria-invalid", "true")
        expect(quorum.locator("[data-field=waiting]")).to_have_count(0)

        # What no grant may cover: an amount that is not one is refused beside the field
        never = page.locator("[data-policy-section=standingGrantsNever]")
        expect(never.locator(".policy-summary")).to_have_text("(no rule: any tool that declares bounds)")
        never.get_by_text("Add what no grant may cover").click()
        never.get_by_label("Covers").select_option(label="an amount over…")
        never.get_by_label("Amount").fill("lots")
        with page.expect_response("**/api/standing-grants/rules") as refused:
            never.get_by_role("button", name="Continue to confirm").click()
        assert refused.value.status == 422
        assert refused.value.json()["error"]["message"] == (
            "rules[0]: 'over:lots' is not a rule of what no grant may cover: tool:<name>, class:<always, client, "
            "setting or when>, risky, or over:<amount>. Nothing was changed.")
        expect(never.locator("[data-field=standingGrantsNever-when] .field-error")).to_have_text(
            refused.value.json()["error"]["message"])
        assert _pending(tenant) == []
        assert tenant.store.workspaces.get_workspace(tenant.workspace_id).settings == before  # nothing written

        # a good one files its card; confirmed, it is in force and said in the policy's words
        never.get_by_label("Amount").fill("250")
        with page.expect_response("**/api/standing-grants/rules") as filed:
            never.get_by_role("button", name="Continue to confirm").click()
        assert filed.value.status == 201, filed.value.text()
        expect(never.locator("[data-field=standingGrantsNever-when] .field-error")).to_have_text("")
        assert tenant.page().get("/api/standing-grants").json()["rules"] == []  # not before the Confirm
        _confirm_the_linked_card(page, never.locator("[data-field=waiting]"))
        assert tenant.page().get("/api/standing-grants").json()["rules"] == ["over:250"]
        _open_policy(page, tenant)
        expect(page.locator("[data-policy-section=standingGrantsNever] li[data-rule]")).to_have_text(
            ["an amount over 250Remove"])
    finally:
        ctx.close()
    assert watch.errors == [], watch.errors


def test_a_member_who_is_not_the_owner_reads_the_policy_and_cannot_change_it(live, tenant, browser, watch):
    admin = _admin(tenant)
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {
        "quorum_rules": '[{"id":"q_big","name":"Big budgets","when":"over:500","needs":2,"of":["owner","admin"],'
                        '"decline":"any"}]', "standing_grants_never": ["risky"]})
    ctx = new_context(browser, watch, **PHONE)
    try:
        page = ctx.new_page()
        sign_in(page, tenant, admin)
        _open_policy(page, tenant)
        expect(page.locator("[data-field=owner-only]")).to_have_text(
            "Only the workspace's owner can change the policy.")
        expect(page.locator("[data-policy-section=quorum] li")).to_have_text([BIG_BUDGETS])
        expect(page.locator("[data-policy-section=standingGrantsNever] .policy-summary")).to_have_text(
            "what spends, sends, grants or cannot be undone")
        expect(page.locator("[data-policy-section=passkeyPolicy] .policy-summary")).to_have_text(
            "never: a signed-in click confirms (passkey policy never)")
        expect(page.locator("[data-policy-section=standingGrants] [data-field=grant-count]")).to_have_text(
            "No standing grants. See them in Grants")
        expect(page.locator("details.policy-add, form, [data-action=remove-rule]")).to_have_count(0)
        page.get_by_role("link", name="See them in Grants").click()
        expect(page).to_have_url(f"{tenant.origin}/settings/grants")
        page.goto(f"{tenant.origin}/settings")
        ready(page, "settings")
        expect(page.locator("[data-settings-link=policy]")).to_contain_text("Policy")
    finally:
        ctx.close()
    assert watch.errors == [], watch.errors


def test_history_and_the_card_say_what_a_lapse_meant(live, tenant, browser, watch):
    runtime, _ = live
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {
        "card_lifetimes": lifetimes.as_text({"client": {"wait": "5m", "lapse": "declined"}, "risky": {"wait": "5m"}})})
    original = runtime.desk.clock
    moved = [0.0]
    runtime.desk.clock = lambda: time.time() + moved[0]
    ctx = new_context(browser, watch, **PHONE)
    try:
        declined = call_tool(tenant, "edit_note", {"note_id": "n1", "text": "class client"})["confirmationId"]
        expired = call_tool(tenant, "publish_note", {"note_id": "n2", "text": "class always"})["confirmationId"]
        page = ctx.new_page()
        sign_in(page, tenant)
        deadline = iso(tenant.store.cards.get_card(tenant.workspace_id, declined, runtime.desk.now()).expires_at)
        moved[0] = 301
        page.goto(f"{tenant.origin}/history")
        ready(page, "history")
        lapsed = card(page, declined).locator("[data-outcome]")
        expect(lapsed).to_have_attribute("data-outcome", "lapsed-declined")
        expect(lapsed.locator(".headline")).to_have_text("Declined — no answer in time")
        expect(lapsed.locator("p").nth(1)).to_have_text(
            f"Reason: No one answered within 5 minutes, so this request was declined at {deadline}: this workspace "
            "counts an unanswered request as declined. Nothing ran.")
        gone = card(page, expired).locator("[data-outcome]")
        expect(gone).to_have_attribute("data-outcome", "expired")
        expect(gone).to_have_text("Expired — nothing ran")
        page.goto(f"{tenant.origin}/confirm?card={declined}")
        ready(page, "card")
        expect(card(page, declined).locator(".outcome .headline")).to_have_text("Declined — no answer in time")
    finally:
        ctx.close()
        runtime.desk.clock = original
    assert watch.errors == [], watch.errors
