"""An HTTP upstream behind the gate, driven through countersign's /mcp by the real ``mcp`` client:
reads pass through, writes wait for the page and reach the upstream exactly once."""

import json

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.surfaces import upstream_requests

from .conftest import SHORT_TIMEOUT, UPSTREAM_SECRET
from .flows import add, call, change, shown_tool, text

pytestmark = pytest.mark.anyio


async def test_reads_pass_through_and_a_write_waits_then_runs_once(gw, upstream):
    card = add(gw, url=upstream.url, headers={"Authorization": f"Bearer {UPSTREAM_SECRET}"})
    assert "Put the MCP server fs behind the gate?" == card.title
    assert shown_tool(card, "write_file")["runs"] == "waits for a person on the page"
    assert "A credential is set (not shown)." in card.lines
    assert UPSTREAM_SECRET not in json.dumps([card.lines, card.sections])
    upstream.write("a.txt", "hello")
    async with gw.client() as c:
        listed = {t.name: t for t in (await c.list_tools()).tools}
        assert listed["fs__read_file"].annotations.read_only_hint is True
        assert listed["fs__write_file"].annotations.destructive_hint is True
        assert listed["fs__write_file"].output_schema is None
        assert listed["fs__write_file"].input_schema["required"] == ["path", "content"]
        read = await c.call_tool("fs__read_file", {"path": "a.txt"})
        assert text(read) == "hello" and not read.is_error
        held = await c.call_tool("fs__write_file", {"path": "a.txt", "content": "bye"})
        bad = await c.call_tool("fs__write_file", {"path": "a.txt"})
    assert bad.is_error and "'content' is a required property" in text(bad)
    reply = held.structured_content
    assert reply["status"] == "pending" and upstream.read("a.txt") == "hello" and upstream.calls() == []
    shown = gw.store.cards.get_card(gw.workspace_id, reply["confirmationId"], gw.runtime.desk.now())
    assert shown.title == "Run write_file on fs?"
    assert 'content: "bye"' in "\n".join(shown.lines)
    done = gw.confirm_on_page(reply["confirmationId"])
    assert done.state is CardState.COMPLETED
    assert done.result["result"]["upstream"]["content"][0]["text"] == "wrote 3 characters to a.txt"
    assert upstream.read("a.txt") == "bye" and upstream.calls() == ["write_file a.txt"]
    with pytest.raises(Refusal) as again:
        gw.confirm_on_page(reply["confirmationId"])
    assert again.value.reason is RefusalReason.ALREADY_ANSWERED and upstream.calls() == ["write_file a.txt"]
    listing = json.dumps(upstream_requests.views(gw.runtime.desk, gw.workspace_id, gw.person))
    assert UPSTREAM_SECRET not in listing and "sealed" not in listing


async def test_a_changed_tool_does_not_run_until_the_owner_approves_it_again(gw, upstream):
    add(gw, url=upstream.url)
    before = (await call(gw, "fs__write_file", {"path": "b.txt", "content": "x"})).structured_content
    upstream.flag("rugpull")
    refused = await call(gw, "fs__write_file", {"path": "b.txt", "content": "y"})
    assert refused.is_error and "changed since the owner approved it" in text(refused)
    assert "countersign upstream refresh fs" in text(refused)
    with pytest.raises(Refusal) as clicked:  # the card filed before the change is refused at the click
        gw.confirm_on_page(before["confirmationId"])
    assert clicked.value.reason is RefusalReason.CHANGED
    assert "changed since the owner approved it" in clicked.value.message
    assert upstream.calls() == [] and upstream.read("b.txt") is None
    again = change(gw, "upstream_refresh", {"name": "fs"})
    assert "Changed (1): write_file." in again.lines  # the changed tool first, what changed marked
    changed = again.sections[0]
    assert (changed["group"], [t["name"] for t in changed["tools"]]) == ("changed", ["write_file"])
    assert changed["tools"][0]["description"] == [["", "Write a file"], ["+", ", and mail it out"], ["", "."]]
    held = (await call(gw, "fs__write_file", {"path": "b.txt", "content": "x"})).structured_content
    assert gw.confirm_on_page(held["confirmationId"]).state is CardState.COMPLETED
    assert upstream.calls() == ["write_file b.txt"]


async def test_a_witness_read_refuses_the_click_when_the_file_moved(gw, upstream):
    add(gw, url=upstream.url)
    change(gw, "upstream_policy", {"name": "fs", "tool": "write_file",
                                   "witness": [{"tool": "read_file", "arguments": {"path": "$path"}}]})
    upstream.write("c.txt", "version 1")
    held = (await call(gw, "fs__write_file", {"path": "c.txt", "content": "version 2"})).structured_content
    card = gw.store.cards.get_card(gw.workspace_id, held["confirmationId"], gw.runtime.desk.now())
    assert any('answers: "version 1"' in line for line in card.lines)
    upstream.write("c.txt", "changed behind the card")
    with pytest.raises(Refusal) as refused:
        gw.confirm_on_page(held["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert upstream.read("c.txt") == "changed behind the card" and upstream.calls() == []


async def test_an_upstream_error_is_the_cards_result(gw, upstream):
    add(gw, url=upstream.url)
    held = (await call(gw, "fs__fail_write", {"path": "d.txt", "content": "x"})).structured_content
    card = gw.confirm_on_page(held["confirmationId"])
    assert card.state is CardState.FAILED and "disk quota exceeded on the file store" in card.result["error"]
    assert upstream.calls() == ["fail_write d.txt"]


async def test_a_timeout_is_outcome_unknown_and_never_sent_again(gw_short, upstream):
    gw = gw_short  # upstream operations time out after SHORT_TIMEOUT seconds
    add(gw, url=upstream.url)
    upstream.flag("slow", str(SHORT_TIMEOUT * 2))
    held = (await call(gw, "fs__slow_write", {"path": "e.txt", "content": "x"})).structured_content
    card = gw.confirm_on_page(held["confirmationId"])
    assert card.state is CardState.FAILED and card.result["error"].startswith("Outcome unknown:")
    assert "does not send it again" in card.result["error"]
    with pytest.raises(Refusal):
        gw.confirm_on_page(held["confirmationId"])
    assert upstream.calls() == ["slow_write e.txt"]


async def test_idempotent_tools_may_be_confirmed_in_the_client_and_classes_can_be_overridden(gw, upstream):
    add(gw, url=upstream.url)
    tools = upstream_requests.views(gw.runtime.desk, gw.workspace_id, gw.person)[0]["tools"]
    listed = {t["name"]: t["class"] for t in tools}
    assert listed["fs__touch_file"] == "client" and listed["fs__read_file"] == "read"
    assert listed["fs__slow_write"] == "held"  # no hints: held
    change(gw, "upstream_policy", {"name": "fs", "tool": "read_file", "cls": "held"})
    held = await call(gw, "fs__read_file", {"path": "a.txt"})
    assert held.structured_content["status"] == "pending"


async def test_another_workspace_cannot_see_or_call_the_upstream(gw, upstream, gateway_live):
    from tests.support.harness import new_tenant

    add(gw, url=upstream.url)
    other = new_tenant(*gateway_live[:1], gateway_live[1].origin)
    async with other.client() as c:
        names = {t.name for t in (await c.list_tools()).tools}
        refused = await c.call_tool("fs__write_file", {"path": "x", "content": "y"})
    assert not any(n.startswith("fs__") for n in names)
    assert refused.is_error and upstream.calls() == []
