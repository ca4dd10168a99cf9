"""Confirmation codes and COUNTERSIGN_REQUIRE_ELICITATION (docs/how-a-held-write-travels.md,
5.4 and "The answer table")."""

from __future__ import annotations

import pytest

from countersign.core.codes import CODE_REFUSAL
from countersign.store.docs import DocWrite
from tests.support.harness import CANCEL, accept, assert_recorded

pytestmark = pytest.mark.anyio

EDIT = {"note_id": "n1", "text": "coded"}
QUESTION = "Change note ‘Note 1’?\ntext 1 → coded"  # what the client is asked about EDIT


def _cards(tenant) -> list[tuple[str, str, str]]:
    """Every card of the tenant's person, in any state, as (id, state, channel), read from the store."""
    store, now = tenant.store, tenant.runtime.desk.now()
    pending, _ = store.cards.list_pending_cards(tenant.workspace_id, tenant.person.id, now)
    done, _ = store.cards.list_card_history(tenant.workspace_id, tenant.person.id, now)
    return [(card.id, card.state.value, card.channel) for card in pending + done]


@pytest.fixture
def code_mode(configure):
    configure(fallback="code")


async def _code(client, args=EDIT):
    first = await client.call_tool("edit_note", args)
    body = first.structured_content
    assert body["status"] == "confirmation_required", body
    return body


async def test_code_round_trip_applies_once(tenant, code_mode):
    before = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1").version
    async with tenant.client() as client:
        body = await _code(client)
        assert len(body["confirmation"]) == 11
        assert body["preview"] == "Change note ‘Note 1’?\ntext 1 → coded"
        assert tenant.note("n1")["text"] == "text 1"
        done = await client.call_tool("edit_note", dict(EDIT, confirmation=body["confirmation"]))
        assert done.structured_content["status"] == "completed"
        assert tenant.note("n1")["text"] == "coded"
        assert_recorded(tenant, done.structured_content["confirmationId"], "completed", "code",
                        ["filed", "completed"])
        again = await client.call_tool("edit_note", dict(EDIT, confirmation=body["confirmation"]))
    assert again.is_error and CODE_REFUSAL in again.content[0].text
    after = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
    assert after.data["text"] == "coded" and after.version == before + 1  # written exactly once


async def test_unknown_and_foreign_codes_are_refused_and_spent(tenant, code_mode):
    async with tenant.client() as client:
        unknown = await client.call_tool("edit_note", dict(EDIT, confirmation="AAAAAAAAAAA"))
        assert unknown.is_error and CODE_REFUSAL in unknown.content[0].text
        other = await _code(client, {"note_id": "n2", "text": "other"})
        wrong = await client.call_tool("edit_note", dict(EDIT, confirmation=other["confirmation"]))
        assert wrong.is_error and CODE_REFUSAL in wrong.content[0].text
        # spent on first use even though it did not match
        right = await client.call_tool(
            "edit_note", {"note_id": "n2", "text": "other", "confirmation": other["confirmation"]}
        )
    assert right.is_error and CODE_REFUSAL in right.content[0].text
    assert tenant.note("n1")["text"] == "text 1" and tenant.note("n2")["text"] == "text 2"


async def test_code_after_the_state_moved_gets_the_code_sentence(tenant, code_mode):
    async with tenant.client() as client:
        body = await _code(client)
        doc = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
        tenant.store.docs.write_docs(
            tenant.workspace_id, [DocWrite("note", "n1", dict(doc.data, text="moved"), doc.version)]
        )
        result = await client.call_tool("edit_note", dict(EDIT, confirmation=body["confirmation"]))
    assert result.is_error and CODE_REFUSAL in result.content[0].text
    assert tenant.note("n1")["text"] == "moved"


async def test_expired_code_is_refused(tenant, code_mode, live):
    runtime, _ = live
    async with tenant.client() as client:
        body = await _code(client)
        real = runtime.desk.clock
        runtime.desk.clock = lambda: real() + 601
        try:
            result = await client.call_tool("edit_note", dict(EDIT, confirmation=body["confirmation"]))
        finally:
            runtime.desk.clock = real
    assert result.is_error and CODE_REFUSAL in result.content[0].text
    assert tenant.note("n1")["text"] == "text 1"


@pytest.mark.parametrize("tool", ["publish_note", "draft_note", "retitle_locked"])
async def test_code_mode_refuses_classes_that_need_the_page(tenant, code_mode, tool):
    lock = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n2")
    tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", "n2", dict(lock.data, locked=True),
                                                                lock.version)])
    async with tenant.client() as client:
        result = await client.call_tool(tool, EDIT)
        forged = await client.call_tool(tool, dict(EDIT, confirmation="AAAAAAAAAAA"))
    assert result.is_error and forged.is_error
    assert f"{tool} must be confirmed by a signed-in person on the confirm page" in result.content[0].text
    assert f"{tool} must be confirmed by a signed-in person on the confirm page" in forged.content[0].text
    assert tenant.note("n1")["text"] == "text 1"


