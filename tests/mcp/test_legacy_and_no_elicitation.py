"""2025-11-25 clients on the local stateful server and clients that cannot ask
(docs/how-a-held-write-travels.md, 5.2 and 5.3)."""

from __future__ import annotations

import pytest

from tests.support.harness import CANCEL, DECLINE, accept, assert_recorded

pytestmark = pytest.mark.anyio

EDIT = {"note_id": "n1", "text": "legacy text"}


async def test_legacy_client_is_asked_during_the_call_and_accept_applies(tenant):
    asked = []
    async with tenant.client(mode="legacy", answer=accept(), record=asked) as client:
        result = await client.call_tool("edit_note", EDIT)
    assert result.structured_content["status"] == "completed"
    assert [q.message for q in asked] == ["Change note ‘Note 1’?\ntext 1 → legacy text"]
    assert tenant.note("n1")["text"] == "legacy text"
    assert_recorded(tenant, result.structured_content["confirmationId"], "completed", "client",
                    ["filed", "completed"])


async def test_legacy_decline_and_untick_decline(tenant):
    for answer, reason in ((DECLINE, "Declined in the client."), (accept(False), "The box was not ticked.")):
        async with tenant.client(mode="legacy", answer=answer) as client:
            result = await client.call_tool("edit_note", {"note_id": "n2", "text": reason})
        assert result.structured_content["status"] == "declined"
        assert result.structured_content["reason"] == reason
    assert tenant.note("n2")["text"] == "text 2"


async def test_legacy_cancel_falls_back_to_a_card(tenant):
    async with tenant.client(mode="legacy", answer=CANCEL) as client:
        result = await client.call_tool("edit_note", EDIT)
    assert result.structured_content["status"] == "pending"
    assert tenant.note("n1")["text"] == "text 1"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_client_without_elicitation_gets_a_held_card(tenant, mode):
    async with tenant.client(mode=mode) as client:
        result = await client.call_tool("edit_note", EDIT)
        body = result.structured_content
        assert body["status"] == "pending"
        status = await client.call_tool("get_confirmation_status", {"confirmation_id": body["confirmationId"]})
    assert status.structured_content["status"] == "pending"
    assert tenant.note("n1")["text"] == "text 1"
    tenant.confirm_on_page(body["confirmationId"])
    assert tenant.note("n1")["text"] == "legacy text"


async def test_never_class_runs_at_once(tenant):
    async with tenant.client() as client:
        result = await client.call_tool("tidy_note", {"note_id": "n1", "text": "tidy"})
    assert result.structured_content["status"] == "completed"
    assert tenant.note("n1")["text"] == "tidy"


async def test_setting_class_follows_the_workspace_setting(tenant):
    async with tenant.client() as client:
        held = await client.call_tool("draft_note", {"note_id": "n1", "text": "draft"})
        assert held.structured_content["status"] == "pending"
        tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"ask_before_drafting": False})
        ran = await client.call_tool("draft_note", {"note_id": "n2", "text": "draft"})
    assert ran.structured_content["status"] == "completed"
    assert tenant.note("n1")["text"] == "text 1" and tenant.note("n2")["text"] == "draft"


async def test_when_class_follows_the_state(tenant):
    async with tenant.client() as client:
        ran = await client.call_tool("retitle_locked", {"note_id": "n2", "text": "free"})
        assert ran.structured_content["status"] == "completed"
        doc = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
        from countersign.store.docs import DocWrite

        tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", "n1", dict(doc.data, locked=True),
                                                                    doc.version)])
        held = await client.call_tool("retitle_locked", {"note_id": "n2", "text": "held"})
    assert held.structured_content["status"] == "pending"
    assert tenant.note("n2")["text"] == "free"


async def test_tools_carry_truthful_annotations(tenant):
    async with tenant.client() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["list_notes"].annotations.read_only_hint is True
    assert tools["list_notes"].annotations.destructive_hint is False
    assert tools["publish_note"].annotations.read_only_hint is False
    assert tools["publish_note"].annotations.destructive_hint is True
    assert tools["tidy_note"].annotations.destructive_hint is False
    assert tools["get_confirmation_status"].annotations.read_only_hint is True
    assert tools["list_confirmations"].annotations.read_only_hint is True
    assert "confirmation" in tools["edit_note"].input_schema["properties"]
    assert tools["edit_note"].input_schema["required"] == ["note_id", "text"]


async def test_legacy_client_with_url_elicitation_is_offered_the_card(tenant):
    import mcp_types as types

    asked = []
    async with tenant.client(mode="legacy", answer=types.ElicitResult(action="accept"), record=asked) as client:
        result = await client.call_tool("publish_note", EDIT)
    body = result.structured_content
    assert body["status"] == "pending"
    assert [q.mode for q in asked] == ["url"]
    assert asked[0].url == body["confirmationUrl"]
    assert asked[0].message == "Confirm on the confirm page: Change note ‘Note 1’?"
    assert tenant.note("n1")["text"] == "text 1"


async def test_legacy_answer_after_the_state_moved_is_drift(tenant):
    """The person may take minutes to answer during the call: the gate re-plans after the answer."""
    from countersign.store.docs import DocWrite

    def answer_after_a_change(params):
        doc = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
        tenant.store.docs.write_docs(
            tenant.workspace_id, [DocWrite("note", "n1", dict(doc.data, text="moved meanwhile"), doc.version)]
        )
        return accept()

    async with tenant.client(mode="legacy", answer=answer_after_a_change) as client:
        result = await client.call_tool("edit_note", EDIT)
    assert result.is_error
    assert "The notes changed between the preview and the answer" in result.content[0].text
    assert tenant.note("n1")["text"] == "moved meanwhile"
