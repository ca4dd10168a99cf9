"""What an agent is told a person may do instead of a plain yes (docs/policy.md): each tool's
description names the arguments its action declares editable and the bounds a standing grant may
set, generated from those declarations (tools/list, pinned in tools_list.json); the held reply of
such a tool says the same in ``personMay``; a tool that declares neither says nothing of either."""

from __future__ import annotations

import pytest

from countersign.gate.policy_words import editable_words, grantable_words

pytestmark = pytest.mark.anyio


async def test_descriptions_name_every_declared_editable_field_and_grant_bound(tenant):
    registry = tenant.runtime.registry
    async with tenant.client() as client:
        tools = (await client.list_tools()).tools
    seen = {"edit": 0, "grant": 0}
    for tool in tools:
        try:
            action = registry.action(tool.name)
        except Exception:  # noqa: BLE001 (a read or a confirmation tool: no declarations)
            continue
        edit = f"On its card the person may change {editable_words(action)} before confirming"
        assert (edit in tool.description) == bool(action.editable), tool.name
        for e in action.editable:
            assert f"{e.argument} ({e.label}" in tool.description, tool.name
        grant = f"standing grant for it, bounding {grantable_words(action)}:"
        assert (grant in tool.description) == bool(action.grantable), tool.name
        for b in action.grantable:
            assert f"{b.argument} ({b.label}) to " in tool.description, tool.name
        seen["edit"] += bool(action.editable)
        seen["grant"] += bool(action.grantable)
    assert seen["edit"] >= 3 and seen["grant"] >= 3, seen


async def test_the_held_reply_says_what_the_person_may_do(tenant):
    async with tenant.client() as client:
        credits = (await client.call_tool("buy_credits", {"credits": 120})).structured_content
        note = (await client.call_tool("publish_note", {"note_id": "n1", "text": "x"})).structured_content
    assert credits["status"] == "pending" and note["status"] == "pending"
    assert credits["personMay"] == [
        "The person may change credits (credits to buy, a whole number) on the card before confirming: it then "
        "continues as a new card with their values, and get_confirmation_status of this confirmationId answers for "
        "it and says what changed and by whom.",
        "The person may give this connection a standing grant for buy_credits, bounding credits (credits bought) to "
        "at most an amount a call (and optionally in all): a later call within it runs at once."]
    assert "personMay" not in note
