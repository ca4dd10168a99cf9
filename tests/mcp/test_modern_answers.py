"""The 2026-07-28 input-required round trip (docs/how-a-held-write-travels.md, 5.1) with the real Python client."""

from __future__ import annotations

import mcp_types as types
import pytest

from countersign.core.card_states import CardState
from countersign.store.docs import DocWrite
from tests.support.harness import CANCEL, DECLINE, accept, assert_recorded

pytestmark = pytest.mark.anyio

EDIT = {"note_id": "n1", "text": "new text"}


def _card(tenant, card_id):
    return tenant.store.cards.get_card(tenant.workspace_id, card_id, tenant.runtime.desk.now())


async def test_accept_ticked_applies_and_records_the_card(tenant):
    asked = []
    async with tenant.client(answer=accept(), record=asked) as client:
        result = await client.call_tool("edit_note", EDIT)
    body = result.structured_content
    assert body["status"] == "completed"
    assert body["result"] == {"note": "n1", "text": "new text"}
    assert body["next"] == [
        {"tool": "list_notes", "description": "Read the notes back to check the change.", "personMustAct": False}
    ]
    assert tenant.note("n1")["text"] == "new text"
    assert [q.message for q in asked] == ["Change note ‘Note 1’?\ntext 1 → new text"]
    card = _card(tenant, body["confirmationId"])
    assert card.state is CardState.COMPLETED and card.channel == "client"
    trail = tenant.store.cards.audit_trail(tenant.workspace_id, card.id)
    assert [(e.event, e.channel) for e in trail] == [("filed", "client"), ("completed", "client")]
    assert tenant.runtime.keyring.verify(card.ticket).card_id == card.id


async def test_accept_unticked_declines_and_writes_nothing(tenant):
    async with tenant.client(answer=accept(ticked=False)) as client:
        result = await client.call_tool("edit_note", EDIT)
    assert result.structured_content["status"] == "declined"
    assert result.structured_content["reason"] == "The box was not ticked."
    assert tenant.note("n1")["text"] == "text 1"
    assert_recorded(tenant, result.structured_content["confirmationId"], "declined", "client", ["filed", "declined"])


async def test_decline_declines_and_writes_nothing(tenant):
    async with tenant.client(answer=DECLINE) as client:
        result = await client.call_tool("edit_note", EDIT)
    body = result.structured_content
    assert body["status"] == "declined" and body["reason"] == "Declined in the client."
    assert tenant.note("n1")["text"] == "text 1"
    assert_recorded(tenant, body["confirmationId"], "declined", "client", ["filed", "declined"])


async def test_cancel_falls_back_to_a_hosted_card(tenant):
    async with tenant.client(answer=CANCEL) as client:
        result = await client.call_tool("edit_note", EDIT)
    body = result.structured_content
    assert body["status"] == "pending"
    assert body["confirmationUrl"] == f"{tenant.origin}/confirm?card={body['confirmationId']}"
    assert body["pendingUrl"] == f"{tenant.origin}/confirm"
    assert body["title"] == "Change note ‘Note 1’?" and body["lines"] == ["text 1 → new text"]
    assert "Calling the held tool again with the same arguments returns this same request" in body["instructions"]
    assert tenant.note("n1")["text"] == "text 1"
    assert _card(tenant, body["confirmationId"]).state is CardState.PENDING


async def test_question_shows_twenty_lines_then_the_rest_counted(tenant):
    asked = []
    text = "\n".join(f"line {i}" for i in range(1, 46))
    async with tenant.client(answer=DECLINE, record=asked) as client:
        await client.call_tool("edit_note", {"note_id": "n1", "text": text})
    expected = ["Change note ‘Note 1’?"] + [f"+ line {i}" for i in range(1, 21)] + ["… and 25 more"]
    assert asked[0].message == "\n".join(expected)


