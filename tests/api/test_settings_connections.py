"""Settings and connections over real HTTP."""

from __future__ import annotations

import httpx2
import pytest

from tests.api.pages import Page
from tests.api.test_cards import agent_status, file
from tests.support.harness import mcp_client

pytestmark = pytest.mark.anyio


def test_owner_settings(signed, tenant):
    view = signed.get("/api/settings").json()
    assert view == {"me": {"agent_requests_email": True, "quiet_hours": None, "quiet_until": None,
                           "email_interval": 900, "channels": {"email": True, "slack": True, "push": True}},
                    "workspace": {"ask_before_drafting": True, "ask_before_approvals": True, "confirm_in_client": True},
                    "canEditWorkspace": True}
    changed = signed.patch("/api/settings/workspace", {"confirm_in_client": False, "ask_before_drafting": False})
    assert changed.status_code == 200, changed.text
    assert changed.json()["workspace"] == {"ask_before_drafting": False, "ask_before_approvals": True,
                                           "confirm_in_client": False}
    stored = tenant.store.workspaces.get_workspace(tenant.workspace_id)
    assert stored.setting("confirm_in_client") is False and stored.setting("ask_before_drafting") is False
    me = signed.patch("/api/settings/me", {"agent_requests_email": False})
    assert me.status_code == 200 and me.json()["me"]["agent_requests_email"] is False
    assert tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id).agent_requests_email is False


def test_member_cannot_change_the_workspace(page, tenant):
    member = tenant.add_person("member")
    page.sign_in(tenant.runtime, member)
    view = page.get("/api/settings").json()
    assert view["workspace"] is None and view["canEditWorkspace"] is False
    refused = page.patch("/api/settings/workspace", {"ask_before_approvals": False})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "forbidden"
    assert tenant.store.workspaces.get_workspace(tenant.workspace_id).setting("ask_before_approvals") is True
    assert page.patch("/api/settings/me", {"agent_requests_email": False}).status_code == 200


def test_admin_can_change_the_workspace(page, tenant):
    assert tenant.store.workspaces.get_workspace(tenant.workspace_id).setting("ask_before_approvals") is True
    page.sign_in(tenant.runtime, tenant.add_person("admin"))
    assert page.patch("/api/settings/workspace", {"ask_before_approvals": False}).status_code == 200
    changed = {"ask_before_drafting": True, "ask_before_approvals": False, "confirm_in_client": True}
    assert page.get("/api/settings").json()["workspace"] == changed
    assert tenant.store.workspaces.get_workspace(tenant.workspace_id).setting("ask_before_approvals") is False
    approver = Page(page.origin).sign_in(tenant.runtime, tenant.add_person("approver"))
    assert approver.patch("/api/settings/workspace", {"ask_before_approvals": True}).status_code == 403
    approver.close()
    workspace = tenant.store.workspaces.get_workspace(tenant.workspace_id)
    assert workspace.setting("ask_before_approvals") is False  # 403: unchanged
    assert page.get("/api/settings").json()["workspace"] == changed


@pytest.mark.parametrize("path,body,field", [
    ("/api/settings/workspace", {"ask_before_drafting": "false"}, "ask_before_drafting"),
    ("/api/settings/workspace", {"ask_before_drafting": 0}, "ask_before_drafting"),
    ("/api/settings/workspace", {"ask_before_drafting": None}, "ask_before_drafting"),
    ("/api/settings/workspace", {"confirm_in_client": False, "surprise": True}, "surprise"),
    ("/api/settings/workspace", {}, "body"),
    ("/api/settings/workspace", [], "body"),
    ("/api/settings/me", {"agent_requests_email": "no"}, "agent_requests_email"),
    ("/api/settings/me", {"agent_requests_email": False, "role": "owner"}, "role"),
    ("/api/settings/me", {}, "body"),
])
def test_bad_settings_write_nothing(signed, tenant, path, body, field):
    response = signed.patch(path, body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid" and error["message"].startswith(field), error
    assert response.json()["field"] == field
    assert signed.get("/api/settings").json()["workspace"] == {
        "ask_before_drafting": True, "ask_before_approvals": True, "confirm_in_client": True}
    assert tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id).agent_requests_email is True


