"""Offload bench: what ``countersign.gate.offload`` measures of a read's run in a worker thread,
on a quiet interpreter and on one whose other threads want the interpreter lock.

    .venv/bin/python bench/offload.py [RUNS] [LOADERS]        (defaults: 50 4)

A read proves light (and then runs on the event loop) by runs in a worker thread that each took
less than ``LIGHT_SECONDS`` of the thread's CPU time and less than ``WAIT_SECONDS`` of wall time
(:class:`~countersign.gate.offload.LightRuns`). Four kinds of work run RUNS times each in a worker
thread (as :meth:`~countersign.gate.offload.Offload.read_work` runs them), first quiet, then beside LOADERS
threads computing in Python: nothing much (a read of a few rows' worth), a 3 ms wait (a disk, a
lock), 3 ms of computing, a 60 ms wait (a stalled disk). For each: the median wall and CPU time,
how many runs the product's own LightRuns judged light, and wall and CPU under load ÷ the same
work quiet (the baseline, measured in the same run). Under load the wall time grows with the
waits for the lock while the CPU time stays: which is why a run in a thread is judged by its CPU
time. ``tests/mcp/test_offload.py`` checks the decisions on given costs. It prints; it asserts
nothing.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections.abc import Callable

import anyio
import anyio.to_thread
import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)

from countersign.gate.offload import LIGHT_SECONDS, WAIT_SECONDS, LightRuns


def _waits(seconds: float) -> Callable[[], None]:
    return lambda: time.sleep(seconds)


def _computes(seconds: float) -> Callable[[], None]:
    def run() -> None:
        until = time.thread_time() + seconds
        while time.thread_time() < until:
            pass
    return run


WORK: dict[str, Callable[[], object]] = {
    "nothing much": lambda: sum(range(2_000)),
    "waits 3 ms": _waits(0.003),
    "computes 3 ms": _computes(0.003),
    "waits 60 ms (stalls)": _waits(0.060),
}


async def _runs(work: Callable[[], object], runs: int) -> tuple[list[float], list[float], int]:
    """(wall ms, CPU ms, runs judged light) of ``runs`` runs in a worker thread."""
    walls, cpus, light = [], [], 0
    judge = LightRuns(proven_after=1)  # proven after a run exactly when that run was light

    def measured() -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        work()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.thread_time() - cpu) * 1000)

    for _ in range(runs):
        await anyio.to_thread.run_sync(judge.timed("work", measured, on_loop=False))
        light += judge.proven("work")
    return walls, cpus, light


def _load(loaders: int, stop: threading.Event) -> list[threading.Thread]:
    def busy() -> None:
        while not stop.is_set():
            sum(range(1_000))
    threads = [threading.Thread(target=busy, daemon=True) for _ in range(loaders)]
    for thread in threads:
        thread.start()
    return threads


async def measure(runs: int, loaders: int) -> dict[tuple[str, int], tuple[list[float], list[float], int]]:
    found = {}
    for load in (0, loaders):
        stop = threading.Event()
        threads = _load(load, stop)
        try:
            for name, work in WORK.items():
                found[(name, load)] = await _runs(work, runs)
        finally:
            stop.set()
            for thread in threads:
                thread.join()
    return found


def main(argv: list[str]) -> int:
    runs, loaders = (int(a) for a in (argv + ["50", "4"][len(argv):])[:2])
    found = anyio.run(measure, runs, loaders)
    print(f"a read's work in a worker thread, {runs} runs each; light: CPU < {LIGHT_SECONDS * 1000:g} ms "
          f"and wall < {WAIT_SECONDS * 1000:g} ms")
    print(f"{'work':<22}{'load':>5}{'wall ms':>9}{'CPU ms':>8}{'light':>8}   wall ÷ quiet   CPU ÷ quiet")
    for name in WORK:
        quiet_wall, quiet_cpu, _ = found[(name, 0)]
        for load in (0, loaders):
            walls, cpus, light = found[(name, load)]
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            print(f"{name:<22}{load:>5}{wall:>9.2f}{cpu:>8.2f}{f'{light}/{runs}':>8}   "
                  f"{wall / statistics.median(quiet_wall):>11.2f}x   "
                  f"{cpu / max(statistics.median(quiet_cpu), 1e-6):>10.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
