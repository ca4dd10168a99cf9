"""Who asked for a card (an agent, a member from Settings, the command line) and whether it can be
undone, as the confirm API shows them: on one card, in both lists, after an answer, in the audit
trail and the receipt."""

from __future__ import annotations

import pytest

from countersign.core import askers
from countersign.gate.question import Question
from countersign.surfaces.upstream_requests import file_change
from tests.support.harness import mcp_client
from tests.support.passkey_flows import file_card

pytestmark = pytest.mark.anyio

AGENT = {"kind": "agent", "name": "Test agent", "you": False}
CLI = {"kind": "cli", "name": None, "you": False}


def you(tenant) -> dict:
    return {"kind": "person", "name": tenant.person.name or tenant.person.email, "you": True}


def views(signed, card_id: str) -> list[dict]:
    """The card as each view shows it: alone, and in the pending list (which leaves out a false
    ``irreversible``, as every field at its default)."""
    listed = [{"irreversible": False, **c} for c in signed.get("/api/cards").json()["cards"] if c["id"] == card_id]
    return [signed.get(f"/api/cards/{card_id}").json(), *listed]


def filed_by(tenant, card_id: str) -> str:
    trail = tenant.store.cards.audit_trail(tenant.workspace_id, card_id)
    assert trail[0].event == "filed"
    return trail[0].actor


async def test_an_agents_card_names_its_connection(signed, tenant):
    card = file_card(tenant)
    shown = views(signed, card.id)
    assert len(shown) == 2
    for view in shown:
        assert (view["askedBy"], view["connectionName"], view["irreversible"]) == (AGENT, "Test agent", False)
    assert filed_by(tenant, card.id) == f"connection:{tenant.connection_id}"


async def test_a_passkey_policy_change_from_settings_was_asked_by_you(signed, tenant):
    filed = signed.post("/api/settings/passkey-policy", {"policy": "risky"})
    assert filed.status_code == 201, filed.text
    assert filed.json()["askedBy"] == you(tenant)
    card_id = filed.json()["id"]
    shown = views(signed, card_id)
    assert [v["askedBy"] for v in shown] == [you(tenant)] * 2
    assert filed_by(tenant, card_id) == f"person:{tenant.person.id}"
    declined = signed.post(f"/api/cards/{card_id}/decline", {"reason": "not now"}).json()
    assert declined["askedBy"] == you(tenant)
    [answered] = [c for c in signed.get("/api/history").json()["cards"] if c["id"] == card_id]
    assert answered["askedBy"] == you(tenant)


async def test_a_change_another_member_asked_for_names_them(signed, tenant):
    admin = tenant.add_person("admin")
    tenant.store.workspaces.update_person(tenant.workspace_id, admin.id, name="Ada Admin")
    desk = tenant.runtime.desk
    ctx = desk.context(tenant.workspace_id, tenant.person, None, desk.now())
    question = Question.of(desk.registry.action("set_passkey_policy"), {"policy": "every"}, ctx)
    card, _ = desk.file(question, "page", askers.person(admin.id))
    for view in views(signed, card.id):
        assert view["askedBy"] == {"kind": "person", "name": "Ada Admin", "you": False}
    assert filed_by(tenant, card.id) == f"person:{admin.id}"


async def test_a_change_filed_from_the_command_line_says_so(signed, tenant):
    card = file_change(tenant.runtime.desk, tenant.workspace_id, tenant.person, "buy_credits", {"credits": 20})
    for view in views(signed, card.id):
        assert (view["askedBy"], view["irreversible"]) == (CLI, True)
    assert filed_by(tenant, card.id) == "cli"


async def test_what_cannot_be_undone_is_marked_on_every_view_and_what_can_is_not(signed, tenant):
    async with mcp_client(tenant.url, tenant.token) as client:
        bought = (await client.call_tool("buy_credits", {"credits": 20})).structured_content
        edited = (await client.call_tool("publish_note", {"note_id": "n1", "text": "t"})).structured_content
    assert bought["status"] == edited["status"] == "pending"
    for view in views(signed, bought["confirmationId"]):
        assert (view["askedBy"], view["irreversible"]) == (AGENT, True)
    assert [v["irreversible"] for v in views(signed, edited["confirmationId"])] == [False, False]
    done = signed.post(f"/api/cards/{bought['confirmationId']}/confirm")
    assert done.status_code == 200 and (done.json()["state"], done.json()["irreversible"]) == ("completed", True)
    [answered] = [c for c in signed.get("/api/history").json()["cards"] if c["id"] == bought["confirmationId"]]
    assert answered["irreversible"] is True


async def test_the_receipt_of_a_change_from_settings_says_who_filed_it(signed, tenant):
    card_id = signed.post("/api/settings/passkey-policy", {"policy": "risky"}).json()["id"]
    assert signed.post(f"/api/cards/{card_id}/confirm").status_code == 200
    receipt = signed.get(f"/api/cards/{card_id}/receipt").json()
    assert receipt["audit"][0]["event"] == "filed"
    assert receipt["audit"][0]["actor"] == f"person:{tenant.person.id}"


async def test_a_card_you_filed_yourself_owes_you_no_email_but_one_another_member_filed_does(signed, tenant):
    """From Settings the person is on the page when their card is filed: no email about it (as
    when they reopen a card). A card another member filed for them still owes one."""
    filed = signed.post("/api/settings/passkey-policy", {"policy": "risky"})
    assert filed.status_code == 201, filed.text
    assert tenant.store.outbox.get_notification(filed.json()["id"]) is None
    admin = tenant.add_person("admin")
    desk = tenant.runtime.desk
    ctx = desk.context(tenant.workspace_id, tenant.person, None, desk.now())
    question = Question.of(desk.registry.action("set_passkey_policy"), {"policy": "every"}, ctx)
    card, _ = desk.file(question, "page", askers.person(admin.id))
    assert tenant.store.outbox.get_notification(card.id) is not None
    agents = file_card(tenant)
    assert tenant.store.outbox.get_notification(agents.id) is not None
