"""Quorum from outside, over real HTTP: the owner sets a rule on the confirm page (a card they then
confirm); an agent's call under it is held and told so; the card waits in each eligible member's list
(``/api/cards``) showing who approved and who is still needed; each approval is a click of its own;
one person counts once, even from a second session; the last approval runs it once, and the receipt
lists every approver. Bad rules and approvals that cannot count are refused and write nothing."""

from __future__ import annotations

import pytest

from countersign.identity import accounts
from tests.api.pages import Page
from tests.budget.ledger import seed_small

pytestmark = pytest.mark.anyio

RULE = {"name": "Big budgets", "when": "over:500", "needs": 2, "of": ["owner", "admin"]}


def set_rule(tenant, rule=RULE) -> None:
    page = tenant.page()
    filed = page.post("/api/quorum-rules", {"rules": [rule]})
    assert filed.status_code == 201, filed.text
    card = filed.json()
    assert card["tool"] == "set_quorum_rules" and card["lines"][0] == (
        "Big budgets: an amount over 500 needs 2 of owners, admins; one no declines it")
    assert page.post(f"/api/cards/{card['id']}/confirm").status_code == 200


async def big_budget(tenant) -> dict:
    async with tenant.client() as client:
        result = await client.call_tool("set_category_budget",
                                        {"category_id": "cat_groceries", "month": "current", "amount": "600.00"})
    return result.structured_content


def admin(tenant, name: str):
    return accounts.add_person(tenant.store.workspaces, tenant.workspace_id,
                               f"{name.split()[0].lower()}.{tenant.workspace_id}"
                               "@example.com", "admin", name)


async def test_quorum_over_http(tenant):
    seed_small(tenant.store, tenant.workspace_id)
    ana, bo = admin(tenant, "Ana Costa"), admin(tenant, "Bo Li")
    set_rule(tenant)
    listed = tenant.page().get("/api/quorum-rules").json()
    assert [r["words"] for r in listed["rules"]] == [
        "Big budgets: an amount over 500 needs 2 of owners, admins; one no declines it"] and listed["canSetRules"]
    held = await big_budget(tenant)
    assert held["status"] == "pending" and held["quorum"]["needs"] == 2 and "A quorum applies" in held["instructions"]
    card_id = held["confirmationId"]

    # the card waits in Ana's list too, saying what her click does
    (shown,) = tenant.page(ana).get("/api/cards").json()["cards"]
    assert shown["id"] == card_id
    assert shown["quorum"] == {"rule": "Big budgets", "needs": 2, "of": "owners, admins", "approvedBy": [],
                               "more": 2, "youMayApprove": True, "yourApproval": 1, "decline": "any"}
    approved = tenant.page(ana).post(f"/api/cards/{card_id}/confirm")
    assert approved.status_code == 200 and approved.json()["state"] == "pending"
    assert approved.json()["quorum"]["approvedBy"] == ["Ana Costa"] and approved.json()["quorum"]["you"] == "yes"

    # a second session of Ana's: refused, nothing written
    again = Page(tenant.origin).sign_in(tenant.runtime, ana).post(f"/api/cards/{card_id}/confirm")
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_answered"
    assert again.json()["error"]["message"] == (
        "You already approved this card; one person counts once, whichever session they use. It needs 1 more of "
        "owners, admins. Nothing was written.")

    # a member the rule does not name cannot even see it
    member = tenant.add_person("member")
    assert tenant.page(member).get(f"/api/cards/{card_id}").status_code == 403

    # Bo's is the last approval needed: it runs, once
    seen = tenant.page(bo).get(f"/api/cards/{card_id}").json()
    assert seen["quorum"]["yourApproval"] == 2 and seen["quorum"]["more"] == 1
    done = tenant.page(bo).post(f"/api/cards/{card_id}/confirm")
    assert done.status_code == 200 and done.json()["state"] == "completed", done.text
    receipt = tenant.page(bo).get(f"/api/cards/{card_id}/receipt").json()
    assert [a["name"] for a in receipt["card"]["result"]["quorum"]["approvers"]] == ["Ana Costa", "Bo Li"]
    assert receipt["audit"][-1]["detail"].startswith("2 of 2 approvals (quorum ‘Big budgets’): Ana Costa, Bo Li")
    async with tenant.client() as client:
        status = (await client.call_tool("get_confirmation_status", {"confirmation_id": card_id})).structured_content
    assert status["status"] == "completed" and status["message"] == (
        "Ran after 2 of 2 approvals (quorum ‘Big budgets’): Ana Costa, Bo Li.")
    assert status["quorum"]["approvers"][1]["name"] == "Bo Li"


@pytest.mark.parametrize("rule, field, words", [
    ({**RULE, "when": "tool:print_money"}, "rules[0].when", "there is no tool 'print_money' here"),
    ({**RULE, "needs": 3}, "rules[0].needs", "no one in the workspace can satisfy this rule"),
])
def test_a_bad_rule_is_refused_and_nothing_filed(tenant, rule, field, words):
    page = tenant.page()
    refused = page.post("/api/quorum-rules", {"rules": [rule]})
    body = refused.json()
    assert refused.status_code == 422 and body["field"] == field and words in body["error"]["message"]
    assert page.get("/api/cards").json()["cards"] == []


def test_only_the_owner_files_rules(tenant):
    ana = admin(tenant, "Ana Costa")
    refused = tenant.page(ana).post("/api/quorum-rules", {"rules": [RULE]})
    assert refused.status_code == 403 and refused.json()["error"]["message"] == (
        "Only the workspace's owner can set its quorum rules.")
