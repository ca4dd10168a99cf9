"""Head-of-line blocking, in process over HTTP (run by ``bench/mcp_calls.py``; alone:
``.venv/bin/python bench/mcp_head_of_line.py [LEDGER_SIZE]``).

``list_confirmations`` alone, and while 8 other calls run beside it, against each of those alone:

* **budget reads**: ``list_categories`` on a ledger of 50,000 transactions. Since the budget's
  reads stopped loading the whole ledger this is about as long as the light call itself, so the
  fair bound is sharing: 9 calls of about the same size, the light one done after about 9 of its
  own lengths (``light x 9``);
* **a slow report**: a read of a bench-only toolset (``payee_report``) that totals every
  transaction of that ledger by payee, in Python (tens of milliseconds): the slow call the goal
  is about. Fair: the light call done within about one slow call (``light + slow``), not after
  the eight of them (``8 x slow``, first come first served).

Each interleaved: as the server runs it (a read in a worker thread until it proves light,
``countersign.gate.offload``), every read in a worker thread, and all the work on the event loop
(the way before issue 13).
The fair share is the light call's time had the 9 calls shared the interpreter evenly,
``light + 8 x min(light, other)``. Prints; asserts nothing.
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

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)
import httpx2

from countersign import settings as settings_mod
from countersign.identity import accounts
from countersign.runtime import build
from countersign.surfaces.mcp.server import build_server
from countersign.surfaces.mcp.transport import StatelessMCP
from countersign.toolkit import Read, Toolset
from tests.support.harness import mcp_client


class PayeeReport(Read):
    """A bench-only read that is slow because of what it computes: every transaction of the
    ledger, by payee, with each payee's median and quartiles (a toolset's whole-history report).
    Part of it waits on the store (which lets the interpreter go), part is Python that does not."""

    name = "payee_report"
    description = "Spending by payee over the whole ledger."

    def run(self, args, ctx) -> dict:
        amounts: dict[str, list[int]] = {}
        for chunk in ctx.store.list_docs(ctx.workspace_id, "budget_txns"):
            for txn in chunk.data["transactions"]:
                amounts.setdefault(txn["payee"], []).append(txn["amount"])
        report = []
        for payee, spent in amounts.items():
            spent.sort()
            q = statistics.quantiles(spent, n=4) if len(spent) > 1 else [spent[0]] * 3
            report.append({"payee": payee, "total": sum(spent), "quartiles": q})
        report.sort(key=lambda r: r["total"])
        return {"payees": len(report), "most_spent": report[:10]}


REPORT = Toolset(name="report", reads=[PayeeReport()])


async def _head_of_line(transport, token: str, heavy_tool: str, rounds: int) -> dict[str, float]:
    async def heavy_call(c):
        result = await c.call_tool(heavy_tool, {})
        assert not result.is_error, result  # a refusal would be a light call, not a heavy one

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
            await heavy_call(agent)
            heavy.append(time.perf_counter() - t0)
        stack = contextlib.AsyncExitStack()
        opened = [await stack.enter_async_context(mcp_client(url, token, transport=transport)) for _ in range(8)]
        for _ in range(rounds):
            async def light_one():
                t0 = time.perf_counter()  # from the moment the agent wants it, waiting for the loop included
                await asyncio.sleep(0.001)  # the heavy reads are under way
                await agent.call_tool("list_confirmations", {})
                behind.append(time.perf_counter() - t0 - 0.001)
            await asyncio.gather(*(heavy_call(c) for c in opened), light_one())
        await stack.aclose()
    return {"light alone": statistics.median(light[1:]) * 1000, "heavy alone": statistics.median(heavy[1:]) * 1000,
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
    import ledger as ledger_bench  # bench/ledger.py: a ledger of ``size`` transactions

    from countersign.toolsets.budget import TOOLSET as BUDGET

    settings = settings_mod.load({"COUNTERSIGN_DATA": str(data), "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com"})
    runtime = build(settings, toolsets=[BUDGET, REPORT], on_filed=lambda card: None)
    ctx, _ = ledger_bench.fill(runtime.store, size)
    token = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, ctx.workspace.id,
                                       ctx.person.id, "bench").token
    return runtime, token


@contextlib.contextmanager
def _always_a_thread():
    """Every read in a worker thread, however light it has proven (the way before reads could earn the loop)."""
    from countersign.gate import offload

    original = offload.LIGHT_RUNS.proven
    offload.LIGHT_RUNS.proven = lambda key: False  # type: ignore[method-assign]
    try:
        yield
    finally:
        offload.LIGHT_RUNS.proven = original  # type: ignore[method-assign]


MODES = {  # how the server runs a call's store and toolset work
    "as served": contextlib.nullcontext,  # a worker thread until a read proves light (gate/offload.py)
    "always a thread": _always_a_thread,
    "on the loop": _on_the_loop,
}


def concurrency(size: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runtime, token = _budget_runtime(Path(tmp), size)
        app = StatelessMCP(build_server(runtime.desk, runtime.state_keys), runtime.store)
        for heavy_tool, rounds in (("list_categories", 5), ("payee_report", 3)):
            runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
            for _ in range(3):  # A/B interleaved; medians
                for mode, how in MODES.items():
                    with how():
                        transport = httpx2.ASGITransport(app=app)
                        runs[mode].append(asyncio.run(_head_of_line(transport, token, heavy_tool, rounds)))
            got = {mode: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for mode, rs in runs.items()}
            print(f"\nhead-of-line, in process over HTTP, beside 8 {heavy_tool}"
                  f" (ledger of {size} transactions; median ms)")
            print(f"  {'':<24}" + "".join(f"{mode:>16}" for mode in MODES))
            for key in got["as served"]:
                print(f"  {key:<24}" + "".join(f"{got[mode][key]:16.2f}" for mode in MODES))
            print(f"  {'behind ÷ its fair share':<24}" + "".join(f"{_fair_ratio(got[mode]):15.2f}x" for mode in MODES))
            print(f"  {'behind ÷ 8 heavy alone':<24}" + "".join(
                f"{got[mode]['light behind 8 heavy'] / (8 * got[mode]['heavy alone']):15.2f}x" for mode in MODES))
        print("  (fair share: the light call's time had the 9 calls shared the interpreter evenly, light +\n"
              "   8 x min(light, heavy); 1.0 is fair. ÷ 8 heavy alone near 1.0: first come first served.)")


def _fair_ratio(times: dict[str, float]) -> float:
    light, heavy = times["light alone"], times["heavy alone"]
    return times["light behind 8 heavy"] / (light + 8 * min(light, heavy))


if __name__ == "__main__":
    logging.disable(logging.INFO)
    concurrency(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000)
