"""Sign-in bench: how long a request that follows a sign-in request on the same connection takes,
after a member's address and after a stranger's (``POST /api/signin/request``, docs/security.md).

    .venv/bin/python bench/signin.py [ROUNDS]        (default 200)

A local API (uvicorn, loopback) on a fresh SQLite data folder with one member. Each round asks
for a link (the answer comes first; the lookup, the token and the email run after it, padded to
a floor of 20 ms here), then times ``GET /api/session`` on the same connection, which runs while
that work does. Member and stranger rounds alternate, so the stranger's rounds are the baseline
measured in the same run under the same load. The product's claim (the same path either way, only
a member's email handed to the sender) shows as member ÷ stranger near 1.00x; before it, the
member's email work made the follow-up about 3x slower. ``tests/api/test_signin_timing.py``
checks the path itself. It prints; it asserts nothing.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)
import httpx2

from countersign import settings as settings_mod
from countersign.identity import accounts
from countersign.runtime import build
from countersign.surfaces.api.app import create_api
from tests.support.live import LiveServer

FLOOR = 0.02  # the padding after the work, as tests/api/test_signin_timing.py pads it
WINDOW = 15 * 60  # a fresh rate-limit window each round (the limits allow 5 a window per address)


def measure(rounds: int) -> dict[str, list[float]]:
    follow_up: dict[str, list[float]] = {"member": [], "stranger": []}
    with tempfile.TemporaryDirectory() as tmp:
        runtime = build(settings_mod.load({"COUNTERSIGN_DATA": tmp}))
        _, person = accounts.create_workspace(runtime.store.workspaces, "Bench", "member@example.com")
        now = [runtime.desk.now()]
        runtime.desk.clock = lambda: now[0]
        server = LiveServer(create_api(runtime, signin_floor=FLOOR), lifespan="off").start()
        try:
            with httpx2.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=10,
                               headers={"Origin": runtime.desk.settings.public_url}) as http:
                http.get("/api/session")  # the connection is open before the first round
                for i in range(2 * rounds):
                    kind, address = ("member", person.email) if i % 2 else ("stranger", "nobody@example.com")
                    now[0] += WINDOW
                    assert http.post("/api/signin/request", json={"email": address}).status_code == 202
                    started = time.perf_counter()
                    assert http.get("/api/session").status_code == 401
                    follow_up[kind].append((time.perf_counter() - started) * 1000)
                    time.sleep(FLOOR + 0.03)  # the work and its padding are over before the next round
        finally:
            server.stop()
            runtime.store.close()
    return follow_up


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else 200
    follow_up = measure(rounds)
    print(f"a request after POST /api/signin/request on the same connection, {rounds} rounds each (ms)")
    for kind in ("stranger", "member"):
        times, label = sorted(follow_up[kind]), f"after a {kind}'s address"
        print(f"{label:<28} median {statistics.median(times):7.2f}   "
              f"p90 {times[int(0.9 * (len(times) - 1))]:7.2f}")
    ratio = statistics.median(follow_up["member"]) / statistics.median(follow_up["stranger"])
    print(f"member ÷ stranger (median)  {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