async def test_code_mode_still_prefers_asking_in_the_client(tenant, code_mode):
    asked = []
    async with tenant.client(answer=accept(), record=asked) as client:
        result = await client.call_tool("edit_note", EDIT)
    body = result.structured_content
    assert body["status"] == "completed" and "confirmation" not in body  # asked, so no code minted
    assert [q.message for q in asked] == [QUESTION]
    assert tenant.note("n1")["text"] == "coded"
    assert _cards(tenant) == [(body["confirmationId"], "completed", "client")]
    assert_recorded(tenant, body["confirmationId"], "completed", "client", ["filed", "completed"])


async def test_code_mode_dismissal_falls_back_to_a_code(tenant, code_mode):
    asked = []
    async with tenant.client(answer=CANCEL, record=asked) as client:
        result = await client.call_tool("edit_note", EDIT)
        body = result.structured_content
        assert body["status"] == "confirmation_required" and len(body["confirmation"]) == 11
        assert [q.message for q in asked] == [QUESTION]  # asked first, once
        assert tenant.note("n1")["text"] == "text 1" and _cards(tenant) == []  # nothing written, nothing filed
        done = await client.call_tool("edit_note", dict(EDIT, confirmation=body["confirmation"]))
    assert done.structured_content["status"] == "completed"
    assert [q.message for q in asked] == [QUESTION]  # the code applies without asking again
    assert tenant.note("n1")["text"] == "coded"
    assert _cards(tenant) == [(done.structured_content["confirmationId"], "completed", "code")]


# -- COUNTERSIGN_REQUIRE_ELICITATION=1 -------------------------------------------------------------


async def test_required_dismissal_is_a_decline(tenant, configure):
    configure(require_elicitation=True)
    async with tenant.client(answer=CANCEL) as client:
        result = await client.call_tool("edit_note", EDIT)
    assert result.structured_content["status"] == "declined"
    assert tenant.note("n1")["text"] == "text 1"


async def test_required_client_that_cannot_ask_is_an_error_with_codes(tenant, configure):
    configure(require_elicitation=True, fallback="code")
    async with tenant.client() as client:
        result = await client.call_tool("edit_note", EDIT)
    assert result.is_error
    assert "cannot ask the person, and confirmation codes are disabled" in result.content[0].text


async def test_required_code_passed_is_an_error(tenant, configure):
    configure(require_elicitation=True, fallback="code")
    async with tenant.client() as client:
        result = await client.call_tool("edit_note", dict(EDIT, confirmation="AAAAAAAAAAA"))
    assert result.is_error and "Confirmation codes are disabled" in result.content[0].text
    assert tenant.note("n1")["text"] == "text 1"


async def test_required_keeps_hosted_cards_available(tenant, configure):
    configure(require_elicitation=True)
    async with tenant.client() as client:  # a client that declares no elicitation: it cannot be asked
        result = await client.call_tool("edit_note", EDIT)
    body = result.structured_content
    assert body["status"] == "pending" and "confirmation" not in body
    assert body["confirmationUrl"] == f"{tenant.origin}/confirm?card={body['confirmationId']}"
    assert tenant.note("n1")["text"] == "text 1"  # held, not applied
    assert _cards(tenant) == [(body["confirmationId"], "pending", "page")]
    assert tenant.confirm_on_page(body["confirmationId"]).state.value == "completed"  # the hosted card works
    assert tenant.note("n1")["text"] == "coded"


async def test_required_yes_in_the_client_applies(tenant, configure):
    configure(require_elicitation=True)
    asked = []
    async with tenant.client(answer=accept(), record=asked) as client:
        result = await client.call_tool("edit_note", EDIT)
    body = result.structured_content
    assert body["status"] == "completed" and body["result"] == {"note": "n1", "text": "coded"}
    assert [q.message for q in asked] == [QUESTION]
    assert tenant.note("n1")["text"] == "coded"
    assert _cards(tenant) == [(body["confirmationId"], "completed", "client")]
    assert_recorded(tenant, body["confirmationId"], "completed", "client", ["filed", "completed"])


async def test_codes_honour_a_workspace_that_confirms_on_the_page_only(tenant, code_mode):
    async with tenant.client() as client:
        minted = await _code(client)
        tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"confirm_in_client": False})
        spent = await client.call_tool("edit_note", dict(EDIT, confirmation=minted["confirmation"]))
        fresh = await client.call_tool("edit_note", EDIT)
    for result in (spent, fresh):
        assert result.is_error
        assert "confirm page only (confirm_in_client is off)" in result.content[0].text
    assert tenant.note("n1")["text"] == "text 1"


async def test_a_code_is_bound_to_the_connection_that_asked(tenant, code_mode):
    from tests.support.harness import mcp_client

    other = tenant.connect(name="Another agent")
    async with tenant.client() as client:
        minted = await _code(client)
    async with mcp_client(tenant.url, other) as client:
        stolen = await client.call_tool("edit_note", dict(EDIT, confirmation=minted["confirmation"]))
    assert stolen.is_error and CODE_REFUSAL in stolen.content[0].text
    assert tenant.note("n1")["text"] == "text 1"
