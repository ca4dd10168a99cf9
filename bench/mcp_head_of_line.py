"""Head-of-line blocking, in process over HTTP (run by ``bench/mcp_calls.py``; alone:
``.venv/bin/python bench/mcp_head_of_line.py [LEDGER_SIZE]``).

``list_confirmations`` alone, and while 8 heavy budget reads (``list_categories`` on a ledger of
50,000 transactions) run beside it, against the heavy read alone; A/B interleaved against the same
work run on the event loop (the way before issue 13). Prints; asserts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "functions")]

import httpx2  # noqa: E402

from countersign import accounts, settings as settings_mod  # noqa: E402
from countersign.runtime import build  # noqa: E402
from countersign.surfaces.mcp_http import StatelessMCP  # noqa: E402
from countersign.surfaces.mcp_tools import build_server  # noqa: E402
from tests.support.harness import mcp_client  # noqa: E402


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


if __name__ == "__main__":
    logging.disable(logging.INFO)
    concurrency(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000)
