"""Tools are registered from each action's argument model: required fields, defaults and factories."""

from __future__ import annotations

import pytest
from mcp import Client
from pydantic import Field

from countersign.core.preview import Preview
from countersign.gate.registry import Registry
from countersign.surfaces.mcp.server import build_server
from countersign.toolkit import NEVER, Action, Arguments, Plan, Toolset

pytestmark = pytest.mark.anyio


class Args(Arguments):
    name: str = Field(description="Who")
    tags: list[str] = Field(default_factory=list)
    count: int = 3


class Echo(Action):
    name = "echo"
    arguments = Args
    gate = NEVER

    def plan(self, args, ctx):
        return Plan(args.model_dump(), Preview("Echo?"))

    def apply(self, plan, ctx):
        return plan.subject


async def test_schema_reflects_the_argument_model(live):
    runtime, _ = live
    desk = runtime.desk
    from dataclasses import replace

    server = build_server(replace(desk, registry=Registry([Toolset("echo", actions=[Echo()])])), runtime.state_keys)
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = tools["echo"].input_schema
    assert schema["required"] == ["name"]
    assert schema["properties"]["count"]["default"] == 3
    assert schema["properties"]["tags"]["type"] == "array"
    assert schema["properties"]["name"]["description"] == "Who"


async def test_descriptions_say_when_each_call_waits(tenant):
    async with tenant.client() as client:
        tools = {t.name: t.description for t in (await client.list_tools()).tools}
    guide = (" If the workspace's passkey policy covers the request, only the person's passkey on the confirm page "
             "confirms it: not a click alone, not an answer in your client, not a code."
             " If the workspace's quorum rules cover it, it waits for several people's approvals on the confirm "
             "page, never an answer in your client; the held reply's quorum says how many and of whom."
             " How confirmation works: countersign://guide.")
    assert tools["publish_note"].endswith("Always waits for a person on the confirm page." + guide)
    assert tools["edit_note"].endswith("asked in your client when it can, else on the confirm page." + guide)
    assert tools["tidy_note"].endswith("Runs at once.")
    assert tools["draft_note"].endswith("while the workspace setting ask_before_drafting is on (the default)." + guide)
    assert tools["retitle_locked"].endswith("while a note is locked; otherwise runs at once." + guide)
    if "add_list_to_campaign" in tools:  # the mail toolset states its argument-dependent rule itself
        assert "while the list feeds a live campaign" in tools["add_list_to_campaign"]


async def test_titles_read_as_what_the_client_shows_while_the_call_runs(tenant):
    """A held write's title is the activity while its preview is prepared ("Preparing a launch
    confirmation"), never the action as if it ran; every other title is an activity too."""
    async with tenant.client() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    holds = {a.name: a.gate.kind for a in tenant.runtime.desk.registry.actions.values()}
    for name, tool in tools.items():
        assert tool.title and tool.title.split()[0].endswith("ing"), (name, tool.title)
        assert tool.annotations.title == tool.title
        if holds.get(name) in ("always", "client"):
            assert tool.title.startswith("Preparing"), (name, tool.title)
    if "launch_campaign" in tools:
        assert tools["launch_campaign"].title == "Preparing a launch confirmation"
