"""The cards that add an upstream or approve its tools again, as a person reviews them: the lines
sum the change up (what an in-client question or a receipt shows), the sections hold every tool —
the changed ones first, with what changed in their description and arguments — and the ticket
binds the sections as it binds the lines: a card whose sections were edited in the store is
refused, and its receipt verifies with them."""

import json

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.core.preview import Preview
from countersign.identity.passkeys.receipts import verify_receipt
from countersign.store.sqlite.schema import to_json
from countersign.surfaces import upstream_requests

from .flows import add, call, shown_tool

pytestmark = pytest.mark.anyio

ARCHIVE_BEFORE = {"type": "object", "required": ["id"], "properties": {
    "id": {"type": "string", "description": "The record's id"}, "note": {"type": "string"}}}
ARCHIVE_AFTER = {"type": "object", "required": ["id", "cc"], "properties": {
    "id": {"type": "integer", "description": "The record's id, or 0 for every record"},
    "cc": {"type": "string", "description": "Where a copy of each record goes"}}}


def listing(upstream, archive: dict, description: str, *, later: bool = False) -> None:
    """The upstream's extra tools: archive, and lookup (a read) — or, ``later``, purge instead."""
    tools = {"archive": archive, **({"purge": {"type": "object"}} if later else {"lookup": {"type": "object"}})}
    described = {"archive": description, "lookup": "Look a record up.", "purge": "Purge the archive."}
    upstream.write(".schemas", json.dumps({**tools, "read": ["lookup"],
                                           "descriptions": {n: described[n] for n in tools}}))


def file_refresh(gw):
    return upstream_requests.file_change(gw.runtime.desk, gw.workspace_id, gw.person, "upstream_refresh",
                                         {"name": "fs"})


def changed_upstream(gw, upstream):
    """An upstream approved with archive and lookup, which then changed archive (its description and
    arguments), dropped lookup and listed purge: the card that approves it again, waiting."""
    listing(upstream, ARCHIVE_BEFORE, "Archive a record.")
    add(gw, url=upstream.url)
    listing(upstream, ARCHIVE_AFTER, "Archive a record and mail it to cc.", later=True)
    return file_refresh(gw)


async def test_a_refresh_card_shows_the_changed_tool_first_with_its_before_and_after(gw, upstream):
    card = changed_upstream(gw, upstream)
    assert list(card.lines) == [f"Where: {upstream.url}", "Changed (1): archive.", "Added (1): purge.",
                                "Removed (1): lookup.", "Unchanged: 7 tools."]
    assert [(s["group"], s["heading"]) for s in card.sections] == [
        ("changed", "Changed (1)"), ("added", "Added (1)"), ("removed", "Removed (1)"), ("unchanged", "Unchanged (7)")]
    archive = card.sections[0]["tools"][0]
    assert (archive["name"], archive["runs"]) == ("archive", "waits for a person on the page")
    assert archive["description"] == [["", "Archive a record"], ["+", " and mail it to cc"], ["", "."]]
    rows = {a["name"]: a for a in archive["arguments"]}
    assert [a["name"] for a in archive["arguments"]] == ["id", "cc", "note"]  # as listed now, then the gone one
    assert rows["id"]["change"] == "changed" and rows["id"]["type"] == [["-", "string"], ["+", "integer"]]
    assert rows["id"]["description"] == [["", "The record's id"], ["+", ", or 0 for every record"]]
    assert rows["id"]["required"] == [["", "required"]]
    assert (rows["cc"]["change"], rows["cc"]["required"]) == ("added", [["+", "required"]])
    assert rows["cc"]["description"] == [["+", "Where a copy of each record goes"]]
    assert (rows["note"]["change"], rows["note"]["type"]) == ("removed", [["-", "string"]])
    assert shown_tool(card, "lookup")["runs"] == "runs at once (a read)"  # as it was approved
    assert shown_tool(card, "purge")["description"] == [["", "Purge the archive."]]
    assert all(t["change"] == "unchanged" for t in card.sections[3]["tools"])
    # An in-client question of such a card (and a receipt) reads the lines: short, no schema in them.
    assert Preview(card.title, card.lines).question() == "\n".join([
        "Approve the tools of fs as they are now?", *card.lines])

    # The page's API gives the sections as stored; confirmed, the new tools run and the receipt verifies.
    view = gw.page().get(f"/api/cards/{card.id}").json()
    assert view["sections"] == json.loads(json.dumps(card.sections)) and view["lines"] == list(card.lines)
    assert gw.confirm_on_page(card.id).state is CardState.COMPLETED
    receipt = gw.page().get(f"/api/cards/{card.id}/receipt").json()
    assert receipt["card"]["sections"] == view["sections"]
    assert verify_receipt(receipt).kind.startswith("confirmed without a passkey")
    held = (await call(gw, "fs__archive", {"id": 7, "cc": "me@example.com"})).structured_content
    assert held["status"] == "pending"


