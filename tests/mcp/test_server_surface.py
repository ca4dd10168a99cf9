"""What every client sees of the server itself: its version, the guide, paged listings, and the
question a 2025-era client is asked."""

from __future__ import annotations

import secrets

import pytest
from mcp import Client

from countersign import __version__, settings as settings_mod
from countersign.runtime import build
from countersign.surfaces.mcp.guide import GUIDE_URI
from countersign.surfaces.mcp.server import build_server
from tests.support.harness import DECLINE, accept

pytestmark = pytest.mark.anyio


def test_the_package_version_is_the_one_pyproject_declares():
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert __version__ == pyproject["project"]["version"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_server_info_reports_the_package_version(tenant, mode):
    async with tenant.client(mode=mode) as client:
        await client.list_tools()
        assert client.server_info.name == "countersign" and client.server_info.version == __version__


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_guide_is_a_resource_the_instructions_and_tools_point_to(tenant, mode):
    async with tenant.client(mode=mode) as client:
        resources = (await client.list_resources()).resources
        guide = next(r for r in resources if str(r.uri) == GUIDE_URI)
        assert guide.mime_type == "text/markdown" and guide.title == "How confirmation works"
        text = (await client.read_resource(GUIDE_URI)).contents[0].text
        tools = {t.name: t.description for t in (await client.list_tools()).tools}
        instructions = client.instructions
    for promise in ("Only if they agree", "request_confirmation", "`pending`", "`completed`", "`declined`",
                    "`expired`", "`failed`", "`confirmation_required`", "reopen the request from History",
                    "100 at a time"):
        assert promise in text, promise
    assert GUIDE_URI in instructions
    for name in ("publish_note", "edit_note", "request_confirmation", "get_confirmation_status"):
        assert GUIDE_URI in tools[name], name
    assert GUIDE_URI not in tools["tidy_note"]  # runs at once: nothing to confirm


async def test_list_confirmations_pages_with_a_cursor_and_says_how_many(tenant):
    async with tenant.client() as client:
        for i in range(103):
            held = await client.call_tool("request_confirmation",
                                          {"tool": "tidy_note", "arguments": {"note_id": "n1", "text": f"v{i}"}})
            assert held.structured_content["status"] == "pending"
        first = (await client.call_tool("list_confirmations", {})).structured_content
        second = (await client.call_tool("list_confirmations", {"cursor": first["nextCursor"]})).structured_content
        bad = await client.call_tool("list_confirmations", {"cursor": "not-a-cursor"})
    assert first["total"] == second["total"] == 103
    assert len(first["confirmations"]) == 100 and len(second["confirmations"]) == 3
    assert second["nextCursor"] is None
    ids = [c["confirmationId"] for c in first["confirmations"] + second["confirmations"]]
    assert len(set(ids)) == 103
    assert bad.is_error and "cursor: is not a cursor this listing returned." in bad.content[0].text


async def test_a_2025_client_is_asked_the_same_titled_required_question(tenant):
    asked = []
    async with tenant.client(mode="legacy", answer=DECLINE, record=asked) as client:
        await client.call_tool("edit_note", {"note_id": "n1", "text": "legacy"})
    schema = asked[0].requested_schema
    assert schema["title"] == "Confirm these changes" and schema["required"] == ["confirm"]
    assert schema["properties"] == {"confirm": {"type": "boolean", "title": "Apply these changes", "default": False}}
    modern = []
    async with tenant.client(answer=DECLINE, record=modern) as client:
        await client.call_tool("edit_note", {"note_id": "n1", "text": "modern"})
    # The 2026-07-28 form carries the same field, required, with the same default.
    assert {k: v for k, v in schema.items() if k != "title"} == modern[0].requested_schema


async def test_a_2025_answer_without_content_is_an_untick(tenant):
    import mcp_types as types

    async with tenant.client(mode="legacy", answer=types.ElicitResult(action="accept")) as client:
        result = await client.call_tool("edit_note", {"note_id": "n1", "text": "legacy"})
    assert result.structured_content["status"] == "declined"
    assert result.structured_content["reason"] == "The box was not ticked."
    async with tenant.client(mode="legacy", answer=accept()) as client:
        ran = await client.call_tool("edit_note", {"note_id": "n1", "text": "ticked"})
    assert ran.structured_content["status"] == "completed" and tenant.note("n1")["text"] == "ticked"


async def test_agents_holding_an_approval_are_told_to_prefer_request_confirmation(tmp_path):
    """An owner or admin may let agents approve at once (Ask before approvals off); an agent holding
    approve_design, review_message or bulk_approve_messages is still told to prefer
    request_confirmation, so the person approves: in each tool's description, in the instructions
    and in the guide."""
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path),
                                  "COUNTERSIGN_STATE_KEYS": secrets.token_urlsafe(48)})
    runtime = build(settings, deliver_inline=False)
    async with Client(build_server(runtime.desk, runtime.state_keys)) as client:
        tools = {t.name: t.description for t in (await client.list_tools()).tools}
        instructions = client.instructions
        guide = (await client.read_resource(GUIDE_URI)).contents[0].text
    for name in ("approve_design", "review_message", "bulk_approve_messages"):
        described = tools[name]
        assert "When the workspace lets agents approve at once" in described, described
        assert "prefer request_confirmation for an approval" in described, described
        assert "poll get_confirmation_status" in described, described
    assert "Prefer it for an approval even when the workspace lets agents approve at once" in guide
    assert "call request_confirmation, even when a setting would let the tool run at once" in instructions
