"""The TypeScript SDKs from npm as the agent in front of the gateway: reads pass through, a held
write gives the card's reply (at most the card's address is shown, never a yes asked), and the click sends it once."""

import pytest

from countersign.core.card_states import CardState
from tests.mcp.test_typescript_clients import _run

from .flows import add


@pytest.mark.parametrize("script", ["sdk1.mjs", "client2.mjs"])
def test_typescript_agents_read_through_and_a_held_write_waits_for_the_page(gw, upstream, script):
    add(gw, url=upstream.url)
    upstream.write("a.txt", "from the store")
    read = _run(script, gw, "fs__read_file", {"path": "a.txt"}, "none")
    assert "error" not in read, read
    assert read["result"]["content"][0]["text"] == "from the store"
    held = _run(script, gw, "fs__write_file", {"path": "a.txt", "content": "typed"}, "accept")
    assert "error" not in held, held
    assert all(q.get("mode") == "url" for q in held["questions"])  # at most shown the card's address
    assert held["result"]["structuredContent"]["status"] == "pending"
    assert upstream.calls() == []
    card = gw.confirm_on_page(held["result"]["structuredContent"]["confirmationId"])
    assert card.state is CardState.COMPLETED and upstream.read("a.txt") == "typed"
    assert upstream.calls() == ["write_file a.txt"]


def test_an_idempotent_tool_is_confirmed_in_the_typescript_client_when_the_workspace_allows(gw, upstream):
    add(gw, url=upstream.url)
    gw.store.workspaces.update_workspace_settings(gw.workspace_id, {"confirm_in_client": True})
    run = _run("sdk1.mjs", gw, "fs__touch_file", {"path": "t.txt"}, "accept")
    assert "error" not in run, run
    assert run["questions"][0]["message"].startswith("Run touch_file on fs?")
    assert run["result"]["structuredContent"]["status"] == "completed"
    assert upstream.calls() == ["touch_file t.txt"] and upstream.read("t.txt") == ""
