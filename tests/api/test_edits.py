"""Edit, then approve, from outside over real HTTP: the card view lists what a person may change;
POST /api/cards/{id}/edit checks the values as an agent's call is checked (422 naming the field,
nothing written), files a new card with a new preview, and the confirm of that card tells the agent
exactly what changed and by whom — in its status (polled by the id it was given) and the receipt.
Refused: a field the action does not declare, a value the checker refuses, another person's card,
an answered card; an agent has no tool to edit with."""

from __future__ import annotations

import pytest

from countersign.identity.passkeys.receipts import verify_receipt
from tests.budget.ledger import seed_small

pytestmark = pytest.mark.anyio

BUDGET = {"category_id": "cat_groceries", "month": "current", "amount": "120.00"}


async def held(tenant, tool: str = "set_category_budget", args: dict = BUDGET) -> dict:
    async with tenant.client() as client:
        out = (await client.call_tool(tool, args)).structured_content
    assert out["status"] == "pending", out
    return out


async def poll(tenant, confirmation_id: str) -> dict:
    async with tenant.client() as client:
        return (await client.call_tool("get_confirmation_status",
                                       {"confirmation_id": confirmation_id})).structured_content


def pending_ids(tenant) -> list[str]:
    cards = tenant.store.cards.list_pending_cards(tenant.workspace_id, tenant.person.id, tenant.runtime.desk.now())
    return [c.id for c in cards[0]]


async def test_edit_then_confirm_over_http_and_the_agent_is_told_what_changed(tenant):
    seed_small(tenant.store, tenant.workspace_id)
    asked = await held(tenant)
    page = tenant.page()
    view = page.get(f"/api/cards/{asked['confirmationId']}").json()
    assert view["editable"] == [{"name": "amount", "label": "amount budgeted", "kind": "amount",
                                 "value": "120.00", "shown": "120.00"}]
    edited = page.post(f"/api/cards/{asked['confirmationId']}/edit", {"arguments": {"amount": "80.00"}})
    assert edited.status_code == 200, edited.text
    new = edited.json()
    assert new["state"] == "pending" and new["id"] != asked["confirmationId"]
    assert new["title"].endswith("→ 80.00?") and asked["title"].endswith("→ 120.00?")
    by = tenant.person.name or tenant.person.email
    changes = [{"field": "amount", "label": "amount budgeted", "from": "120.00", "to": "80.00"}]
    assert new["edited"] == {"from": asked["confirmationId"], "into": None, "by": by, "changes": changes}
    assert new["askedBy"]["kind"] == "agent"  # still the agent's request
    old = page.get(f"/api/cards/{asked['confirmationId']}").json()
    assert (old["state"], old["edited"]["into"], old["editable"]) == ("edited", new["id"], [])
    assert pending_ids(tenant) == [new["id"]]
    waiting = await poll(tenant, asked["confirmationId"])
    assert (waiting["status"], waiting["confirmationId"], waiting["editedFrom"]) == (
        "pending", new["id"], asked["confirmationId"])

    confirmed = page.post(f"/api/cards/{new['id']}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["state"] == "completed", confirmed.text
    message = f"Ran with 80.00 instead of 120.00 (amount budgeted), changed by {by}."
    done = await poll(tenant, asked["confirmationId"])  # the id the agent was given leads to the outcome
    assert (done["status"], done["confirmationId"], done["message"]) == ("completed", new["id"], message)
    assert done["edited"]["original"] == BUDGET and done["edited"]["arguments"] == dict(BUDGET, amount="80.00")
    receipt = page.get(f"/api/cards/{new['id']}/receipt").json()
    verify_receipt(receipt)
    assert receipt["card"]["arguments"]["amount"] == "80.00"
    assert receipt["card"]["edited"]["original"] == BUDGET and receipt["card"]["edited"]["changes"] == changes
    assert [(e["event"], e["detail"]) for e in receipt["audit"]] == [
        ("filed", f"edited from {asked['confirmationId']}: amount budgeted 120.00 → 80.00"),
        ("completed", message)]
    again = page.post(f"/api/cards/{asked['confirmationId']}/edit", {"arguments": {"amount": "70.00"}})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_answered"


@pytest.mark.parametrize("tool, args, change, field", [
    ("buy_credits", {"credits": 120}, {"credits": -5}, "credits"),
    ("buy_credits", {"credits": 120}, {"credits": "80"}, "credits"),
    ("buy_credits", {"credits": 120}, {"price": 1}, "arguments.price"),
    ("set_category_budget", BUDGET, {"amount": "a lot"}, "amount"),
    ("set_category_budget", BUDGET, {"category_id": "cat_tennis"}, "arguments.category_id"),
])
async def test_refused_edits_say_why_and_write_nothing(tenant, tool, args, change, field):
    seed_small(tenant.store, tenant.workspace_id)
    asked = await held(tenant, tool, args)
    page = tenant.page()
    before = page.get(f"/api/cards/{asked['confirmationId']}").json()
    refused = page.post(f"/api/cards/{asked['confirmationId']}/edit", {"arguments": change})
    assert refused.status_code == 422, refused.text
    body = refused.json()
    assert body["error"]["code"] == "invalid" and body["field"] == field
    assert body["error"]["message"].startswith(f"{field}: ")
    async with tenant.client() as client:  # the agent's call with that value gets the same sentence
        if not field.startswith("arguments."):
            agent = await client.call_tool(tool, dict(args, **change))
            assert agent.is_error and body["error"]["message"] in agent.content[0].text
    assert page.get(f"/api/cards/{asked['confirmationId']}").json() == before
    assert pending_ids(tenant) == [asked["confirmationId"]]


async def test_another_persons_card_an_answered_card_and_no_agent_tool(tenant):
    seed_small(tenant.store, tenant.workspace_id)
    asked = await held(tenant)
    other = tenant.add_person()
    theirs = tenant.page(other).post(f"/api/cards/{asked['confirmationId']}/edit", {"arguments": {"amount": "80"}})
    assert theirs.status_code == 403 and theirs.json()["error"]["code"] == "not_yours"
    page = tenant.page()
    assert page.post(f"/api/cards/{asked['confirmationId']}/decline").status_code == 200
    answered = page.post(f"/api/cards/{asked['confirmationId']}/edit", {"arguments": {"amount": "80"}})
    assert answered.status_code == 409 and answered.json()["error"]["code"] == "already_answered"
    assert answered.json()["card"]["state"] == "declined" and pending_ids(tenant) == []
    async with tenant.client() as client:
        tools = (await client.list_tools()).tools  # the only tools that take a card's id do not edit it
        on_a_card = {t.name for t in tools if "confirmation_id" in (t.input_schema or {}).get("properties", {})}
        assert on_a_card == {"get_confirmation_status", "cancel_confirmation"}
        refused = await client.call_tool("request_confirmation", {"tool": "edit_card", "arguments": {}})
        assert refused.is_error
