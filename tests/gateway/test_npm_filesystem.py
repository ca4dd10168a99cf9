"""The reference filesystem server from npm (``@modelcontextprotocol/server-filesystem``, installed
into tests/clients by ``scripts/bootstrap --node``) as a stdio upstream on a temporary folder:
its listing and annotations, reads through, a held write_file written once after the click, and
a witness read that refuses the click after the file changed behind the card."""

from pathlib import Path

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.surfaces import upstream_requests

from .flows import add, call, change, shown_tool, text

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).resolve().parents[1] / "clients" / "node_modules" / "@modelcontextprotocol" / \
    "server-filesystem" / "dist" / "index.js"


@pytest.fixture
def folder(tmp_path):
    if not SERVER.is_file():
        pytest.fail("the npm filesystem server is not installed: run scripts/bootstrap --node (needs node and npm)")
    root = tmp_path / "files"
    root.mkdir()
    return root.resolve()


async def test_the_npm_filesystem_server_behind_the_gate(gw, folder):
    (folder / "a.txt").write_text("version 1")
    card = add(gw, "files", command=["node", str(SERVER), str(folder)])
    tools = upstream_requests.views(gw.runtime.desk, gw.workspace_id, gw.person)[0]["tools"]
    listed = {t["name"]: t["class"] for t in tools}
    assert listed["files__read_text_file"] == "read" and listed["files__list_directory"] == "read"
    assert listed["files__write_file"] == "held" and listed["files__edit_file"] == "held"
    assert listed["files__create_directory"] == "client"  # it says: idempotent, not destructive
    assert shown_tool(card, "write_file")["runs"] == "waits for a person on the page"
    read = await call(gw, "files__read_text_file", {"path": str(folder / "a.txt")})
    assert text(read) == "version 1"
    outside = await call(gw, "files__read_text_file", {"path": "/etc/hostname"})
    assert outside.is_error  # the server's own confinement, passed through
    path = str(folder / "a.txt")
    held = (await call(gw, "files__write_file", {"path": path, "content": "version 2"})).structured_content
    assert held["status"] == "pending" and (folder / "a.txt").read_text() == "version 1"
    assert gw.confirm_on_page(held["confirmationId"]).state is CardState.COMPLETED
    assert (folder / "a.txt").read_text() == "version 2"

    change(gw, "upstream_policy", {"name": "files", "tool": "write_file",
                                   "witness": [{"tool": "read_text_file", "arguments": {"path": "$path"}}]})
    held = (await call(gw, "files__write_file", {"path": path, "content": "version 3"})).structured_content
    shown = gw.store.cards.get_card(gw.workspace_id, held["confirmationId"], gw.runtime.desk.now())
    assert any('answers: "version 2"' in line for line in shown.lines)
    (folder / "a.txt").write_text("edited behind the card")
    with pytest.raises(Refusal) as refused:
        gw.confirm_on_page(held["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert (folder / "a.txt").read_text() == "edited behind the card"
