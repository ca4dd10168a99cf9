"""Cards on the confirm page over real HTTP: lists, one card, confirm, decline, and every refusal."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from countersign.core.card_states import CHANGED_MESSAGE
from countersign.store.docs import DocWrite
from tests.api.pages import Page
from tests.support.harness import mcp_client

pytestmark = pytest.mark.anyio

HIDDEN = ("ticket", "fingerprint", "arguments", "subject")


async def file(tenant, note: str = "n1", text: str = "new text", token: str | None = None) -> str:
    async with mcp_client(tenant.url, token or tenant.token) as client:
        held = await client.call_tool("publish_note", {"note_id": note, "text": text})
    assert held.structured_content["status"] == "pending", held
    return held.structured_content["confirmationId"]


async def agent_status(tenant, card_id: str, token: str | None = None) -> dict:
    async with mcp_client(tenant.url, token or tenant.token) as client:
        result = await client.call_tool("get_confirmation_status", {"confirmation_id": card_id})
    return result.structured_content


FIELDS = {"id", "tool", "title", "lines", "sections", "state", "status", "lapse", "connectionName", "askedBy",
          "irreversible", "createdAt", "expiresAt", "result", "next", "reason", "refusal", "passkeyRequired",
          "passkeySigned", "outcome", "signedWith", "grant", "editable", "canEdit", "canGrant", "more", "edited",
          "quorum"}
# A list leaves out the fields at their default (CardView's): what a pending card has none of.
DEFAULTS = {"sections": [], "lapse": None, "irreversible": False, "result": None, "next": None, "reason": None,
            "refusal": None, "passkeyRequired": False, "passkeySigned": False, "outcome": None, "signedWith": None,
            "grant": None, "editable": [], "canEdit": False, "canGrant": False, "more": False,
            "edited": None, "quorum": None}


def assert_card_view(view: dict) -> None:
    assert set(view) == FIELDS
    assert not any(word in view for word in HIDDEN)
    assert view["createdAt"].endswith("Z") and view["expiresAt"].endswith("Z")


def assert_listed_pending_view(view: dict) -> None:
    """A pending card as a list shows it: every field but those at their default, which it leaves out."""
    assert set(view) == FIELDS - set(DEFAULTS), view
    assert not any(word in view for word in HIDDEN)
    assert view["createdAt"].endswith("Z") and view["expiresAt"].endswith("Z")


async def test_pending_list_oldest_first_and_paged(signed, tenant):
    ids = [await file(tenant, "n1", f"text {i}") for i in range(3)]
    first = signed.get("/api/cards?limit=2")
    assert first.status_code == 200, first.text
    body = first.json()
    assert [c["id"] for c in body["cards"]] == ids[:2]
    assert body["nextCursor"]
    for view in body["cards"]:
        assert_listed_pending_view(view)
        assert view["state"] == view["status"] == "pending"
        assert view["connectionName"] == "Test agent"
        assert view["tool"] == "publish_note"
        assert view["title"] == "Change note ‘Note 1’?"
    second = signed.get(f"/api/cards?limit=2&cursor={body['nextCursor']}").json()
    assert [c["id"] for c in second["cards"]] == ids[2:]
    assert second["nextCursor"] is None
    everything = signed.get("/api/cards").json()
    assert [c["id"] for c in everything["cards"]] == ids
    # the one card's view is complete: the list left out only defaults
    one = signed.get(f"/api/cards/{ids[0]}").json()
    assert_card_view(one)
    assert one == {**DEFAULTS, **everything["cards"][0]}


async def test_bad_paging_input(signed, tenant):
    for query, field in (("limit=0", "limit"), ("limit=101", "limit"), ("limit=abc", "limit"),
                         ("cursor=not-a-cursor", "cursor")):
        response = signed.get(f"/api/cards?{query}")
        assert response.status_code == 422, query
        assert response.json()["error"]["message"].startswith(field), response.json()
        assert signed.get(f"/api/history?{query}").status_code == 422


async def test_confirm_runs_once_and_the_agent_sees_the_result(signed, tenant):
    before = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1").version
    card_id = await file(tenant, "n1", "confirmed text")
    one = signed.get(f"/api/cards/{card_id}")
    assert one.status_code == 200
    assert one.json()["lines"] == ["text 1 → confirmed text"] and one.json()["sections"] == []  # (most cards have none)
    response = signed.post(f"/api/cards/{card_id}/confirm")
    assert response.status_code == 200, response.text
    view = response.json()
    assert_card_view(view)
    assert view["state"] == view["status"] == "completed"
    assert view["result"] == {"note": "n1", "text": "confirmed text"}
    assert view["next"] == [{"tool": "list_notes", "description": "Read the notes back to check the change.",
                             "personMustAct": False}]
    assert tenant.note("n1")["text"] == "confirmed text"
    status = await agent_status(tenant, card_id)
    assert status["status"] == "completed"
    assert status["result"] == {"note": "n1", "text": "confirmed text"}
    assert status["next"][0]["tool"] == "list_notes"
    again = signed.post(f"/api/cards/{card_id}/confirm")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "already_answered"
    assert again.json()["card"]["state"] == "completed"
    assert tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1").version == before + 1  # written exactly once
    history = signed.get("/api/history").json()
    assert [c["id"] for c in history["cards"]] == [card_id]
    assert signed.get("/api/cards").json()["cards"] == []


async def test_decline_with_reason_reaches_the_agent(signed, tenant):
    card_id = await file(tenant)
    response = signed.post(f"/api/cards/{card_id}/decline", {"reason": "  not this week  "})
    assert response.status_code == 200, response.text
    view = response.json()
    assert view["state"] == view["status"] == "declined"
    assert view["reason"] == "not this week"
    status = await agent_status(tenant, card_id)
    assert status["status"] == "declined" and status["reason"] == "not this week"
    assert tenant.note("n1")["text"] == "text 1"
    assert signed.post(f"/api/cards/{card_id}/confirm").json()["error"]["code"] == "already_answered"


async def test_decline_without_a_body_and_bad_reasons(signed, tenant):
    card_id = await file(tenant)
    too_long = signed.post(f"/api/cards/{card_id}/decline", {"reason": "x" * 501})
    assert too_long.status_code == 422 and "reason" in too_long.json()["error"]["message"]
    wrong = signed.post(f"/api/cards/{card_id}/decline", {"reason": 7})
    assert wrong.status_code == 422 and "reason" in wrong.json()["error"]["message"]
    assert signed.get(f"/api/cards/{card_id}").json()["state"] == "pending"  # nothing written
    plain = signed.post(f"/api/cards/{card_id}/decline")
    assert plain.status_code == 200 and plain.json()["reason"] is None


async def test_32_simultaneous_confirms_run_once(signed, tenant):
    card_id = await file(tenant, "n2", "raced")

    def click(_):
        page = Page(signed.origin)
        page.session_id, page.csrf = signed.session_id, signed.csrf
        try:
            return page.post(f"/api/cards/{card_id}/confirm")
        finally:
            page.close()

    with ThreadPoolExecutor(32) as pool:
        responses = list(pool.map(click, range(32)))
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(200) == 1, [r.text for r in responses if r.status_code != 409]
    assert statuses.count(409) == 31
    (winner,) = [r for r in responses if r.status_code == 200]
    assert winner.json()["state"] == "completed"
    refused = {r.json()["error"]["code"] for r in responses if r.status_code == 409}
    assert refused <= {"being_confirmed", "already_answered"}
    assert tenant.note("n2")["text"] == "raced"
    doc = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n2")
    assert doc.version == 2  # seeded at 1, changed exactly once
    events = [e.event for e in tenant.store.cards.audit_trail(tenant.workspace_id, card_id)]
    assert events == ["filed", "completed"]  # one winner: its effect and its entry in one transaction


async def test_confirm_after_the_agent_withdrew(signed, tenant):
    card_id = await file(tenant)
    async with tenant.client() as client:
        await client.call_tool("cancel_confirmation", {"confirmation_id": card_id})
    response = signed.post(f"/api/cards/{card_id}/confirm")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "withdrawn"
    assert response.json()["card"]["state"] == "withdrawn"
    assert response.json()["card"]["status"] == "declined"
    assert tenant.note("n1")["text"] == "text 1"
    assert signed.post(f"/api/cards/{card_id}/decline").json()["error"]["code"] == "withdrawn"
    events = [e.event for e in tenant.store.cards.audit_trail(tenant.workspace_id, card_id)]
    assert "running" not in events


async def test_changed_behind_the_card(signed, tenant):
    card_id = await file(tenant, "n1", "from the card")
    doc = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
    tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", "n1", dict(doc.data, text="edited"),
                                                                doc.version)])
    response = signed.post(f"/api/cards/{card_id}/confirm")
    assert response.status_code == 409
    error = response.json()["error"]
    expected = f"{CHANGED_MESSAGE} The notes changed between the preview and the answer; nothing was written."
    assert error["code"] == "changed" and error["message"] == expected
    assert response.json()["card"]["state"] == "declined"
    assert response.json()["card"]["reason"] == expected
    assert response.json()["card"]["refusal"] == "changed"
    assert tenant.note("n1")["text"] == "edited"
    status = await agent_status(tenant, card_id)
    assert status["status"] == "declined" and status["reason"] == expected


async def test_expired_card(clock, signed, tenant):
    card_id = await file(tenant)
    clock.advance(tenant.runtime.desk.settings.card_ttl + 1)
    assert signed.get(f"/api/cards/{card_id}").json()["state"] == "expired"
    response = signed.post(f"/api/cards/{card_id}/confirm")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "expired"
    assert signed.post(f"/api/cards/{card_id}/decline").json()["error"]["code"] == "expired"
    assert signed.get("/api/cards").json()["cards"] == []
    assert tenant.note("n1")["text"] == "text 1"


async def test_another_persons_card(signed, tenant):
    colleague = tenant.add_person("approver")
    card_id = await file(tenant, token=tenant.connect(colleague, "Colleague's agent"))
    for response in (signed.get(f"/api/cards/{card_id}"), signed.post(f"/api/cards/{card_id}/confirm"),
                     signed.post(f"/api/cards/{card_id}/decline", {"reason": "no"})):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "not_yours"
        assert "card" not in response.json()
    assert signed.get("/api/cards").json()["cards"] == []
    assert tenant.store.cards.get_card(tenant.workspace_id, card_id, tenant.runtime.desk.now()).state.value == "pending"


async def test_another_workspaces_card(signed, tenant, other_tenant):
    card_id = await file(other_tenant)
    for response in (signed.get(f"/api/cards/{card_id}"), signed.post(f"/api/cards/{card_id}/confirm"),
                     signed.post(f"/api/cards/{card_id}/decline")):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    unknown = signed.get("/api/cards/c_doesnotexist")
    assert unknown.status_code == 404 and unknown.json() == {
        "error": {"code": "not_found", "message": "No card with that id in this workspace."}}
    assert response.json() == unknown.json()  # indistinguishable from an unknown id
    assert signed.post("/api/cards/" + "x" * 2000 + "/confirm").status_code == 404
    assert other_tenant.note("n1")["text"] == "text 1"


async def test_tampered_card(signed, tenant):
    card_id = await file(tenant, "n1", "honest")
    path = tenant.runtime.settings.store[len("sqlite:///"):]
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE cards SET arguments = ? WHERE id = ?", ('{"note_id": "n1", "text": "forged"}', card_id))
    db.close()
    response = signed.post(f"/api/cards/{card_id}/confirm")
    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "tampered"
    assert tenant.note("n1")["text"] == "text 1"
    events = [(e.event, e.detail) for e in tenant.store.cards.audit_trail(tenant.workspace_id, card_id)]
    assert ("refused", "tampered") in events and not any(e == "running" for e, _ in events)


async def test_an_outcome_is_shown_as_plain_as_the_card(signed, tenant):
    """The result after Confirm is data too (an agent's, an upstream's): a bidi override in it
    is shown as [U+202E], as on the card's lines, never handed to the page raw."""
    card_id = await file(tenant, text="safe \u202etxt.exe")
    view = signed.get(f"/api/cards/{card_id}").json()
    assert view["lines"] == ["text 1 → safe [U+202E]txt.exe"]
    done = signed.post(f"/api/cards/{card_id}/confirm").json()
    assert done["state"] == "completed" and done["result"]["text"] == "safe [U+202E]txt.exe"
    assert "\u202e" not in signed.get(f"/api/cards/{card_id}").text
    assert tenant.note("n1")["text"] == "safe \u202etxt.exe"  # what ran is what was asked
