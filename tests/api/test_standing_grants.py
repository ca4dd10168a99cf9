"""Standing grants from outside, over real HTTP: the person files one on the confirm page (a card
they then confirm), the agent's call inside it runs at once and is told so, Settings lists it with
each use, revoking stops the next call; bad grants are refused with a sentence and nothing is filed;
MCP offers no way to grant."""

from __future__ import annotations

import pytest

from countersign.gate.standing_grants import rules_of
from countersign.identity.passkeys.receipts import verify_receipt
from tests.budget.ledger import seed_small

pytestmark = pytest.mark.anyio


def grant_body(tenant, **changes) -> dict:
    body = {"connectionId": tenant.connection_id, "tool": "set_category_budget", "name": "Groceries top-up",
            "limits": {"amount": "500.00", "category_id": ["cat_groceries"]}, "uses": 2, "days": 7}
    body.update(changes)
    return body


def granted(tenant, **changes) -> dict:
    page = tenant.page()
    filed = page.post("/api/standing-grants", grant_body(tenant, **changes))
    assert filed.status_code == 201, filed.text
    card = filed.json()
    assert card["tool"] == "create_standing_grant" and card["state"] == "pending"
    confirmed = page.post(f"/api/cards/{card['id']}/confirm")
    assert confirmed.status_code == 200, confirmed.text
    return confirmed.json()


async def budget(tenant, amount: str) -> dict:
    async with tenant.client() as client:
        result = await client.call_tool("set_category_budget",
                                        {"category_id": "cat_groceries", "month": "current", "amount": amount})
    return result.structured_content


async def test_grant_run_list_and_revoke_over_http(tenant):
    seed_small(tenant.store, tenant.workspace_id)
    card = granted(tenant)
    assert card["state"] == "completed" and card["outcome"][0].startswith(
        "Granted Groceries top-up: Test agent may run set_category_budget 2 times without asking, until ")
    ran = await budget(tenant, "450.00")
    assert ran["status"] == "completed" and ran["answeredVia"] == "grant"
    assert ran["message"].startswith("Ran under grant ‘Groceries top-up’: 1 of 2 uses left, expires ")
    page = tenant.page()
    shown = page.get(f"/api/cards/{ran['confirmationId']}").json()
    assert shown["grant"]["name"] == "Groceries top-up" and shown["state"] == "completed"
    assert shown["askedBy"]["kind"] == "agent"  # the agent asked; the grant answered for the person
    receipt = page.get(f"/api/cards/{ran['confirmationId']}/receipt").json()
    confirmation = receipt["confirmation"]
    assert (confirmation["method"], confirmation["actor"]) == ("grant", f"person:{tenant.person.id}")
    assert receipt["audit"][-1]["detail"].startswith("under standing grant ‘Groceries top-up’ (sg_")
    assert "under a standing grant the person gave this connection in advance" in verify_receipt(receipt).kind
    listed = page.get("/api/standing-grants").json()
    (g,) = listed["grants"]
    assert (g["name"], g["state"], g["usesLeft"], g["uses"], g["connectionName"], g["yours"]) == (
        "Groceries top-up", "active", 1, 2, "Test agent", True)
    assert g["terms"] == ["Amount budgeted: at most 500.00 a call", "Categories: Groceries"]
    assert [(u["cardId"], u["amount"]) for u in g["useList"]] == [(ran["confirmationId"], "450.00")]
    assert listed["rules"] == [] and listed["canSetRules"] is True
    revoked = page.post(f"/api/standing-grants/{g['id']}/revoke")
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    held = await budget(tenant, "460.00")
    assert held["status"] == "pending"
    assert held["standingGrants"] == ["Not run under grant ‘Groceries top-up’: it was revoked."]


@pytest.mark.parametrize("changes, field, message", [
    ({"limits": {"amount": "500", "category_id": ["cat_groceries"], "memo": "x"}}, "limits.memo",
     "limits.memo: set_category_budget does not declare 'memo' as something a grant may bound; it declares amount "
     "(amount budgeted), category_id (categories). Nothing was granted."),
    ({"connectionId": "c_nowhere"}, "connectionId", "connection_id: no connection 'c_nowhere' in this workspace. "
                                                    "Nothing was granted."),
    ({"tool": "publish_note"}, "tool", "tool: publish_note declares nothing a standing grant could bound, so no "
                                       "grant can cover it."),
])
async def test_a_bad_grant_is_refused_with_a_sentence_and_nothing_is_filed(tenant, changes, field, message):
    seed_small(tenant.store, tenant.workspace_id)
    page = tenant.page()
    refused = page.post("/api/standing-grants", grant_body(tenant, **changes))
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["message"] == message and refused.json()["field"] == field
    assert page.get("/api/cards").json()["cards"] == []


async def test_days_over_30_are_refused_by_the_schema(tenant):
    refused = tenant.page().post("/api/standing-grants", grant_body(tenant, days=31))
    assert refused.status_code == 422 and "days" in refused.text