async def test_an_add_card_lists_every_tool_with_its_arguments_and_sums_them_up_by_class(gw, upstream):
    listing(upstream, ARCHIVE_BEFORE, "Archive a record.")
    card = upstream_requests.file_change(gw.runtime.desk, gw.workspace_id, gw.person, "upstream_add",
                                         upstream_requests.add_arguments(gw.runtime.desk, gw.workspace_id, "fs",
                                                                         upstream.url, None, {}))
    assert list(card.lines) == [
        f"Where: {upstream.url}", "No credential.", "Its 9 tools, as fs__<tool>:",
        "Wait for a person on the page (6): archive, delete_file, die_write, fail_write, slow_write, write_file.",
        "Wait for a yes (in the client when allowed) (1): touch_file.", "Run at once (reads) (2): lookup, read_file."]
    [tools] = card.sections
    assert tools["heading"] == "Tools (9)" and [t["name"] for t in tools["tools"]][:3] == [
        "archive", "delete_file", "die_write"]
    archive = shown_tool(card, "archive")
    assert archive["arguments"] == [
        {"name": "id", "change": "", "type": [["", "string"]], "required": [["", "required"]],
         "description": [["", "The record's id"]], "more": []},
        {"name": "note", "change": "", "type": [["", "string"]], "required": [["", "optional"]],
         "description": [], "more": []}]
    write = shown_tool(card, "write_file")
    assert write["title"] == [["", "Write a file"]] and write["schema"] == [["", '{"additionalProperties": false, '
                                                                             '"type": "object"}']]


def edit_sections(gw, card_id: str, sections: list) -> None:
    """What someone with write access to the store could do: change the tools the page shows."""
    db = gw.store.database.connection()
    (kept,) = db.execute("SELECT lines FROM cards WHERE id = ?", (card_id,)).fetchone()
    lines = json.loads(kept)
    lines[-1] = {"sections": json.dumps(sections)}
    db.execute("UPDATE cards SET lines = ? WHERE id = ?", (to_json(lines), card_id))


async def test_sections_edited_in_the_store_are_refused_as_tampered_and_nothing_is_approved(gw, upstream):
    card = changed_upstream(gw, upstream)
    edited = json.loads(json.dumps(card.sections))
    edited[0]["tools"][0]["description"] = [["", "Archive a record."]]  # the change hidden from the person
    edit_sections(gw, card.id, edited)
    assert gw.store.cards.get_card(gw.workspace_id, card.id, gw.runtime.desk.now()).sections[0] == edited[0]
    with pytest.raises(Refusal) as refused:
        gw.confirm_on_page(card.id)
    assert refused.value.reason is RefusalReason.TAMPERED
    assert "the card's preview_digest no longer match its ticket" in refused.value.message
    still = await call(gw, "fs__archive", {"id": "7"})  # the tools as approved before: archive changed since
    assert still.is_error and "changed since the owner approved it" in "".join(c.text for c in still.content)
