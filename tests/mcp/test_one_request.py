"""One request, one card, one effect, through real MCP clients on the live server: the same edit
asked in a 2026 client while another agent's card for it waits, answered in both places."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from tests.support.harness import accept, mcp_client

pytestmark = pytest.mark.anyio

EDIT = {"note_id": "n1", "text": "edited once"}


def version(tenant) -> int:
    return tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1").version


async def test_a_yes_in_the_client_confirms_the_card_another_agent_filed_meanwhile(tenant):
    other_token = tenant.connect(name="Agent without elicitation")
    filed = []

    async def answer(params):
        # While the person reads the question, another agent of theirs files the same request.
        async with mcp_client(tenant.url, other_token) as other:
            filed.append((await other.call_tool("edit_note", EDIT)).structured_content)
        return accept()

    async with tenant.client(answer=answer) as client:
        done = (await client.call_tool("edit_note", EDIT)).structured_content
    assert filed[0]["status"] == "pending"
    assert done["status"] == "completed" and done["confirmationId"] == filed[0]["confirmationId"]
    with pytest.raises(Refusal) as refused:
        tenant.confirm_on_page(filed[0]["confirmationId"])
    assert refused.value.reason is RefusalReason.ALREADY_ANSWERED
    assert tenant.note("n1")["text"] == "edited once" and version(tenant) == 2  # written exactly once
    card = tenant.store.cards.get_card(tenant.workspace_id, done["confirmationId"], tenant.runtime.desk.now())
    assert card.state is CardState.COMPLETED and card.channel == "client"


async def test_a_decline_on_the_page_wins_over_an_older_yes_in_the_client(tenant):
    other_token = tenant.connect(name="Agent without elicitation")
    filed = []

    async def answer(params):
        async with mcp_client(tenant.url, other_token) as other:
            filed.append((await other.call_tool("edit_note", EDIT)).structured_content)
        tenant.decline_on_page(filed[0]["confirmationId"], "not now")  # the person says no on the page first
        return accept()

    async with tenant.client(answer=answer) as client:
        result = await client.call_tool("edit_note", EDIT)
    assert result.is_error and "already declined" in result.content[0].text
    assert "nothing ran" in result.content[0].text
    assert tenant.note("n1")["text"] == "text 1" and version(tenant) == 1

