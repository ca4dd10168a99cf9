"""MCP latency benchmark: prints a table, asserts nothing.

In one run it measures, with the real Python MCP client, the median latency of
  - a read tool call,
  - a held call that returns a card,
  - a 2026-07-28 round trip (ask + answer, applied),
through the plain ASGI app in process (the stateless Lambda shape, no Mangum) and through the
Mangum handler fed API Gateway v2 events, then prints the ratio held/read and the per-request
overhead of the Lambda wiring over the plain ASGI app.

    .venv/bin/python bench/mcp.py [--n 40]
"""

from __future__ import annotations

import argparse
import asyncio
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


def main() -> None:
    logging.disable(logging.INFO)  # per-request INFO lines would dominate what is measured
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=40)
    n = parser.parse_args().n
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


if __name__ == "__main__":
    main()
