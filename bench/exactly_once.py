"""Exactly once under load, through kill -9: prints the counts of tests/crash/load.py.

    .venv/bin/python bench/exactly_once.py [AGENTS] [ROUNDS] [KILLS]     (defaults: 32 6 4)

Agents are real MCP clients; two people answer on the confirm API; 8 % of requests (and of clicks)
are contested; the server (a real process on SQLite) is killed with SIGKILL KILLS times and
restarted. Every count under "problems" must be 0.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)

from tests.crash.load import Load, run


def main(argv: list[str]) -> int:
    agents, rounds, kills = (int(a) for a in (argv + ["32", "6", "4"][len(argv):])[:3])
    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        counts = run(Path(tmp), Load(agents=agents, rounds=rounds, kills=kills))
        elapsed = time.monotonic() - started
    print(json.dumps({"seconds": round(elapsed, 1), **counts.as_dict(), "problems": counts.problems()}, indent=2))
    return 1 if counts.problems() else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
