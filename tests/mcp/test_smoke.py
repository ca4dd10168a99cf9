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


async def test_a_results_text_is_its_structured_content_as_compact_json(tenant):
    """What a host that reads only the text gets is the same content, without the SDK's
    two-space indentation (a third more bytes and tokens): a read, a held reply, an answer."""
    import json

    async with tenant.client() as client, tenant.client(answer=accept()) as asking:
        results = [await client.call_tool("list_notes", {}),
                   await client.call_tool("edit_note", {"note_id": "n1", "text": "held"}),
                   await asking.call_tool("edit_note", {"note_id": "n2", "text": "asked"})]
    for result in results:
        (text,) = [block.text for block in result.content]
        assert "\n" not in text
        assert text == json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)


async def test_a_tools_list_cursor_this_server_never_issued_is_an_invalid_params_error(tenant):
    """Every tool comes in one page (no nextCursor), so any cursor is made up: the spec's -32602,
    not the whole list again as if it were the next page."""
    from mcp.shared.exceptions import MCPError

    async with tenant.client() as client:
        whole = await client.list_tools()
        assert whole.next_cursor is None and whole.tools
        with pytest.raises(MCPError) as refused:
            await client.list_tools(cursor="page-2", cache_mode="bypass")
        assert refused.value.code == -32602 and "cursor" in refused.value.message
        assert [t.name for t in (await client.list_tools(cache_mode="bypass")).tools] == [t.name for t in whole.tools]
        for listing in (client.list_resources, client.list_resource_templates, client.list_prompts):
            assert (await listing()).next_cursor is None
            with pytest.raises(MCPError) as refused:
                await listing(cursor="page-2", cache_mode="bypass")
            assert refused.value.code == -32602, listing
