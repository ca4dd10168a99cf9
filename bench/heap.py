"""Heap bench: what a full garbage collection costs once a server has started, with its start-up
heap frozen as the product leaves it (``countersign.platform.heap``), against the same heap unfrozen,
measured in the same process, one after the other.

    .venv/bin/python bench/heap.py [RUNS]        (default 3)

For each of the local server (``countersign serve``'s own ``serve``, with the demo data, after
five agents' sessions and 200 reads over HTTP, so what requests add is counted too) and the four
Lambda functions (their handler module
imported in a fresh interpreter with a deployed function's environment, as ``bench/coldstart.py``
sets it, from this checkout's source), a child process reports how many objects the collector
tracks and how long a full collection takes (median of 5), then thaws the frozen heap
(``gc.unfreeze``) and measures again: the second figure is what every full collection would walk
without the freeze, on the event loop of the local server or inside a Lambda request. The
median over RUNS children is shown; ratio = frozen ÷ thawed. It asserts nothing.

For the Lambda functions the figures are at the end of the import (no store to serve requests
from here): what requests add after it (the MCP function's tools, built on first use, for one) is
not frozen and is walked as before.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import bench_paths  # noqa: E402, F401  (the project first on sys.path, bench/ last)
from coldstart import function_env  # noqa: E402
from mcp_servers import free_port  # noqa: E402

CHILD = r"""
import gc, json, os, statistics, sys, time

def report():
    def pause():
        t = time.perf_counter(); gc.collect(); return (time.perf_counter() - t) * 1000
    frozen, tracked = gc.get_freeze_count(), len(gc.get_objects())
    served = statistics.median(pause() for _ in range(5))
    gc.unfreeze()
    thawed, walked = len(gc.get_objects()), statistics.median(pause() for _ in range(5))
    print(json.dumps({"frozen": frozen, "tracked": tracked, "ms": served, "thawed": thawed, "thawed_ms": walked}),
          flush=True)
    os._exit(0)

def agent(url, token, calls):
    # an agent's session (initialize, tools/list) and ``calls`` reads, as raw JSON-RPC posts: not the
    # SDK client (tests/support/harness.py), whose own objects, made after the freeze, would be counted
    # as the server's in this process
    import httpx2 as httpx
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=headers, timeout=30) as http:
        def post(method, params=None, id=1):
            body = {"jsonrpc": "2.0", "method": method, "params": params or {}, **({"id": id} if id else {})}
            return http.post(url, json=body)
        first = post("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        http.headers["mcp-session-id"] = first.headers["mcp-session-id"]
        post("notifications/initialized", id=None)
        post("tools/list", id=2)
        for i in range(calls):
            tool = ("list_accounts", "get_month", "list_transactions", "get_credits", "list_contacts")[i % 5]
            assert post("tools/call", {"name": tool, "arguments": {}}, id=3 + i).status_code == 200

target = sys.argv[1]
if target == "local":
    import threading
    from countersign import settings
    from countersign.surfaces.local.app import build_local
    from countersign.surfaces.local.run import serve
    app, demo = build_local(settings.load({"COUNTERSIGN_DATA": sys.argv[2]}), demo=True)
    url = f"http://127.0.0.1:{sys.argv[3]}/mcp"

    def served():  # while the server runs on: five agents' sessions and 200 reads, then the report
        for _ in range(5):
            agent(url, demo["agent_token"], 40)
        report()
    serve(app, "127.0.0.1", int(sys.argv[3]), on_listening=lambda: threading.Thread(target=served).start(),
          log_level="warning")
else:
    import importlib
    importlib.import_module(target)
    report()
"""

TARGETS = [
    ("local server (countersign serve)", "local"),
    ("api  countersign.handlers.api", "countersign.handlers.api"),
    ("mcp  countersign.handlers.mcp", "countersign.handlers.mcp"),
    ("notifier  countersign.handlers.notifier", "countersign.handlers.notifier"),
    ("sweeper  countersign.handlers.sweeper", "countersign.handlers.sweeper"),
]


def child(target: str, tmp: Path, n: int) -> dict:
    if target == "local":
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "functions")}
        args = [target, str(tmp / f"local{n}"), str(free_port())]
    else:
        env, args = function_env(ROOT / "functions", tmp / f"data{n}", precompiled=True), [target]
    done = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp)
    if done.returncode != 0:
        raise SystemExit(f"{target} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(runs: int) -> None:
    print(f"a full garbage collection once started: frozen as served vs thawed, median of {runs} processes")
    print(f"{'process':44}{'frozen':>9}{'walked':>9}{'ms':>8}{'thawed walks':>14}{'ms':>8}{'ratio':>8}")
    print("(frozen: objects no collection walks; walked: those a full collection walks, and its ms)")
    with tempfile.TemporaryDirectory() as tmp:
        for label, target in TARGETS:
            rows = [child(target, Path(tmp), n) for n in range(runs)]
            m = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            print(f"{label:44}{m['frozen']:>9.0f}{m['tracked']:>9.0f}{m['ms']:>8.2f}{m['thawed']:>14.0f}"
                  f"{m['thawed_ms']:>8.2f}{m['ms'] / m['thawed_ms']:>7.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
