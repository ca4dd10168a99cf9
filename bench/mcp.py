"""MCP latency benchmark: prints a table, asserts nothing.

In one run it measures, with the real Python MCP client, the median latency of
  - a read tool call,
  - a held call that returns a card,
  - a 2026-07-28 round trip (ask + answer, applied),
through the plain ASGI app in process (the stateless Lambda shape, no Mangum) and through the
Mangum handler fed API Gateway v2 events, then prints the ratio held/read and the per-request
overhead of the Lambda wiring over the plain ASGI app.

Then, in process over HTTP (the stateless app under httpx's ASGI transport, one event loop):

  - **head-of-line**: ``list_confirmations`` alone, and while 8 heavy budget reads
    (``list_categories`` on a 50,000-transaction ledger) run beside it, against the heavy read
    alone; store and toolset work runs in worker threads, so the light call waits for its own
    share of the CPU, not for the whole queue;
  - **throughput and p50/p99** of a light read at N = 1, 8 and 32 concurrent agents, against a
    bare ``mcp`` SDK server with one trivial tool on the same transport, measured in the same run.

    .venv/bin/python bench/mcp.py [--n 40] [--ledger 50000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# This file is named mcp.py: keep its folder off sys.path so `import mcp` finds the SDK.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path[:0] = [str(ROOT), str(ROOT / "functions")]

import httpx2  # noqa: E402

from countersign import accounts, settings as settings_mod  # noqa: E402
from countersign.runtime import build  # noqa: E402
from countersign.surfaces.mcp_http import StatelessMCP, lambda_handler  # noqa: E402
from countersign.surfaces.mcp_tools import build_server  # noqa: E402
from tests.support.apigw import LambdaInstance, LambdaTransport  # noqa: E402
from tests.support.harness import accept, mcp_client  # noqa: E402
from tests.support.sample_toolset import TOOLSET, seed_notes  # noqa: E402


def _runtime(data: Path):
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(data), "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com"})
    runtime = build(settings, toolsets=[TOOLSET], on_filed=lambda card: None)
    workspace, person = accounts.create_workspace(runtime.store, "Bench", f"bench-{time.time_ns()}@example.com")
    token = accounts.create_connection(runtime.store, workspace.id, person.id, "bench").token
    seed_notes(runtime.store, workspace.id, count=2)
    return runtime, token


async def _measure(transport, token: str, n: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"read": [], "held → card": [], "2026 ask + answer": []}
    async with mcp_client("https://confirm.example.com/mcp", token, transport=transport) as plain, \
            mcp_client("https://confirm.example.com/mcp", token, answer=accept(), transport=transport) as asking:
        for i in range(n + 3):  # three warm-up rounds are discarded
            t0 = time.perf_counter()
            await plain.call_tool("list_notes", {})
            t1 = time.perf_counter()
            held = await plain.call_tool("publish_note", {"note_id": "n1", "text": f"held {i}"})
            t2 = time.perf_counter()
            applied = await asking.call_tool("edit_note", {"note_id": "n2", "text": f"applied {i}"})
            t3 = time.perf_counter()
            assert held.structured_content["status"] == "pending"
            assert applied.structured_content["status"] == "completed"
            if i >= 3:
                times["read"].append(t1 - t0)
                times["held → card"].append(t2 - t1)
                times["2026 ask + answer"].append(t3 - t2)
    return {k: statistics.median(v) * 1000 for k, v in times.items()}


async def _head_of_line(transport, token: str, rounds: int = 5, heavy_call=None) -> dict[str, float]:
    """``heavy_call(client, i)``: the heavy call (default: list_categories, CPU in Python)."""
    async def default(c, i):
        await c.call_tool("list_categories", {})
    heavy_call = heavy_call or default
    light: list[float] = []
    heavy: list[float] = []
    behind: list[float] = []
    url = "https://confirm.example.com/mcp"
    async with mcp_client(url, token, transport=transport) as agent:
        await agent.list_tools()
        for _ in range(rounds + 1):
            t0 = time.perf_counter()
            await agent.call_tool("list_confirmations", {})
            light.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await heavy_call(agent, len(heavy))
            heavy.append(time.perf_counter() - t0)
        stack = contextlib.AsyncExitStack()
        opened = [await stack.enter_async_context(mcp_client(url, token, transport=transport)) for _ in range(8)]
        for r in range(rounds):
            async def one(c, i, r=r):
                await heavy_call(c, 1000 + r * 10 + i)

            async def light_one():
                t0 = time.perf_counter()  # from the moment the agent wants it, waiting for the loop included
                await asyncio.sleep(0.001)  # the heavy reads are under way
                await agent.call_tool("list_confirmations", {})
                behind.append(time.perf_counter() - t0 - 0.001)
            await asyncio.gather(*(one(c, i) for i, c in enumerate(opened)), light_one())
        await stack.aclose()
    return {"light alone": statistics.median(light[1:]) * 1000, "heavy read alone": statistics.median(heavy[1:]) * 1000,
            "light behind 8 heavy": statistics.median(behind) * 1000}


@contextlib.contextmanager
def _on_the_loop():
    """Run what the server hands to worker threads on the event loop instead (the old way)."""
    import anyio.to_thread

    original = anyio.to_thread.run_sync

    async def inline(fn, *args, **_):
        return fn(*args)

    anyio.to_thread.run_sync = inline
    try:
        yield
    finally:
        anyio.to_thread.run_sync = original


class _Bare:
    """A bare ``mcp`` SDK server with one trivial tool, in the same stateless shape as ours (a
    fresh session manager per request inside the SDK's lifespan), no auth, no store."""

    def __init__(self):
        from mcp.server.mcpserver import MCPServer

        self.server = MCPServer("bare")

        @self.server.tool()
        def ping() -> dict:
            return {"ok": True}

    async def __call__(self, scope, receive, send):
        from mcp.server.transport_security import TransportSecuritySettings

        app = self.server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        async with app.router.lifespan_context(app):
            await app(scope, receive, send)


async def _throughput(transport, token: str, tool: str, agents: int, calls: int) -> tuple[float, float, float]:
    """(calls per second, p50 ms, p99 ms) of ``agents`` concurrent clients making ``calls`` calls each."""
    times: list[float] = []
    url = "https://confirm.example.com/mcp"
    stack = contextlib.AsyncExitStack()
    opened = [await stack.enter_async_context(mcp_client(url, token, transport=transport)) for _ in range(agents)]
    for c in opened:
        await c.list_tools()

    async def agent(c):
        for _ in range(calls):
            t0 = time.perf_counter()
            await c.call_tool(tool, {})
            times.append(time.perf_counter() - t0)
    started = time.perf_counter()
    await asyncio.gather(*(agent(c) for c in opened))
    took = time.perf_counter() - started
    await stack.aclose()
    times.sort()
    return agents * calls / took, times[len(times) // 2] * 1000, times[int(len(times) * 0.99) - 1] * 1000


def _budget_runtime(data: Path, size: int):
    sys.path.insert(0, str(ROOT / "bench"))
    import ledger as ledger_bench  # bench/ledger.py: a ledger of ``size`` transactions

    from countersign.toolsets.budget import TOOLSET as BUDGET

    settings = settings_mod.load({"COUNTERSIGN_DATA": str(data), "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com"})
    runtime = build(settings, toolsets=[BUDGET], on_filed=lambda card: None)
    ctx, _ = ledger_bench.fill(runtime.store, size)
    token = accounts.create_connection(runtime.store, ctx.workspace.id, ctx.person.id, "bench").token
    return runtime, token


def concurrency(size: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runtime, token = _budget_runtime(Path(tmp), size)
        app = StatelessMCP(build_server(runtime.desk, runtime.state_keys), runtime.store)
        runs: dict[str, list[dict[str, float]]] = {"threads": [], "loop": []}
        for _ in range(3):  # A/B interleaved; medians
            runs["threads"].append(asyncio.run(_head_of_line(httpx2.ASGITransport(app=app), token)))
            with _on_the_loop():  # the baseline: the same work run on the event loop, as before issue 13
                runs["loop"].append(asyncio.run(_head_of_line(httpx2.ASGITransport(app=app), token)))
        hol, before = ({k: statistics.median(r[k] for r in runs[mode]) for k in runs[mode][0]}
                       for mode in ("threads", "loop"))
        print(f"\nhead-of-line, in process over HTTP, budget ledger of {size} transactions (median ms)")
        print(f"  {'':<24}{'worker threads':>15}{'on the loop':>13}")
        for key, ms in hol.items():
            print(f"  {key:<24}{ms:15.2f}{before[key]:13.2f}")
        for label, h in (("worker threads", hol), ("on the loop", before)):
            print(f"  {label}: light behind 8 heavy / (light alone + heavy alone) = "
                  f"{h['light behind 8 heavy'] / (h['light alone'] + h['heavy read alone']):.2f}x")
        print("  (1.0: the light call waited for one heavy read's share; 8+: for the whole queue. Under the GIL\n"
              "   a worker thread spares the loop only work that waits (I/O), not Python work that computes.)")

    with tempfile.TemporaryDirectory() as tmp:
        runtime, token = _runtime(Path(tmp))
        ours = httpx2.ASGITransport(app=StatelessMCP(build_server(runtime.desk, runtime.state_keys), runtime.store))
        bare = httpx2.ASGITransport(app=_Bare())
        print("\nthroughput of a light read, in process over HTTP: countersign list_notes vs a bare MCP SDK server")
        print(f"{'agents':>7}{'ours calls/s':>14}{'bare calls/s':>14}{'ratio':>7}{'ours p50/p99':>16}"
              f"{'bare p50/p99':>16}")
        for agents in (1, 8, 32):
            calls = max(10, 160 // agents)
            rounds = [(asyncio.run(_throughput(ours, token, "list_notes", agents, calls)),
                       asyncio.run(_throughput(bare, token, "ping", agents, calls))) for _ in range(3)]
            o, b = (tuple(statistics.median(r[side][k] for r in rounds) for k in range(3)) for side in (0, 1))
            print(f"{agents:>7}{o[0]:>14.0f}{b[0]:>14.0f}{o[0] / b[0]:>7.2f}{o[1]:>8.1f}/{o[2]:<7.1f}"
                  f"{b[1]:>8.1f}/{b[2]:<7.1f}")


def main() -> None:
    logging.disable(logging.INFO)  # per-request INFO lines would dominate what is measured
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--ledger", type=int, default=50_000)
    options = parser.parse_args()
    n = options.n
    with tempfile.TemporaryDirectory() as tmp:
        runtime, token = _runtime(Path(tmp))
        server = build_server(runtime.desk, runtime.state_keys)
        asgi = httpx2.ASGITransport(app=StatelessMCP(server, runtime.store))
        plain = asyncio.run(_measure(asgi, token, n))
        instance = LambdaInstance(lambda_handler(build_server(runtime.desk, runtime.state_keys), runtime.store))
        lam = asyncio.run(_measure(LambdaTransport([instance]), token, n))
        instance.close()

    print(f"MCP latency, median of {n} calls (ms), SQLite store, real Python client")
    print(f"{'call':<22}{'ASGI in process':>18}{'Mangum handler':>18}{'Lambda overhead':>18}")
    for key in plain:
        print(f"{key:<22}{plain[key]:>18.2f}{lam[key]:>18.2f}{lam[key] - plain[key]:>+18.2f}")
    print()
    print(f"ratio held/read: in process {plain['held → card'] / plain['read']:.2f}x, "
          f"through Mangum {lam['held → card'] / lam['read']:.2f}x")
    print(f"Lambda wiring overhead per request (read): {lam['read'] - plain['read']:+.2f} ms "
          f"({lam['read'] / plain['read']:.2f}x the plain ASGI app)")
    concurrency(options.ledger)


if __name__ == "__main__":
    main()
