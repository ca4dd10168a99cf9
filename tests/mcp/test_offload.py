"""Where a call's store and toolset work runs (countersign.gate.offload): in a worker thread where
one event loop serves many calls (the local server, any ASGI server), on the loop in a Lambda
instance, which serves one request at a time. The answers are the same either way."""

from __future__ import annotations

import tempfile
import threading

import httpx2
import pytest

from countersign import accounts, settings as settings_mod
from countersign.gate.actions import Read, Toolset
from countersign.gate.offload import off_the_loop, one_at_a_time
from countersign.runtime import build
from countersign.surfaces.mcp_http import StatelessMCP, lambda_handler
from countersign.surfaces.mcp_tools import build_server
from tests.support.apigw import LambdaInstance, LambdaTransport
from tests.support.harness import mcp_client

pytestmark = pytest.mark.anyio

URL = "https://confirm.example.com/mcp"


class WhichThread(Read):
    name = "which_thread"
    description = "Names the thread the read runs in."

    def __init__(self):
        self.threads: list[threading.Thread] = []

    def run(self, args, ctx) -> dict:
        self.threads.append(threading.current_thread())
        return {"workspace": ctx.workspace_id}


async def test_off_the_loop_hops_unless_one_request_at_a_time():
    loop_thread = threading.current_thread()
    assert await off_the_loop(threading.current_thread) is not loop_thread
    with one_at_a_time():
        assert await off_the_loop(threading.current_thread) is loop_thread
    assert await off_the_loop(threading.current_thread) is not loop_thread


async def test_a_lambda_instance_runs_the_work_on_its_loop_and_answers_the_same():
    read = WhichThread()
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_mod.load({"COUNTERSIGN_DATA": tmp, "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com"})
        runtime = build(settings, toolsets=[Toolset(name="probe", reads=[read])])
        workspace, person = accounts.create_workspace(runtime.store, "Probe", "probe@example.com")
        token = accounts.create_connection(runtime.store, workspace.id, person.id, "probe").token
        server = build_server(runtime.desk, runtime.state_keys)

        async with mcp_client(URL, token, transport=httpx2.ASGITransport(app=StatelessMCP(server, runtime.store))) as c:
            in_process = await c.call_tool("which_thread", {})
        instance = LambdaInstance(lambda_handler(server, runtime.store))
        try:
            async with mcp_client(URL, token, transport=LambdaTransport([instance])) as c:
                on_lambda = await c.call_tool("which_thread", {})
        finally:
            instance.close()
        runtime.store.close()
    assert in_process.structured_content == on_lambda.structured_content == {"workspace": workspace.id}
    served_here, on_the_instance = read.threads
    assert served_here is not threading.current_thread() and served_here.name == "AnyIO worker thread"
    # the instance's own thread, whose event loop Mangum runs: no hop to a worker thread
    assert on_the_instance.name.startswith("ThreadPoolExecutor")