async def _first_round(client, args):
    """Drive round one by hand: returns the InputRequiredResult."""
    first = await client.session.call_tool("edit_note", args, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    assert set(first.input_requests) == {"confirm"}
    return first


async def test_replayed_answer_is_refused_and_writes_nothing(tenant):
    async with tenant.client(answer=accept()) as client:
        first = await _first_round(client, EDIT)
        answers = {"confirm": accept()}
        once = await client.session.call_tool("edit_note", EDIT, input_responses=answers,
                                              request_state=first.request_state, allow_input_required=True)
        assert once.structured_content["status"] == "completed"
        tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", "n1", dict(tenant.note("n1"),
                                                                                       text="reset"), 2)])
        again = await client.session.call_tool("edit_note", EDIT, input_responses=answers,
                                               request_state=first.request_state, allow_input_required=True)
    assert again.is_error
    assert "This answer was already used; nothing more was written." in again.content[0].text
    assert tenant.note("n1")["text"] == "reset"


async def test_drift_between_question_and_answer_fails_and_writes_nothing(tenant):
    async with tenant.client(answer=accept()) as client:
        first = await _first_round(client, EDIT)
        doc = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
        tenant.store.docs.write_docs(
            tenant.workspace_id, [DocWrite("note", "n1", dict(doc.data, text="moved"), doc.version)]
        )
        retry = await client.session.call_tool("edit_note", EDIT, input_responses={"confirm": accept()},
                                               request_state=first.request_state, allow_input_required=True)
    assert retry.is_error
    assert "The notes changed between the preview and the answer; nothing was written." in retry.content[0].text
    assert tenant.note("n1")["text"] == "moved"


async def test_tampered_request_state_is_invalid_params_and_writes_nothing(tenant):
    async with tenant.client(answer=accept()) as client:
        first = await _first_round(client, EDIT)
        state = first.request_state
        forged = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
        with pytest.raises(Exception) as info:
            await client.session.call_tool("edit_note", EDIT, input_responses={"confirm": accept()},
                                           request_state=forged, allow_input_required=True)
    error = getattr(info.value, "error", None)
    assert error is not None and error.code == -32602, info.value
    assert tenant.note("n1")["text"] == "text 1"


async def test_state_for_other_arguments_is_refused(tenant):
    async with tenant.client(answer=accept()) as client:
        first = await _first_round(client, EDIT)
        with pytest.raises(Exception) as info:
            await client.session.call_tool("edit_note", {"note_id": "n1", "text": "other"},
                                           input_responses={"confirm": accept()},
                                           request_state=first.request_state, allow_input_required=True)
    assert getattr(info.value, "error", None) is not None and info.value.error.code == -32602
    assert tenant.note("n1")["text"] == "text 1"


async def test_classes_other_than_client_never_ask_in_the_client(tenant):
    """Assurance: always, setting:* and when:* are confirmed on the page, never in the client."""
    lock = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n2")
    tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", "n2", dict(lock.data, locked=True),
                                                                lock.version)])
    asked = []
    async with tenant.client(answer=accept(), record=asked) as client:
        for tool in ("publish_note", "draft_note", "retitle_locked"):
            result = await client.call_tool(tool, EDIT)
            assert result.structured_content["status"] == "pending", tool
    assert asked == []  # the held reply, never a question (see the URL test below)
    assert tenant.note("n1")["text"] == "text 1"


async def test_workspace_can_raise_client_class_to_page_only(tenant):
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"confirm_in_client": False})
    asked = []
    async with tenant.client(answer=accept(), record=asked) as client:
        result = await client.call_tool("edit_note", EDIT)
    assert result.structured_content["status"] == "pending"
    assert asked == []
    assert tenant.note("n1")["text"] == "text 1"


async def test_a_client_with_url_elicitation_gets_the_held_reply_not_a_url_question(tenant):
    """A 2026-07-28 client is never sent the card as a URL question: one that cannot show it (a
    proxy in front of a 2025-era host) would fail the call, and the agent would not learn the card's
    id. The held reply carries the links."""
    asked = []
    async with tenant.client(answer=types.ElicitResult(action="accept"), record=asked) as client:
        result = await client.call_tool("publish_note", EDIT)
    body = result.structured_content
    assert asked == []
    assert body["status"] == "pending" and body["confirmationUrl"].endswith(body["confirmationId"])
    assert "poll get_confirmation_status" in body["instructions"]
