"""The gateway's pure parts: sealing credentials, classes from annotations, previews, URLs."""

from __future__ import annotations

import pytest

from countersign.toolkit import ActionError
from countersign.toolsets.gateway.config import check_url, class_from_annotations, split_tool, tool_digest
from countersign.toolsets.gateway.preview import FOLD, argument_lines, shown
from countersign.toolsets.gateway.seal import Sealer, SealError


def test_a_sealed_credential_opens_only_for_its_workspace_and_name_and_survives_rotation():
    old, new = b"o" * 32, b"n" * 32
    sealed = Sealer([old]).seal("ws_1", "fs", {"Authorization": "Bearer t"})
    assert "Bearer" not in sealed
    assert Sealer([new, old]).unseal("ws_1", "fs", sealed) == {"Authorization": "Bearer t"}
    for workspace, name in (("ws_2", "fs"), ("ws_1", "gh")):
        with pytest.raises(SealError):
            Sealer([old]).unseal(workspace, name, sealed)
    with pytest.raises(SealError):
        Sealer([new]).unseal("ws_1", "fs", sealed)


@pytest.mark.parametrize(("hints", "cls"), [
    ({"readOnlyHint": True}, "read"),
    ({"destructiveHint": True}, "held"),
    (None, "held"),
    ({"destructiveHint": False}, "held"),
    ({"destructiveHint": False, "idempotentHint": True}, "client"),
    ({"idempotentHint": True}, "held"),  # destructive unless it says otherwise
])
def test_classes_come_from_annotations_and_hold_when_unsure(hints, cls):
    assert class_from_annotations({"name": "t", "annotations": hints}) == cls


def test_a_pin_changes_with_any_part_of_the_definition():
    tool = {"name": "t", "description": "Write.", "inputSchema": {"type": "object"}}
    assert tool_digest(tool) == tool_digest(dict(reversed(list(tool.items()))))
    assert tool_digest(tool) != tool_digest(dict(tool, description="Write, and mail it out."))


def test_previews_fold_long_values_and_show_no_markup():
    lines = argument_lines({"content": "x" * 1000, "path": "<b>a.txt</b>", "n": 5, "s": "5"})
    assert lines[0] == "content: " + shown("x" * 1000) and "… (" in lines[0] and len(lines[0]) < FOLD + 80
    assert lines[1:] == ["n: 5", 'path: "<b>a.txt</b>"', 's: "5"']
    assert shown("a" * 500) != shown("a" * 499 + "b")
    assert argument_lines({}) == ["No arguments."]


def test_upstream_urls_are_https_on_public_addresses_unless_private_is_allowed():
    for url in ("http://example.com/mcp", "https://127.0.0.1/mcp", "https://169.254.169.254/", "ftp://x/",
                "https://user:pw@example.com/mcp", "https://[2002:a9fe:a9fe::1]/mcp", "https://[::ffff:10.0.0.1]/"):
        with pytest.raises(ActionError):
            check_url(url, allow_private=False)
    assert check_url("http://127.0.0.1:8080/mcp", allow_private=True)


def test_tool_names_split_on_the_prefix():
    assert split_tool("fs__write_file") == ("fs", "write_file")
    assert split_tool("fs__a__b") == ("fs", "a__b")
    assert split_tool("list_notes") is None and split_tool("Fs__x") is None and split_tool("fs__") is None


def test_a_header_line_without_its_colon_is_refused_without_being_repeated():
    from countersign.toolsets.gateway.requests import parse_headers

    assert parse_headers(["Authorization: Bearer t:1", " X-Key :k "]) == {"Authorization": "Bearer t:1", "X-Key": "k"}
    for lines, number in ((["Authorization Bearer sk-live-SECRET"], 1), (["X-A: 1", ": sk-live-SECRET"], 2)):
        with pytest.raises(ValueError) as refused:
            parse_headers(lines)
        assert "sk-live-SECRET" not in str(refused.value)
        assert str(refused.value).startswith(f"header {number} is not 'Name: value'")


def test_the_settings_view_of_an_upstream_shows_its_tools_titles_as_plain_text():
    from countersign.toolsets.gateway.config import Pin, Upstream
    from countersign.toolsets.gateway.requests import view

    tool = {"name": "wipe", "title": "Wipe the disk \u202eegap siht rof stiaw"}
    shown = view(Upstream("w_1", "fs", "https://x.example/mcp", (), None, {"wipe": Pin(tool, "d", "read")}))
    assert shown["tools"][0]["title"] == "Wipe the disk [U+202E]egap siht rof stiaw"
