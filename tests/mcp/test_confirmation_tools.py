"""request_confirmation, list_confirmations, cancel_confirmation, get_confirmation_status.

See docs/how-a-held-write-travels.md, "Polling and the confirmation tools".
"""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.store.cards import AuditEntry, CardCommit

pytestmark = pytest.mark.anyio

EDIT = {"note_id": "n1", "text": "held"}


async def _status(client, card_id):
    return (await client.call_tool("get_confirmation_status", {"confirmation_id": card_id})).structured_content


async def test_request_confirmation_holds_even_an_action_that_runs_at_once(tenant):
    async with tenant.client() as client:
        result = await client.call_tool("request_confirmation", {"tool": "tidy_note", "arguments": EDIT})
        body = result.structured_content
        assert body["status"] == "pending" and body["tool"] == "tidy_note"
        assert tenant.note("n1")["text"] == "text 1"
        tenant.confirm_on_page(body["confirmationId"])
        status = await _status(client, body["confirmationId"])
    assert status["status"] == "completed"
    assert status["result"] == {"note": "n1", "text": "held"}
    assert status["next"] == [
        {"tool": "list_notes", "description": "Read the notes back to check the change.", "personMustAct": False}
    ]
    assert tenant.note("n1")["text"] == "held"


async def test_request_confirmation_refuses_reads_and_unknown_tools_by_name(tenant):
    async with tenant.client() as client:
        read = await client.call_tool("request_confirmation", {"tool": "list_notes", "arguments": {}})
        unknown = await client.call_tool("request_confirmation", {"tool": "drop_tables", "arguments": {}})
        bad = await client.call_tool("request_confirmation", {"tool": "edit_note", "arguments": {"note_id": "n1"}})
    assert read.is_error and "list_notes is a read" in read.content[0].text
    assert unknown.is_error and "Unknown tool 'drop_tables'" in unknown.content[0].text
    assert bad.is_error and "text" in bad.content[0].text


async def test_request_confirmation_says_a_confirmation_tool_cannot_be_held(tenant):
    """The four confirmation tools exist (no "Unknown tool"): they work on what waits for a person
    and are never themselves held, and the refusal says so by name. Nothing is filed."""
    names = ("list_confirmations", "get_confirmation_status", "cancel_confirmation", "request_confirmation")
    async with tenant.client() as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        refusals = {name: await client.call_tool("request_confirmation", {"tool": name, "arguments": {}})
                    for name in names}
        waiting = (await client.call_tool("list_confirmations", {})).structured_content
    assert set(names) <= listed
    for name, refused in refusals.items():
        text = refused.content[0].text
        assert refused.is_error and f"{name} cannot be held for a person" in text, text
        assert "confirmation tools" in text and "Unknown tool" not in text, text
    assert waiting["total"] == 0


async def test_a_held_reply_names_the_argument_get_confirmation_status_takes(tenant):
    async with tenant.client() as client:
        held = (await client.call_tool("publish_note", EDIT)).structured_content
        instructions = held["instructions"]
        schema = next(t for t in (await client.list_tools()).tools if t.name == "get_confirmation_status").input_schema
        status = await _status(client, held["confirmationId"])
    assert held["status"] == "pending"
    assert "poll get_confirmation_status with confirmation_id set to this reply's confirmationId" in instructions
    assert list(schema["properties"]) == ["confirmation_id"]  # the name the reply tells the agent to use
    assert status["status"] == "pending" and status["confirmationId"] == held["confirmationId"]


async def test_identical_retry_returns_the_same_card(tenant):
    desk = tenant.runtime.desk
    notified, real_notifier = [], desk.on_filed
    desk.on_filed = lambda card: (notified.append(card.id), real_notifier(card))
    try:
        async with tenant.client() as client:
            first = (await client.call_tool("publish_note", EDIT)).structured_content
            second = (await client.call_tool("publish_note", EDIT)).structured_content
            third = (
                await client.call_tool("request_confirmation", {"tool": "publish_note", "arguments": EDIT})
            ).structured_content
            listed = (await client.call_tool("list_confirmations", {})).structured_content
    finally:
        desk.on_filed = real_notifier
    assert first["confirmationId"] == second["confirmationId"] == third["confirmationId"]
    assert [c["confirmationId"] for c in listed["confirmations"]] == [first["confirmationId"]]
    assert notified == [first["confirmationId"]]  # one card, so one notification: a retry emails nobody


async def test_identical_request_after_a_decline_returns_the_decline(tenant):
    async with tenant.client() as client:
        first = (await client.call_tool("publish_note", EDIT)).structured_content
        tenant.decline_on_page(first["confirmationId"], "Not this week")
        again = (await client.call_tool("publish_note", EDIT)).structured_content
        status = await _status(client, first["confirmationId"])
        different = (await client.call_tool("publish_note", {"note_id": "n1", "text": "other"})).structured_content
    assert again == {
        **again,
        "status": "declined",
        "confirmationId": first["confirmationId"],
        "reason": "Not this week",
    }
    assert status["status"] == "declined" and status["reason"] == "Not this week"
    assert different["status"] == "pending" and different["confirmationId"] != first["confirmationId"]


