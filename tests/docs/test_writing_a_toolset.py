"""The toolset guide's worked example runs as written (docs/writing-a-toolset.md).

The guide shows a whole toolset (``wiki``), the tests a reader would write for it, and how to
register a toolset kept outside the package. A reader copies them, so this module takes them
from the guide itself, and a change to the action API that the guide does not follow fails here:

* the toolset's code becomes the module ``countersign.toolsets.wiki`` while the guide's tests are
  imported, and those tests are collected into this module: they run here, on both stores, as
  written;
* the registration snippet runs, all but its last line (which would start a server and never
  return): the app it builds serves the wiki over MCP, and a real SDK client reads the demo's
  pages and is given a card for a rename.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import types
from pathlib import Path

import httpx2
import pytest

from tests.support.harness import mcp_client

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-toolset.md"
TEXT = GUIDE.read_text(encoding="utf-8")
PUBLIC_URL = "https://wiki.example.com"


def _blocks() -> list[tuple[str, str]]:
    """(the line before, the code) of every Python block of the guide."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"([^\n]*)\n\n```python\n(.*?)```", TEXT, re.S)]


def _block_after(caption: str) -> str:
    found = [code for before, code in _blocks() if caption in before]
    assert len(found) == 1, f"the guide has no single Python block after a line naming {caption}"
    return found[0]


def _module(name: str, code: str, where: str) -> types.ModuleType:
    """``code`` run as the module ``name`` (in ``sys.modules`` while it runs, as an import does)."""
    module = types.ModuleType(name)
    module.__file__ = f"{GUIDE}:{where}"
    sys.modules[name] = module
    try:
        exec(compile(code, module.__file__, "exec"), module.__dict__)  # our own guide's code
    finally:
        del sys.modules[name]
    return module


# The guide's tests import the toolset by its package name: it is that module while they are read.
WIKI_CODE = _block_after("`functions/countersign/toolsets/wiki/__init__.py`")
WIKI = _module("countersign.toolsets.wiki", WIKI_CODE, "wiki")
sys.modules["countersign.toolsets.wiki"] = WIKI
try:
    GUIDE_TESTS = _module("guide_tests", _block_after("`tests/wiki/test_wiki.py`"), "tests")
finally:
    del sys.modules["countersign.toolsets.wiki"]

for _name, _value in vars(GUIDE_TESTS).items():  # its tests and the fixtures they ask for, as this module's
    if _name.startswith("test_") or _name in ("wiki", "store"):
        globals()[_name] = _value


def test_the_guide_shows_five_tests_of_its_toolset():
    shown = [name for name in vars(GUIDE_TESTS) if name.startswith("test_")]
    assert len(shown) == 5 and all(name in globals() for name in shown)
    assert [a.name for a in WIKI.TOOLSET.actions] == ["rename_page", "delete_page"]


def _registration() -> tuple[str, ast.stmt]:
    """The registration snippet without its last statement, and that statement (``serve(...)``)."""
    code = _block_after("build the runtime yourself and pass it in")
    tree = ast.parse(code)
    *before, last = tree.body
    assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
    assert isinstance(last.value.func, ast.Name) and last.value.func.id == "serve"
    return ast.unparse(ast.Module(body=before, type_ignores=[])), last


@pytest.mark.anyio
async def test_the_registration_snippet_builds_a_server_that_serves_the_wiki(monkeypatch, tmp_path):
    for name in [n for n in os.environ if n.startswith("COUNTERSIGN_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("COUNTERSIGN_DATA", str(tmp_path))
    monkeypatch.setenv("COUNTERSIGN_PUBLIC_URL", PUBLIC_URL)
    monkeypatch.setitem(sys.modules, "wiki", WIKI)  # the snippet's "your module with TOOLSET"
    code, serve = _registration()
    assert ast.unparse(serve) == "serve(app, host='127.0.0.1', port=8000)"
    snippet: dict = {}
    exec(compile(code, f"{GUIDE}:registration", "exec"), snippet)  # our own guide's code
    app, demo = snippet["app"], snippet["demo"]

    transport = httpx2.ASGITransport(app=app)
    try:
        async with app.router.lifespan_context(app), \
                mcp_client(f"{PUBLIC_URL}/mcp", demo["agent_token"], transport=transport) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"list_pages", "rename_page", "delete_page", "list_accounts", "buy_credits"} <= names
            pages = (await client.call_tool("list_pages", {})).structured_content
            assert pages == {"pages": [{"id": "draft", "title": "Ideas", "published": False},
                                       {"id": "welcome", "title": "Welcome", "published": True}]}
            held = (await client.call_tool("rename_page", {"page_id": "welcome", "title": "Start"})).structured_content
            assert held["status"] == "pending" and held["title"] == "Rename the page ‘Welcome’ to ‘Start’?"
            assert (await client.call_tool("list_pages", {})).structured_content == pages  # nothing renamed
    finally:
        snippet["runtime"].store.close()
