"""What a person reviews of an upstream's tools (toolsets/gateway/review.py): word-level
before/after of each text, each argument compared field by field, and the order a card shows them
in — changed tools first, then added, removed, unchanged."""

from __future__ import annotations

from countersign.toolsets.gateway.config import Pin, tool_digest
from countersign.toolsets.gateway.review import (
    SPACING_ONLY,
    add_review,
    argument_rows,
    refresh_review,
    segments,
    tool_entry,
)


def pin(definition: dict, cls: str = "held") -> Pin:
    return Pin(definition, tool_digest(definition), cls)


def tool(name: str, description: str, properties: dict | None = None, required=(), **more) -> dict:
    schema = {"type": "object", "properties": properties or {}, "required": list(required)}
    return {"name": name, "description": description, "inputSchema": schema, **more}


def test_a_text_is_compared_word_by_word_and_an_unrelated_one_is_replaced_whole():
    assert segments("Write a file.", "Write a file.") == [["", "Write a file."]]
    assert segments("Write a file.", "Write a file, and mail it out.") == [
        ["", "Write a file"], ["+", ", and mail it out"], ["", "."]]
    assert segments("Delete the old records now.", "Delete the records now.") == [
        ["", "Delete the"], ["-", " old"], ["", " records now."]]
    assert segments("A file name", "Any path, even outside the folder") == [
        ["-", "A file name"], ["+", "Any path, even outside the folder"]]
    assert segments(None, "new") == [["+", "new"]] and segments("old", None) == [["-", "old"]]
    assert segments(None, None) == [] and segments("", "") == []


def test_each_argument_is_compared_by_type_required_description_and_the_rest_of_its_schema():
    before = tool("t", "d", {"path": {"type": "string", "description": "A file name"},
                             "mode": {"type": "string", "enum": ["a", "w"]}, "gone": {"type": "boolean"}}, ["path"])
    after = tool("t", "d", {"path": {"type": "string", "description": "A file name"},
                            "mode": {"type": "string", "enum": ["a", "w", "x"]},
                            "to": {"type": "array", "items": {"type": "string"}}}, ["path", "mode", "to"])
    rows = {r["name"]: r for r in argument_rows(before, after)}
    assert [r["name"] for r in argument_rows(before, after)] == ["path", "mode", "to", "gone"]
    assert rows["path"] == {"name": "path", "change": "", "type": [["", "string"]], "required": [["", "required"]],
                            "description": [["", "A file name"]], "more": []}
    assert rows["mode"]["change"] == "changed" and rows["mode"]["required"] == [["-", "optional"], ["+", "required"]]
    assert rows["mode"]["more"] == [["", '{"enum": ["a", "w"'], ["+", ', "x"'], ["", "]}"]]
    assert rows["to"] == {"name": "to", "change": "added", "type": [["+", "array of string"]],
                          "required": [["+", "required"]], "description": [], "more": []}
    assert rows["gone"]["change"] == "removed" and rows["gone"]["type"] == [["-", "boolean"]]


def test_a_schema_agents_read_is_shown_whole_even_where_it_is_no_plain_list_of_arguments():
    odd = {"name": "t", "inputSchema": {"type": "object", "properties": {"q": {"anyOf": [{"type": "string"}]}},
                                        "$defs": {"x": {"type": "integer"}}}}
    entry = tool_entry("t", "new", pin(odd))
    assert entry["arguments"][0]["type"] == [["", "any"]]
    assert entry["arguments"][0]["more"] == [["", '{"anyOf": [{"type": "string"}]}']]
    assert entry["schema"] == [["", '{"$defs": {"x": {"type": "integer"}}, "type": "object"}']]
    assert entry["description"] == [] and "title" not in entry and "other" not in entry


def test_a_changed_tool_shows_what_else_moved_in_its_definition_and_its_class_before():
    before = pin(tool("t", "Look up.", annotations={"readOnlyHint": True}), "read")
    after = pin(tool("t", "Look up.", annotations={"readOnlyHint": False}, title="Look it up"), "held")
    entry = tool_entry("t", "changed", after, before)
    assert (entry["runs"], entry["was"]) == ("waits for a person on the page", "runs at once (a read)")
    assert entry["title"] == [["+", "Look it up"]]
    assert entry["other"] == [{"name": "annotations", "value": [["", '{"readOnlyHint": '], ["-", "true"],
                                                                 ["+", "false"], ["", "}"]]}]
    assert "note" not in entry
    spaced = tool_entry("t", "changed", pin(tool("t", "Look  up.")), pin(tool("t", "Look up.")))
    assert spaced["note"] == SPACING_ONLY and spaced["description"] == [["", "Look up."]]


def test_a_refresh_review_puts_changed_tools_first_then_added_removed_and_unchanged():
    same = pin(tool("same", "Same."))
    before = {"same": same, "write": pin(tool("write", "Write.")), "gone": pin(tool("gone", "Gone."), "read")}
    after = {"same": same, "write": pin(tool("write", "Write and mail.")), "new": pin(tool("new", "New."), "client"),
             "also": pin(tool("also", "Also new."))}
    lines, sections = refresh_review(after, before)
    assert lines == ["Changed (1): write.", "Added (2): also, new.", "Removed (1): gone.", "Unchanged: 1 tool."]
    assert [(s["group"], s["heading"], [t["name"] for t in s["tools"]]) for s in sections] == [
        ("changed", "Changed (1)", ["write"]), ("added", "Added (2)", ["also", "new"]),
        ("removed", "Removed (1)", ["gone"]), ("unchanged", "Unchanged (1)", ["same"])]
    gone = sections[2]["tools"][0]
    assert (gone["runs"], gone["description"]) == ("runs at once (a read)", [["", "Gone."]])
    lines, sections = refresh_review({"w": pin(tool("w", "b"))}, {"w": pin(tool("w", "a"))})
    assert lines == ["Changed (1): w."] and [s["group"] for s in sections] == ["changed"]


def test_an_add_review_sums_the_tools_up_by_class_and_lists_each_with_its_arguments():
    pins = {"read": pin(tool("read", "Read."), "read"), "write": pin(tool("write", "Write.", {"p": {}}, ["p"])),
            "touch": pin(tool("touch", "Touch."), "client")}
    lines, sections = add_review("fs", pins)
    assert lines == ["Its 3 tools, as fs__<tool>:", "Wait for a person on the page (1): write.",
                     "Wait for a yes (in the client when allowed) (1): touch.", "Run at once (reads) (1): read."]
    assert [(s["heading"], [t["name"] for t in s["tools"]]) for s in sections] == [
        ("Tools (3)", ["read", "touch", "write"])]
    assert sections[0]["tools"][2]["arguments"] == [{"name": "p", "change": "", "type": [["", "any"]],
                                                     "required": [["", "required"]], "description": [], "more": []}]
    assert add_review("fs", {}) == (["Its 0 tools, as fs__<tool>:"], [])