async def test_connections_create_list_revoke(signed, tenant):
    listed = signed.get("/api/connections").json()["connections"]
    assert [c["name"] for c in listed] == ["Test agent"]
    assert listed[0]["revoked"] is False and listed[0]["createdAt"].endswith("Z")

    created = signed.post("/api/connections", {"name": "Claude on laptop"})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["mcpUrl"] == f"{signed.origin}/mcp"
    token, connection = body["token"], body["connection"]
    assert token.startswith("cs_") and connection["name"] == "Claude on laptop" and connection["revoked"] is False
    listed = signed.get("/api/connections").json()["connections"]
    assert [c["name"] for c in listed] == ["Test agent", "Claude on laptop"]
    assert token not in signed.get("/api/connections").text  # shown once, never again

    card_id = await file(tenant, "n2", "via the new connection", token=token)
    kept = await file(tenant, "n1", "via the old connection")
    view = signed.get(f"/api/cards/{card_id}").json()
    assert view["connectionName"] == "Claude on laptop"

    revoked = signed.post(f"/api/connections/{connection['id']}/revoke")
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["withdrawnCards"] == 1
    assert revoked.json()["connection"]["revoked"] is True
    assert signed.get(f"/api/cards/{card_id}").json()["state"] == "withdrawn"
    assert [c["id"] for c in signed.get("/api/cards").json()["cards"]] == [kept]
    status = await agent_status(tenant, card_id)  # through the person's other connection
    assert status["status"] == "declined"
    assert status["reason"] == "Withdrawn: the connection ‘Claude on laptop’ that asked was revoked."
    trail = tenant.store.cards.audit_trail(tenant.workspace_id, card_id)
    assert [(e.event, e.channel, e.actor) for e in trail][-1] == ("withdrawn", "page", f"person:{tenant.person.id}")

    async with httpx2.AsyncClient(timeout=10) as http:
        rejected = await http.post(f"{signed.origin}/mcp", headers={"Authorization": f"Bearer {token}",
                                                                     "Content-Type": "application/json",
                                                                     "Accept": "application/json, text/event-stream"},
                                   json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert rejected.status_code == 401
    assert "www-authenticate" in rejected.headers
    again = signed.post(f"/api/connections/{connection['id']}/revoke")
    assert again.status_code == 200 and again.json()["withdrawnCards"] == 0
    async with mcp_client(tenant.url, tenant.token) as client:  # the other connection still works
        assert (await client.call_tool("list_notes", {})).structured_content["notes"]


def test_connection_input_and_ownership(signed, tenant, other_tenant):
    for body, field in (({"name": ""}, "name"), ({"name": "x" * 101}, "name"), ({"name": 3}, "name"), ({}, "name"),
                        ({"name": "Claude\non laptop"}, "name"), ({"name": "Claude \x1b[31mred"}, "name")):
        response = signed.post("/api/connections", body)
        assert response.status_code == 422, body
        assert response.json()["error"]["message"].startswith(field)
    assert len(signed.get("/api/connections").json()["connections"]) == 1

    colleague = tenant.add_person("member")
    tenant.connect(colleague, "Colleague's agent")
    (theirs,) = tenant.store.connections.list_connections(tenant.workspace_id, colleague.id)
    refused = signed.post(f"/api/connections/{theirs.id}/revoke")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "not_yours"
    assert not tenant.store.connections.get_connection(tenant.workspace_id, theirs.id).revoked
    elsewhere = signed.post(f"/api/connections/{other_tenant.connection_id}/revoke")
    assert elsewhere.status_code == 404
    assert not other_tenant.store.connections.get_connection(other_tenant.workspace_id,
                                                             other_tenant.connection_id).revoked
