"""A person changes their mind: a declined request is reopened from History (POST
/api/cards/{id}/reopen), while an agent still cannot wear them down by calling again."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.store.docs import DocWrite

pytestmark = pytest.mark.anyio

EDIT = {"note_id": "n1", "text": "changed my mind"}


async def _declined(tenant, client) -> dict:
    held = (await client.call_tool("publish_note", EDIT)).structured_content
    assert held["status"] == "pending"
    tenant.decline_on_page(held["confirmationId"], "not now")
    return held


async def test_the_person_reopens_a_declined_request_and_the_agent_finds_the_new_card(tenant):
    async with tenant.client() as client:
        held = await _declined(tenant, client)
        again = (await client.call_tool("publish_note", EDIT)).structured_content
        assert again["status"] == "declined" and again["confirmationId"] == held["confirmationId"]
        assert "before " + again["askAgainAfter"] in again["instructions"]
        assert "reopen this request from History on the confirm page" in again["instructions"]

        reopened = tenant.page().post(f"/api/cards/{held['confirmationId']}/reopen")
        assert reopened.status_code == 200, reopened.text
        view = reopened.json()
        assert view["state"] == "pending" and view["id"] != held["confirmationId"]
        assert view["title"] == held["title"] and view["lines"] == held["lines"]

        # The agent's identical call now finds the reopened card: no third card, no question.
        retry = (await client.call_tool("publish_note", EDIT)).structured_content
        assert retry["status"] == "pending" and retry["confirmationId"] == view["id"]
        old = (await client.call_tool("get_confirmation_status",
                                      {"confirmation_id": held["confirmationId"]})).structured_content
        assert old["status"] == "declined" and old["laterRequest"] == {"confirmationId": view["id"],
                                                                        "status": "pending"}
        # Reopening again is the same live card (one live card per request).
        twice = tenant.page().post(f"/api/cards/{held['confirmationId']}/reopen")
        assert twice.status_code == 200 and twice.json()["id"] == view["id"]

    card = tenant.confirm_on_page(view["id"])
    assert card.state is CardState.COMPLETED and tenant.note("n1")["text"] == "changed my mind"
    trail = tenant.store.cards.audit_trail(tenant.workspace_id, view["id"])
    assert trail[0].event == "filed" and trail[0].actor == f"person:{tenant.person.id}"
    assert trail[0].detail == f"reopened {held['confirmationId']}"
    assert tenant.store.outbox.get_notification(view["id"]) is None  # the person is on the page: no email


async def test_only_a_declined_request_that_still_holds_can_be_reopened(tenant):
    async with tenant.client() as client:
        pending = (await client.call_tool("publish_note", {"note_id": "n2", "text": "x"})).structured_content
        held = await _declined(tenant, client)
    page = tenant.page()
    waiting = page.post(f"/api/cards/{pending['confirmationId']}/reopen")
    assert waiting.status_code == 409 and waiting.json()["error"]["code"] == "already_answered"

    doc = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
    tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", "n1", dict(doc.data, text="moved"),
                                                                doc.version)])
    moved = page.post(f"/api/cards/{held['confirmationId']}/reopen")
    assert moved.status_code == 409 and moved.json()["error"]["code"] == "changed"
    assert "ask the agent for a fresh request" in moved.json()["error"]["message"]
    pending_now = tenant.store.cards.list_pending_cards(tenant.workspace_id, tenant.person.id,
                                                        tenant.runtime.desk.now())[0]
    assert [c.id for c in pending_now] == [pending["confirmationId"]]  # nothing was filed

    other = tenant.add_person()
    assert tenant.page(other).post(f"/api/cards/{held['confirmationId']}/reopen").status_code == 403
    assert page.post("/api/cards/c_nope/reopen").status_code == 404
