"""Bearer auth on /mcp and workspace isolation (docs/security.md)."""

from __future__ import annotations

import httpx2
import pytest

from countersign.identity import accounts

pytestmark = pytest.mark.anyio

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def _post(url, headers):
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(url, json=INIT, headers={**HEADERS, **headers})


async def test_no_token_is_401_with_a_challenge(tenant):
    response = await _post(tenant.url, {})
    assert response.status_code == 401
    origin = tenant.url.removesuffix("/mcp")  # RFC 9728: the challenge names the resource's metadata
    assert response.headers["www-authenticate"] == (
        f'Bearer realm="countersign", resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp", '
        'scope="mcp"')
    assert response.json()["error"] == "unauthorized"


async def test_bad_token_is_401_invalid_token(tenant):
    response = await _post(tenant.url, {"Authorization": "Bearer cs_not-a-real-token"})
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert "not valid" in response.json()["error_description"]


async def test_revoked_connection_is_401(tenant):
    token = tenant.connect(name="Soon revoked")
    connection = tenant.store.connections.get_connection_by_token_hash(accounts.secret_hash(token))
    assert (await _post(tenant.url, {"Authorization": f"Bearer {token}"})).status_code == 200
    tenant.store.connections.revoke_connection(tenant.workspace_id, connection.id, tenant.runtime.desk.now())
    response = await _post(tenant.url, {"Authorization": f"Bearer {token}"})
    assert response.status_code == 401
    assert "revoked" in response.json()["error_description"]


async def test_a_token_of_workspace_a_cannot_see_workspace_b(tenant, live):
    from tests.support.harness import new_tenant

    runtime, server = live
    other = new_tenant(runtime, server.origin)
    async with other.client() as client:
        card = (await client.call_tool("publish_note", {"note_id": "n1", "text": "b"})).structured_content[
            "confirmationId"
        ]
    async with tenant.client() as client:
        status = await client.call_tool("get_confirmation_status", {"confirmation_id": card})
        cancel = await client.call_tool("cancel_confirmation", {"confirmation_id": card})
        unknown = await client.call_tool("get_confirmation_status", {"confirmation_id": "c_unknown"})
        listed = (await client.call_tool("list_confirmations", {})).structured_content
        edit = await client.call_tool("edit_note", {"note_id": "n1", "text": "a"})
    assert status.is_error and cancel.is_error
    masked = lambda text: text.replace(card, "ID").replace("c_unknown", "ID")  # noqa: E731
    assert masked(status.content[0].text) == masked(unknown.content[0].text)
    assert listed["confirmations"] == []
    assert edit.structured_content["status"] == "pending"  # its own n1, not B's
    assert other.note("n1")["text"] == "text 1"
    assert other.store.cards.get_card(other.workspace_id, card, runtime.desk.now()).state.value == "pending"


async def test_another_person_in_the_workspace_cannot_poll_or_cancel(tenant):
    colleague = tenant.add_person("member")
    token = tenant.connect(colleague, "Colleague's agent")
    async with tenant.client() as client:
        card = (await client.call_tool("publish_note", {"note_id": "n1", "text": "mine"})).structured_content[
            "confirmationId"
        ]
    from tests.support.harness import mcp_client

    async with mcp_client(tenant.url, token) as client:
        status = await client.call_tool("get_confirmation_status", {"confirmation_id": card})
        cancel = await client.call_tool("cancel_confirmation", {"confirmation_id": card})
        listed = (await client.call_tool("list_confirmations", {})).structured_content
        unknown = [await client.call_tool(tool, {"confirmation_id": "c_unknown"})
                   for tool in ("get_confirmation_status", "cancel_confirmation")]
    assert status.is_error and cancel.is_error and listed["confirmations"] == []
    # the colleague's card reads in exactly the words of an unknown id: nothing says it exists
    masked = lambda result: result.content[0].text.replace(card, "ID").replace("c_unknown", "ID")  # noqa: E731
    assert [masked(status), masked(cancel)] == [masked(u) for u in unknown]
    assert masked(status).endswith("No confirmation with id 'ID' in this workspace.")


async def test_oversized_arguments_are_refused_and_nothing_is_written(tenant):
    async with tenant.client() as client:
        result = await client.call_tool(
            "request_confirmation", {"tool": "tidy_note", "arguments": {"note_id": "n1", "text": "x" * 70_000}}
        )
        listed = (await client.call_tool("list_confirmations", {})).structured_content
    assert result.is_error and "arguments: over 64 KiB" in result.content[0].text
    assert listed["confirmations"] == []
    assert tenant.note("n1")["text"] == "text 1"


async def test_malformed_json_rpc_is_a_parse_error(tenant):
    async with httpx2.AsyncClient(timeout=10) as http:
        response = await http.post(
            tenant.url, content=b"{not json", headers={**HEADERS, "Authorization": f"Bearer {tenant.token}"}
        )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


async def test_a_session_only_answers_the_connection_that_opened_it(tenant, live):
    from tests.support.harness import new_tenant

    runtime, server = live
    opened = await _post(tenant.url, {"Authorization": f"Bearer {tenant.token}"})
    session = opened.headers["mcp-session-id"]
    other = new_tenant(runtime, server.origin)
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    base = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    async with httpx2.AsyncClient(timeout=10) as http:
        hijack = await http.post(tenant.url, json=listing, headers={**base, "Authorization": f"Bearer {other.token}"})
        own = await http.post(tenant.url, json=listing, headers={**base, "Authorization": f"Bearer {tenant.token}"})
    assert hijack.status_code == 404
    assert own.status_code == 200


async def test_a_body_far_over_the_limit_is_413_before_parsing(tenant):
    async with httpx2.AsyncClient(timeout=10) as http:
        response = await http.post(tenant.url, content=b"{" + b" " * 300_000 + b"}",
                                   headers={**HEADERS, "Authorization": f"Bearer {tenant.token}"})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
