"""What the deployed MCP function lists is pinned: every tool of the build's toolsets (the
default packs plus the confirmation tools), with its title, description, input and output
schemas and annotations, and the guide resource, exactly as the SDK puts them on the wire
(key order included). Registration may change how and when it builds these; what a client
reads may not change without this file saying so.

After a deliberate change to a tool, rewrite the pin with
``COUNTERSIGN_REPIN=1 .venv/bin/python -m pytest tests/mcp/test_tools_pinned.py`` and read the
diff of ``tools_list.json`` before committing it.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest
from mcp import Client

from countersign import settings as settings_mod
from countersign.runtime import build
from countersign.surfaces.mcp.server import build_server

pytestmark = pytest.mark.anyio

PIN = Path(__file__).with_name("tools_list.json")


def _function_runtime(tmp_path, lazy: bool = True):
    """The runtime the ``mcp`` Lambda function builds: the default packs (imported on first use),
    no inline email."""
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path), "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com",
                                  "COUNTERSIGN_STATE_KEYS": secrets.token_urlsafe(48)})
    return build(settings, deliver_inline=False, lazy_toolsets=lazy)


async def _listed(server) -> dict:
    async with Client(server) as client:
        tools = await client.list_tools()
        resources = await client.list_resources()
    return {
        "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools],
        "resources": [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in resources.resources],
    }


def _text(listed: dict) -> str:
    return json.dumps(listed, indent=1, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("lazy", [True, False], ids=["toolsets-on-first-use", "toolsets-at-start"])
async def test_tools_list_is_pinned(tmp_path, lazy):
    runtime = _function_runtime(tmp_path, lazy)
    got = _text(await _listed(build_server(runtime.desk, runtime.state_keys)))
    if os.environ.get("COUNTERSIGN_REPIN") == "1":
        PIN.write_text(got)
    pinned = PIN.read_text()
    names = [t["name"] for t in json.loads(got)["tools"]]
    assert names == [t["name"] for t in json.loads(pinned)["tools"]], "the listed tools changed"
    assert len(names) >= 40
    for mine, theirs in zip(json.loads(got)["tools"], json.loads(pinned)["tools"], strict=True):
        assert mine == theirs, mine["name"]
    assert got == pinned  # key order too: what a client receives, byte for byte


async def test_a_call_before_any_listing_builds_one_tool_and_the_listing_after_it_is_the_same(tmp_path):
    """Whatever is built on first use is built once, in the listed order whatever was asked first."""
    runtime = _function_runtime(tmp_path)
    server = build_server(runtime.desk, runtime.state_keys)
    tool = server._tool_manager.get_tool("get_credits")
    assert tool is not None and server._tool_manager.get_tool("get_credits") is tool
    assert server._tool_manager.get_tool("no_such_tool") is None
    first = _text(await _listed(server))
    assert first == PIN.read_text() == _text(await _listed(server))