async def test_list_confirmations_oldest_first_with_expiry(tenant):
    async with tenant.client() as client:
        ids = []
        for note, text in (("n1", "a"), ("n2", "b"), ("n1", "c")):
            ids.append(
                (await client.call_tool("publish_note", {"note_id": note, "text": text})).structured_content[
                    "confirmationId"
                ]
            )
        listed = (await client.call_tool("list_confirmations", {})).structured_content
    assert [c["confirmationId"] for c in listed["confirmations"]] == ids
    assert listed["pendingUrl"] == f"{tenant.origin}/confirm"
    assert all(c["expiresAt"].endswith("Z") and c["title"] for c in listed["confirmations"])


async def test_cancel_withdraws_and_reads_as_declined(tenant):
    async with tenant.client() as client:
        card = (await client.call_tool("publish_note", EDIT)).structured_content
        cancelled = (
            await client.call_tool("cancel_confirmation", {"confirmation_id": card["confirmationId"]})
        ).structured_content
        status = await _status(client, card["confirmationId"])
        listed = (await client.call_tool("list_confirmations", {})).structured_content
    assert cancelled["status"] == "withdrawn"
    assert status["status"] == "declined" and "Withdrawn" in status["reason"]
    assert listed["confirmations"] == []
    from countersign.core.card_states import Refusal

    with pytest.raises(Refusal) as refused:
        tenant.confirm_on_page(card["confirmationId"])
    assert refused.value.reason.value == "withdrawn"
    assert tenant.note("n1")["text"] == "text 1"


async def test_cancel_is_refused_while_confirming_or_after_running(tenant):
    store, desk = tenant.store, tenant.runtime.desk
    async with tenant.client() as client:
        running = (await client.call_tool("publish_note", EDIT)).structured_content["confirmationId"]
        card = store.cards.get_card(tenant.workspace_id, running, desk.now())
        store.cards.commit_card(CardCommit(card, CardState.RUNNING, desk.now(), (
            AuditEntry(running, tenant.workspace_id, desk.now(), "running", "system", "page"),),
            run={"steps": ["publish", "launch"], "done": 1}, lease_until=desk.now() + 120))
        refused = await client.call_tool("cancel_confirmation", {"confirmation_id": running})
        ran = (await client.call_tool("publish_note", {"note_id": "n2", "text": "x"})).structured_content[
            "confirmationId"
        ]
        tenant.confirm_on_page(ran)
        refused_after = await client.call_tool("cancel_confirmation", {"confirmation_id": ran})
    assert card.state is CardState.PENDING
    assert refused.is_error and "being confirmed right now" in refused.content[0].text
    assert refused_after.is_error and "already confirmed and its action ran" in refused_after.content[0].text


async def test_expired_card_reports_expired(tenant, live):
    runtime, _ = live
    async with tenant.client() as client:
        card = (await client.call_tool("publish_note", EDIT)).structured_content["confirmationId"]
        real = runtime.desk.clock
        runtime.desk.clock = lambda: real() + 24 * 3600 + 1
        try:
            status = await _status(client, card)
            listed = (await client.call_tool("list_confirmations", {})).structured_content
            fresh = (await client.call_tool("publish_note", EDIT)).structured_content
        finally:
            runtime.desk.clock = real
    assert status["status"] == "expired"
    assert listed["confirmations"] == []
    assert fresh["status"] == "pending" and fresh["confirmationId"] != card


async def test_drift_at_the_click_is_refused_and_the_agent_sees_why(tenant):
    from countersign.core.card_states import Refusal
    from countersign.store.docs import DocWrite

    async with tenant.client() as client:
        card = (await client.call_tool("publish_note", EDIT)).structured_content["confirmationId"]
        doc = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
        tenant.store.docs.write_docs(
            tenant.workspace_id, [DocWrite("note", "n1", dict(doc.data, text="moved"), doc.version)]
        )
        with pytest.raises(Refusal) as refused:
            tenant.confirm_on_page(card)
        status = await _status(client, card)
    assert refused.value.reason.value == "changed"
    assert status["status"] == "declined" and "changed since this card was drawn" in status["reason"]
    assert "The notes changed between the preview and the answer" in status["reason"]
    assert tenant.note("n1")["text"] == "moved"
    trail = tenant.store.cards.audit_trail(tenant.workspace_id, card)
    assert [e.event for e in trail] == ["filed", "refused"]


async def test_a_card_of_a_revoked_connection_cannot_be_confirmed(tenant):
    from countersign.core.card_states import Refusal

    async with tenant.client() as client:
        card = (await client.call_tool("publish_note", EDIT)).structured_content["confirmationId"]
    # revoked without the page's sweep (as if the card was filed while the revoke ran)
    tenant.store.connections.revoke_connection(tenant.workspace_id, tenant.connection_id, tenant.runtime.desk.now())
    with pytest.raises(Refusal) as refused:
        tenant.confirm_on_page(card)
    assert refused.value.reason.value == "withdrawn"
    stored = tenant.store.cards.get_card(tenant.workspace_id, card, tenant.runtime.desk.now())
    assert stored.state is CardState.WITHDRAWN
    assert stored.decline_reason == "Withdrawn: the connection ‘Test agent’ that asked was revoked."
    assert tenant.note("n1")["text"] == "text 1"
