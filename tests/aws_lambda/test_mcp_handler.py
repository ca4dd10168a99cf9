"""The ``mcp`` Lambda entry point driven with API Gateway REST API (1.0) events, by real MCP clients."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from countersign.gate import clicks
from countersign.store.hashes import secret_hash
from countersign.surfaces.mcp.server import build_server
from countersign.surfaces.mcp.transport import lambda_handler
from tests.aws_lambda.conftest import instance_runtime
from tests.support.apigw import LambdaInstance, LambdaTransport, http_event, response_body
from tests.support.aws import record_requests
from tests.support.harness import accept, mcp_client

pytestmark = pytest.mark.anyio

EDIT = {"note_id": "n1", "text": "via lambda"}


def _instances(env, count=2, base_path="/"):
    out = []
    for _ in range(count):
        runtime = instance_runtime(env)  # each instance: its own store client, keys, MCPServer
        out.append(
            LambdaInstance(lambda_handler(build_server(runtime.desk, runtime.state_keys), runtime.store, base_path))
        )
    return out


def _note(runtime, workspace):
    return runtime.store.docs.get_doc(workspace.id, "note", "n1").data["text"]


async def test_get_is_405_and_no_token_is_401(aws, stack_tenant):
    [instance] = _instances(aws, 1)
    got = instance.invoke(http_event("GET", "/mcp", headers={"accept": "text/event-stream"}))
    assert got["statusCode"] == 405 and got["headers"]["allow"] == "POST"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    denied = instance.invoke(http_event("POST", "/mcp", headers={"content-type": "application/json",
                                                                  "accept": "application/json, text/event-stream"},
                                        body=json.dumps(init)))
    assert denied["statusCode"] == 401 and denied["headers"]["www-authenticate"].startswith("Bearer")
    instance.close()


async def test_2026_round_trip_crosses_instances(aws, stack_tenant):
    runtime, workspace, person, token = stack_tenant
    instances = _instances(aws, 2)
    asked = []
    async with mcp_client("https://confirm.example.com/mcp", token, answer=accept(), record=asked,
                          transport=LambdaTransport(instances)) as client:
        result = await client.call_tool("edit_note", EDIT)
    assert result.structured_content["status"] == "completed"
    assert asked[0].message == "Change note ‘Note 1’?\ntext 1 → via lambda"
    assert _note(runtime, workspace) == "via lambda"
    assert all(i.invocations > 0 for i in instances)
    for i in instances:
        i.close()


async def test_replayed_answer_on_another_instance_is_refused(aws, stack_tenant):
    runtime, workspace, person, token = stack_tenant
    instances = _instances(aws, 2)
    async with mcp_client("https://confirm.example.com/mcp", token, answer=accept(),
                          transport=LambdaTransport(instances)) as client:
        first = await client.session.call_tool("edit_note", EDIT, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        kwargs = dict(
            input_responses={"confirm": accept()}, request_state=first.request_state, allow_input_required=True
        )
        once = await client.session.call_tool("edit_note", EDIT, **kwargs)
        twice = await client.session.call_tool("edit_note", EDIT, **kwargs)
        forged = first.request_state[:-3] + ("abc" if not first.request_state.endswith("abc") else "xyz")
        with pytest.raises(Exception) as info:
            await client.session.call_tool("edit_note", EDIT, input_responses={"confirm": accept()},
                                           request_state=forged, allow_input_required=True)
    assert once.structured_content["status"] == "completed"
    assert twice.is_error and "already used" in twice.content[0].text
    assert info.value.error.code == -32602
    cards, _ = runtime.store.cards.list_card_history(workspace.id, person.id, runtime.desk.now())
    assert [c.state.value for c in cards] == ["completed"]
    for i in instances:
        i.close()


async def test_legacy_client_on_lambda_gets_a_card_and_polls_it_to_completed(aws, stack_tenant):
    runtime, workspace, person, token = stack_tenant
    instances = _instances(aws, 2)
    async with mcp_client("https://confirm.example.com/mcp", token, mode="legacy", answer=accept(),
                          transport=LambdaTransport(instances)) as client:
        held = (await client.call_tool("edit_note", EDIT)).structured_content
        assert held["status"] == "pending"
        assert held["confirmationUrl"] == f"https://confirm.example.com/confirm?card={held['confirmationId']}"
        clicks.confirm_click(runtime.desk, workspace.id, person, held["confirmationId"])
        status = (
            await client.call_tool("get_confirmation_status", {"confirmation_id": held["confirmationId"]})
        ).structured_content
    assert status["status"] == "completed" and status["result"] == {"note": "n1", "text": "via lambda"}
    for i in instances:
        i.close()


async def test_named_stage_base_path(aws, stack_tenant):
    runtime, workspace, person, token = stack_tenant
    [instance] = _instances(aws, 1, base_path="/prod")
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "list_notes", "arguments": {},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientCapabilities": {}}}}
    result = instance.invoke(http_event("POST", "/prod/mcp", body=json.dumps(body), base64_body=True, headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {token}", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
        "mcp-name": "list_notes"}))
    assert result["statusCode"] == 200, response_body(result)
    payload = json.loads(response_body(result))
    assert [n["id"] for n in payload["result"]["structuredContent"]["notes"]] == ["n1", "n2"]
    instance.close()


async def test_a_warm_instance_reads_its_callers_afresh_every_time(aws, stack_tenant, monkeypatch):
    """An instance remembers only whose a token is (so that it reads the token and the member in
    one request): a connection revoked after its first calls is refused on the very next one."""
    runtime, workspace, person, token = stack_tenant
    [instance] = _instances(aws, 1)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "authorization": f"Bearer {token}", "mcp-protocol-version": "2025-11-25"}
    client_info = {"name": "t", "version": "1"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client_info}}

    def initialize() -> dict:
        return instance.invoke(http_event("POST", "/mcp", headers=headers, body=json.dumps(init)))

    assert initialize()["statusCode"] == 200
    calls = record_requests(monkeypatch)
    assert initialize()["statusCode"] == 200
    assert [operation for operation, _ in calls] == ["BatchGetItem"]  # the token, its workspace and its person
    connection = runtime.store.connections.get_connection_by_token_hash(secret_hash(token))
    runtime.store.connections.revoke_connection(workspace.id, connection.id, runtime.desk.now())
    refused = initialize()
    assert refused["statusCode"] == 401
    assert "This connection was revoked." in refused["headers"]["www-authenticate"]
    instance.close()
