"""One live local server per test run (SQLite store, the test-only notes toolset); a fresh
workspace, owner and connection per test."""

from __future__ import annotations

import dataclasses
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from countersign import accounts, settings as settings_mod
from countersign.core.ids import new_id
from countersign.local_server import build_local
from countersign.runtime import Runtime, build
from tests.support.live import LiveServer
from tests.support.sample_toolset import TOOLSET, seed_notes


@pytest.fixture
def anyio_backend():
    return "asyncio"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/mcp/" in str(item.fspath):
            item.add_marker(pytest.mark.mcp)


@pytest.fixture(scope="session")
def live(tmp_path_factory):
    data = tmp_path_factory.mktemp("mcp-live")
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(data)})
    runtime = build(settings, toolsets=[TOOLSET])
    app, _ = build_local(settings, runtime=runtime)
    server = LiveServer(app).start()
    runtime.desk.settings = dataclasses.replace(settings, public_url=server.origin)
    yield runtime, server
    server.stop()


@dataclass
class Tenant:
    runtime: Runtime
    url: str
    workspace_id: str
    person: object
    token: str
    connection_id: str
    notes: list[str]

    def client(self, **kwargs):
        return mcp_client(self.url, self.token, **kwargs)

    def note(self, note_id: str) -> dict:
        return self.runtime.store.get_doc(self.workspace_id, "note", note_id).data


@pytest.fixture
def tenant(live) -> Tenant:
    runtime, server = live
    store = runtime.store
    workspace, person = accounts.create_workspace(store, "Acme", f"{new_id('u')}@example.com")
    new = accounts.create_connection(store, workspace.id, person.id, "Test agent")
    notes = seed_notes(store, workspace.id)
    return Tenant(runtime, f"{server.origin}/mcp", workspace.id, person, new.token, new.connection.id, notes)


@pytest.fixture
def configure(live):
    """Change process settings for one test (e.g. fallback="code"); restored afterwards."""
    runtime, _ = live
    original = runtime.desk.settings

    def apply(**changes):
        runtime.desk.settings = dataclasses.replace(runtime.desk.settings, **changes)

    yield apply
    runtime.desk.settings = original


@asynccontextmanager
async def mcp_client(url: str, token: str, *, mode: str = "auto", answer=None, record=None):
    """A real ``mcp.Client`` over HTTP. ``answer`` is an ElicitResult (or a function of the params)
    the client gives to every form question; ``record`` collects the questions it was asked."""

    async def on_elicit(context, params):
        if record is not None:
            record.append(params)
        result = answer(params) if callable(answer) else answer
        return result

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode,
                          elicitation_callback=on_elicit if answer is not None else None) as client:
            yield client


def accept(ticked: bool = True):
    return types.ElicitResult(action="accept", content={"confirm": ticked})


DECLINE = types.ElicitResult(action="decline")
CANCEL = types.ElicitResult(action="cancel")
