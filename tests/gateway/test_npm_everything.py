"""The reference "everything" server from npm (``@modelcontextprotocol/server-everything``, installed
into tests/clients by ``scripts/bootstrap --node``) as a stdio upstream: the classes countersign
derives from the annotations it lists (read here straight from the server, with the Python SDK),
a read-only tool's answer passed through, the upstream's own error words reaching the agent as an
error, and a long answer passed through whole.

A tool changed after approval is not run until ``upstream refresh``: the everything server offers
no way to change a listed tool at runtime (its toggles switch logging and resource updates), so
that stays with tests/gateway/test_http_upstream.py, whose upstream changes a description."""

from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from countersign.surfaces import upstream_requests

from .flows import add, call, shown_tool, text

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).resolve().parents[1] / "clients" / "node_modules" / "@modelcontextprotocol" / \
    "server-everything" / "dist" / "index.js"
COMMAND = ["node", str(SERVER), "stdio"]


def expected_class(annotations: dict) -> str:
    """The rule of issue 16, written out again: read-only reads; idempotent and not destructive is
    left to the client; anything else (or nothing said) is held for a person."""
    if annotations.get("readOnlyHint") is True:
        return "read"
    if annotations.get("destructiveHint") is False and annotations.get("idempotentHint") is True:
        return "client"
    return "held"


@pytest.fixture
def everything():
    if not SERVER.is_file():
        pytest.fail("the npm everything server is not installed: run scripts/bootstrap --node (needs node and npm)")
    return COMMAND


async def listed_by_the_server(command: list[str]) -> dict[str, dict]:
    """Each tool's listing as the server gives it to a plain SDK client (no countersign between)."""
    async with Client(StdioServerParameters(command=command[0], args=command[1:]), mode="legacy") as c:
        tools = (await c.list_tools()).tools
    return {t.name: t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools}


async def test_the_npm_everything_server_behind_the_gate(gw, everything):
    upstream = await listed_by_the_server(everything)
    card = add(gw, "everything", command=everything)
    tools = upstream_requests.views(gw.runtime.desk, gw.workspace_id, gw.person)[0]["tools"]
    listed = {t["name"]: t["class"] for t in tools}
    # A tool that runs only as a task (simulate-research-query) is left out: the gateway calls tools plainly.
    tasks_only = {n for n, t in upstream.items() if (t.get("execution") or {}).get("taskSupport") == "required"}
    assert tasks_only == {"simulate-research-query"} and "everything__simulate-research-query" not in listed
    assert listed == {f"everything__{name}": expected_class(tool.get("annotations") or {})
                      for name, tool in upstream.items() if name not in tasks_only}
    # What this version says of itself, so a release that changes its hints is noticed here.
    assert upstream["echo"]["annotations"]["readOnlyHint"] is True and listed["everything__echo"] == "read"
    assert listed["everything__gzip-file-as-resource"] == "client"  # idempotent, not destructive
    assert listed["everything__toggle-simulated-logging"] == "held"  # neither read-only nor idempotent
    assert set(listed.values()) == {"read", "client", "held"}
    assert shown_tool(card, "toggle-simulated-logging")["runs"] == "waits for a person on the page"

    echoed = await call(gw, "everything__echo", {"message": "hello through the gate"})
    assert not echoed.is_error and text(echoed) == "Echo: hello through the gate"

    refused = await call(gw, "everything__get-resource-reference", {"resourceType": "Text", "resourceId": 0})
    assert refused.is_error and "Invalid resourceId: 0. Must be a finite positive integer." in text(refused)

    long = "".join(f"line {i:05d}: the quick brown fox jumps over the lazy dog\n" for i in range(4000))
    assert len(long) > 200_000
    whole = await call(gw, "everything__echo", {"message": long})
    assert not whole.is_error and text(whole) == f"Echo: {long}"
