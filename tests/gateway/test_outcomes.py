"""The gateway's outcomes in a person's words, through the real paths: every gateway action (each
upstream change, filed as the CLI files it, and an upstream tool call) completes against a real
upstream, and the confirm API's card view shows what it did — an upstream's answer with its line
breaks kept, end to end — and why a call failed."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from tests.support.outcomes import assert_reads_to_a_person

from .flows import add, call, change

pytestmark = pytest.mark.anyio

ANSWER = "first line\n\tindented second\nthird \u202e line \x1b[31mred"
SHOWN = "first line\n indented second\nthird [U+202E] line  [31mred"  # tab and escape as spaces, bidi shown


async def test_every_gateway_action_says_what_it_did_and_an_answer_keeps_its_lines(gw, upstream):
    page = gw.page()
    cards = {"upstream_add": add(gw, url=upstream.url)}
    cards["upstream_policy"] = change(gw, "upstream_policy", {"name": "fs", "tool": "read_file", "cls": "held"})
    upstream.write("notes.txt", ANSWER)
    held = (await call(gw, "fs__read_file", {"path": "notes.txt"})).structured_content
    assert held["status"] == "pending"
    cards["fs__read_file"] = gw.confirm_on_page(held["confirmationId"])
    upstream.flag("rugpull")
    cards["upstream_refresh"] = change(gw, "upstream_refresh", {"name": "fs"})
    cards["upstream_remove"] = change(gw, "upstream_remove", {"name": "fs"})

    registry = gw.runtime.registry
    gateway = next(t for t in registry.toolsets if t.name == "gateway")
    actions = [*gateway.actions, registry.action("fs__read_file")]
    for action in actions:
        assert action.name in cards, f"complete a card of {action.name} here and check its outcome"
        card = cards[action.name]
        assert card.state is CardState.COMPLETED, card.result
        assert_reads_to_a_person(action, card.result["result"])

    views = {name: page.get(f"/api/cards/{card.id}").json() for name, card in cards.items()}
    assert views["fs__read_file"]["outcome"] == ["fs answered:", SHOWN]
    told = views["fs__read_file"]["result"]["upstream"]["content"][0]["text"]
    assert told == SHOWN  # what the agent is told (behind the disclosure), its lines kept too
    assert views["upstream_add"]["outcome"] == [
        "fs is behind the gate",
        "Its 7 tools: delete_file, die_write, fail_write, read_file, slow_write, touch_file, write_file"]
    assert views["upstream_policy"]["outcome"] == ["The new policy for the tools of fs is in force"]
    assert views["upstream_refresh"]["outcome"][0] == "The tools of fs are approved as they are now"
    assert views["upstream_remove"]["outcome"] == [
        "fs is removed: its 7 tools are gone from every agent of this workspace"]
    assert all(v["signedWith"] is None for v in views.values())


async def test_a_failed_call_says_why_in_its_outcome(gw, upstream):
    add(gw, url=upstream.url)
    held = (await call(gw, "fs__fail_write", {"path": "d.txt", "content": "x"})).structured_content
    view = gw.page().post(f"/api/cards/{held['confirmationId']}/confirm").json()
    assert view["state"] == "failed"
    assert view["outcome"] == ["fs answered fail_write with an error: disk quota exceeded on the file store"]
    assert view["result"] is None and view["next"] is None
