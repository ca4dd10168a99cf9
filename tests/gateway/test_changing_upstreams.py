"""Changing an upstream again: a request filed again with another credential replaces the one
waiting, and a change made again after another (added after a removal, approved again after a
second change of its tools) is a request of its own, never answered with an earlier card."""

import pytest

from countersign.core.card_states import CardState
from countersign.surfaces import upstream_requests
from countersign.toolsets.gateway import config

from .flows import add, call, change, shown_tool

pytestmark = pytest.mark.anyio


def _file_add(gw, url: str, credential: str):
    desk = gw.runtime.desk
    arguments = upstream_requests.add_arguments(desk, gw.workspace_id, "fs", url, None, {"Authorization": credential})
    return upstream_requests.file_change(desk, gw.workspace_id, gw.person, "upstream_add", arguments)


def _stored_credential(gw) -> dict:
    desk = gw.runtime.desk
    upstream = config.load(desk.context(gw.workspace_id, gw.person, None, desk.now()), "fs")
    return upstream_requests.sealer_of(desk).unseal(gw.workspace_id, "fs", upstream.sealed)


async def test_an_add_filed_again_with_another_credential_replaces_the_waiting_one(gw, upstream):
    wrong = _file_add(gw, upstream.url, "Bearer WRONG-token")
    same = _file_add(gw, upstream.url, "Bearer WRONG-token")  # sealed again, the same credential
    assert same.id == wrong.id
    right = _file_add(gw, upstream.url, "Bearer RIGHT-token")
    assert right.id != wrong.id and right.state is CardState.PENDING
    replaced = gw.store.cards.get_card(gw.workspace_id, wrong.id, gw.runtime.desk.now())
    assert replaced.state is CardState.WITHDRAWN and replaced.decline_reason == upstream_requests.SUPERSEDED
    assert gw.confirm_on_page(right.id).state is CardState.COMPLETED
    assert _stored_credential(gw) == {"Authorization": "Bearer RIGHT-token"}


async def test_adding_again_after_a_removal_and_approving_again_are_requests_of_their_own(gw, upstream):
    first = add(gw, url=upstream.url)
    change(gw, "upstream_remove", {"name": "fs"})
    assert upstream_requests.views(gw.runtime.desk, gw.workspace_id, gw.person) == []
    again = add(gw, url=upstream.url)  # confirmed: asserts it completed
    assert again.id != first.id
    assert [v["name"] for v in upstream_requests.views(gw.runtime.desk, gw.workspace_id, gw.person)] == ["fs"]

    upstream.flag("rugpull")
    to_new = change(gw, "upstream_refresh", {"name": "fs"})
    (upstream.root / ".rugpull").unlink()
    back = change(gw, "upstream_refresh", {"name": "fs"})
    upstream.flag("rugpull")
    third = change(gw, "upstream_refresh", {"name": "fs"})  # the tools as the first refresh saw them
    assert len({to_new.id, back.id, third.id}) == 3
    held = (await call(gw, "fs__write_file", {"path": "a.txt", "content": "x"})).structured_content
    assert held["status"] == "pending"  # approved as listed now: it runs
    assert gw.confirm_on_page(held["confirmationId"]).state is CardState.COMPLETED
    assert upstream.calls() == ["write_file a.txt"]


async def test_approving_changed_tools_again_keeps_the_owners_class_unless_the_tool_asks_for_more(gw, upstream):
    import json

    def listing(lookup: str, purge: str, purge_read: bool):
        upstream.write(".schemas", json.dumps({"lookup": {"type": "object"}, "purge": {"type": "object"},
                                               "read": ["lookup", "purge"] if purge_read else ["lookup"],
                                               "descriptions": {"lookup": lookup, "purge": purge}}))

    listing("Look a record up.", "Tidy up.", purge_read=True)
    add(gw, url=upstream.url)
    change(gw, "upstream_policy", {"name": "fs", "tool": "lookup", "cls": "held"})  # the owner distrusts it
    listing("Look a record up!", "Tidy up: deletes every record.", purge_read=False)  # purge no longer says read
    card = change(gw, "upstream_refresh", {"name": "fs"})
    assert "Changed (2): lookup, purge." in card.lines
    lookup, purge = shown_tool(card, "lookup"), shown_tool(card, "purge")
    assert (lookup["runs"], "was" in lookup) == ("waits for a person on the page", False)
    assert lookup["description"] == [["", "Look a record up"], ["-", "."], ["+", "!"]]
    assert (purge["runs"], purge["was"]) == ("waits for a person on the page", "runs at once (a read)")
    assert purge["description"] == [["", "Tidy up"], ["+", ": deletes every record"], ["", "."]]
    tools = upstream_requests.views(gw.runtime.desk, gw.workspace_id, gw.person)[0]["tools"]
    classes = {t["name"]: t["class"] for t in tools}
    assert classes["fs__lookup"] == "held" and classes["fs__purge"] == "held"
    held = (await call(gw, "fs__lookup", {})).structured_content
    assert held["status"] == "pending"
