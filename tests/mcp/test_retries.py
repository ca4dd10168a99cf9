"""What calling again does, and that every reply says so truthfully: after a no, after a yes with a
code, and with the same change spelled differently."""

from __future__ import annotations

import pytest

from countersign.core.codes import CODE_REFUSAL
from countersign.gate.desk import ANSWER_MEMORY_SECONDS
from tests.budget.ledger import seed_small
from tests.support.harness import DECLINE

pytestmark = pytest.mark.anyio

BUDGET = {"category_id": "cat_books", "month": "2026-10", "amount": 33}
SAME_SPELLED_OTHERWISE = {"category_id": "cat_books", "month": "2026-10-01", "amount": "33.00"}


def budgeted(tenant, month: str = "2026-10-01") -> int:
    doc = tenant.store.docs.get_doc(tenant.workspace_id, "budget_month", month)
    return (doc.data.get("budgeted") or {}).get("cat_books", 0) if doc else 0


@pytest.fixture
def shifted(live):
    """Moves the desk's clock forward for one test."""
    runtime, _ = live
    real = runtime.desk.clock
    yield lambda seconds: setattr(runtime.desk, "clock", lambda: real() + seconds)
    runtime.desk.clock = real


async def test_after_a_no_calling_again_returns_it_until_the_time_it_names_then_asks_afresh(tenant, shifted):
    edit = {"note_id": "n1", "text": "pushy"}
    async with tenant.client(answer=DECLINE) as client:
        no = (await client.call_tool("edit_note", edit)).structured_content
    assert no["status"] == "declined" and no["reason"] == "Declined in the client."
    assert f"Calling edit_note again with the same changes before {no['askAgainAfter']} returns this same answer" \
        in no["instructions"]
    asked = []
    async with tenant.client(answer=DECLINE, record=asked) as client:
        again = (await client.call_tool("edit_note", edit)).structured_content
        status = (await client.call_tool("get_confirmation_status",
                                         {"confirmation_id": no["confirmationId"]})).structured_content
        assert again["confirmationId"] == no["confirmationId"] and asked == []  # the person is not asked again
        assert status["askAgainAfter"] == no["askAgainAfter"] and status["instructions"] == no["instructions"]
        shifted(ANSWER_MEMORY_SECONDS + 1)
        later = (await client.call_tool("edit_note", edit)).structured_content
    assert len(asked) == 1 and later["confirmationId"] != no["confirmationId"]  # asked afresh, as promised


async def test_the_same_change_spelled_differently_is_the_same_subject_for_a_code(tenant, configure):
    configure(fallback="code")
    seed_small(tenant.store, tenant.workspace_id)
    async with tenant.client() as client:
        first = (await client.call_tool("set_category_budget", BUDGET)).structured_content
        assert first["status"] == "confirmation_required" and first["title"] == \
            "Budget Books for 2026-10-01: 0.00 → 33.00?"
        done = await client.call_tool("set_category_budget",
                                      dict(SAME_SPELLED_OTHERWISE, confirmation=first["confirmation"]))
        assert done.structured_content["status"] == "completed", done.content[0].text
        assert budgeted(tenant) == 33_000
        # Calling again does not run twice: the budget already says so.
        again = await client.call_tool("set_category_budget", BUDGET)
    assert again.is_error and "Books already has 33.00 budgeted for 2026-10-01" in again.content[0].text
    assert budgeted(tenant) == 33_000


async def test_a_code_used_again_after_success_gets_the_code_sentence(tenant, configure):
    configure(fallback="code")
    seed_small(tenant.store, tenant.workspace_id)
    async with tenant.client() as client:
        first = (await client.call_tool("set_category_budget", BUDGET)).structured_content
        args = dict(BUDGET, confirmation=first["confirmation"])
        assert (await client.call_tool("set_category_budget", args)).structured_content["status"] == "completed"
        # The plan now fails ("already has 33.00 budgeted"): still the code sentence, not a drift error.
        reused = await client.call_tool("set_category_budget", args)
    assert reused.is_error and reused.content[0].text.endswith(CODE_REFUSAL)
    assert budgeted(tenant) == 33_000


async def test_a_code_used_after_the_state_moved_gets_the_code_sentence_and_is_spent(tenant, configure):
    configure(fallback="code")
    seed_small(tenant.store, tenant.workspace_id)
    async with tenant.client() as client:
        first = (await client.call_tool("set_category_budget", BUDGET)).structured_content
        doc = tenant.store.docs.get_doc(tenant.workspace_id, "budget_month", "2026-09-01")
        from countersign.store.docs import DocWrite

        tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("budget_month", "2026-10-01",
                                                               {"budgeted": {"cat_books": 5_000}}, 0)])
        assert doc is not None
        moved = await client.call_tool("set_category_budget", dict(BUDGET, confirmation=first["confirmation"]))
        assert moved.is_error and moved.content[0].text.endswith(CODE_REFUSAL)
        # Put back as it was: the code was spent all the same.
        tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("budget_month", "2026-10-01", None, 1)])
        back = await client.call_tool("set_category_budget", dict(BUDGET, confirmation=first["confirmation"]))
    assert back.is_error and back.content[0].text.endswith(CODE_REFUSAL)
    assert budgeted(tenant) == 0
