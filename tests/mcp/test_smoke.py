import pytest

from tests.support.harness import accept

pytestmark = pytest.mark.anyio


async def test_read_and_held_card(tenant):
    async with tenant.client() as client:
        tools = await client.list_tools()
        names = {t.name for t in tools.tools}
        assert {"edit_note", "list_notes", "request_confirmation"} <= names
        result = await client.call_tool("list_notes", {})
        assert result.structured_content["notes"][0]["id"] == "n1"
        held = await client.call_tool("edit_note", {"note_id": "n1", "text": "new"})
        assert held.structured_content["status"] == "pending", held


async def test_modern_accept(tenant):
    async with tenant.client(answer=accept()) as client:
        result = await client.call_tool("edit_note", {"note_id": "n1", "text": "new"})
        assert result.structured_content["status"] == "completed", result
    assert tenant.note("n1")["text"] == "new"