async def test_a_grant_for_another_workspaces_connection_is_refused(tenant, other_tenant):
    seed_small(tenant.store, tenant.workspace_id)
    refused = tenant.page().post("/api/standing-grants", grant_body(tenant, connectionId=other_tenant.connection_id))
    assert refused.status_code == 422
    assert refused.json()["error"]["message"].startswith("connection_id: no connection ")


async def test_another_members_grant_cannot_be_revoked_by_a_member(tenant):
    seed_small(tenant.store, tenant.workspace_id)
    granted(tenant)
    (g,) = tenant.page().get("/api/standing-grants").json()["grants"]
    member = tenant.add_person()
    page = tenant.page(member)
    assert page.get("/api/standing-grants").json()["grants"] == []
    refused = page.post(f"/api/standing-grants/{g['id']}/revoke")
    assert refused.status_code == 403
    assert tenant.page().get("/api/standing-grants").json()["grants"][0]["state"] == "active"


async def test_what_no_grant_may_cover_cannot_be_written_at_once(tenant):
    """Changing policy is itself a held action: there is no direct write of the owner's rules (the
    page files set_standing_grants_never, tests/api/test_policy.py), and nothing is written."""
    put = tenant.page().request("PUT", "/api/standing-grants/rules", {"rules": ["risky", "over:250"]})
    assert put.status_code == 405
    workspace = tenant.store.workspaces.get_workspace(tenant.workspace_id)
    assert rules_of(workspace) == []
    assert tenant.page().get("/api/standing-grants").json()["rules"] == []


async def test_allow_this_again_drafts_from_a_card(tenant):
    seed_small(tenant.store, tenant.workspace_id)
    async with tenant.client() as client:
        held = await client.call_tool("request_confirmation", {"tool": "set_category_budget", "arguments": {
            "category_id": "cat_groceries", "month": "current", "amount": "420.00"}})
    card_id = held.structured_content["confirmationId"]
    options = tenant.page().get(f"/api/standing-grants/options?card={card_id}").json()
    draft = options["draft"]
    assert (draft["connectionId"], draft["tool"], draft["fromCard"]) == (tenant.connection_id, "set_category_budget",
                                                                         card_id)
    assert [(b["argument"], b["kind"], b["value"]) for b in draft["bounds"]] == [
        ("amount", "max", "420.00"), ("category_id", "in", ["cat_groceries"])]
    assert "set_category_budget" in [t["tool"] for t in options["tools"]]
    assert "create_standing_grant" not in [t["tool"] for t in options["tools"]]


async def test_mcp_offers_no_way_to_grant(tenant):
    async with tenant.client() as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "create_standing_grant" not in names
        asked = await client.call_tool("request_confirmation", {"tool": "create_standing_grant",
                                                                "arguments": grant_body(tenant)})
    assert asked.is_error and "Unknown tool 'create_standing_grant'" in asked.content[0].text
    assert tenant.page().get("/api/cards").json()["cards"] == []


async def test_a_card_offers_allow_this_again_exactly_where_the_options_endpoint_drafts_one(tenant):
    """canGrant on the card (listed and alone) follows the options endpoint: a grantable tool an
    agent asked for, a live connection of the person, no owner's rule against it, and a passkey when
    the workspace's policy makes granting take one; where it is false the endpoint says why."""
    seed_small(tenant.store, tenant.workspace_id)
    async with tenant.client() as client:
        budget_card = (await client.call_tool("set_category_budget", {
            "category_id": "cat_groceries", "month": "current", "amount": "420.00"})).structured_content
        note_card = (await client.call_tool("publish_note", {"note_id": "n1", "text": "x"})).structured_content
    page = tenant.page()

    def offered() -> dict:
        listed = {c["id"]: (c.get("canEdit", False), c.get("canGrant", False))
                  for c in page.get("/api/cards").json()["cards"]}
        for card_id, pair in listed.items():
            one = page.get(f"/api/cards/{card_id}").json()
            assert (one["canEdit"], one["canGrant"]) == pair, card_id
            assert one["more"] is any(pair)  # the page loads web/edit.js for it
        return listed

    def refusal() -> tuple[int, str]:
        answer = page.get(f"/api/standing-grants/options?card={budget_card['confirmationId']}")
        return answer.status_code, answer.json().get("error", {}).get("message", "")

    assert offered() == {budget_card["confirmationId"]: (True, True), note_card["confirmationId"]: (False, False)}
    assert refusal() == (200, "")
    note_refused = page.get(f"/api/standing-grants/options?card={note_card['confirmationId']}")
    assert note_refused.status_code == 409 and note_refused.json()["error"]["message"] == (
        "publish_note cannot be allowed again: it declares nothing a standing grant could bound.")

    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "risky"})
    assert offered()[budget_card["confirmationId"]] == (True, False)
    assert refusal() == (409, "Under this workspace's passkey policy a standing grant is confirmed with your "
                              "passkey, and you have none: add one in Settings, Passkeys, first.")

    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "never"})
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id,
                                                      {"standing_grants_never": ["tool:set_category_budget"]})
    assert offered()[budget_card["confirmationId"]] == (True, False)
    assert refusal() == (409, "The workspace's owner has ruled that no standing grant may cover set_category_budget.")
