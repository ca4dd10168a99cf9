"""Where a call's store and toolset work runs: in a worker thread, or on the event loop.

A server that serves many calls at once on one event loop (the local server) runs that work in a
worker thread, so a call waiting on the disk (a commit's fsync) or on the network (DynamoDB, an
SMTP server) never holds up the calls beside it. A Lambda instance serves one request at a time:
nobody waits on its loop, so the hop buys nothing, and its app runs the work on the loop
(:func:`one_at_a_time`).

The hop is not free where many calls share the loop: the loop and the worker then trade the GIL
at every SQLite statement, which halved the local server's read throughput at 8 concurrent
agents (``bench/mcp_calls.py``). And for work shorter than the interpreter's switch interval
(5 ms) a thread shares nothing: such work runs to its end before the loop gets the GIL back
either way. So a *read* (which writes nothing and sends nothing) runs on the loop once its last
:data:`PROVEN_AFTER` runs each took less than :data:`LIGHT_SECONDS` of wall time (measured where
it ran, waits on the disk or network included), and in a worker thread otherwise — every read
until it has proven itself, and the next :data:`PROVEN_AFTER` runs after any that took longer
(:func:`read_work`). A read proves itself per workspace: light for a small budget is not light
for a big one. A slow read therefore keeps its share of the interpreter as before; the
cost is that the first slow run of a read that had been light (a far larger page, a cold disk)
holds the loop for its own length once. Writes always hop (:func:`off_the_loop`): a commit
waits on the disk, and filing a card may send its email inline.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TypeVar

import anyio.to_thread

T = TypeVar("T")

LIGHT_SECONDS = 0.002
PROVEN_AFTER = 8

_ONE_AT_A_TIME: ContextVar[bool] = ContextVar("countersign_one_at_a_time", default=False)


async def off_the_loop(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)``: in a worker thread, or on the loop inside :func:`one_at_a_time`."""
    if _ONE_AT_A_TIME.get():
        return fn(*args)
    return await anyio.to_thread.run_sync(fn, *args)


class LightRuns:
    """How many of each kind of read's latest runs in a row were light (shared by every request
    of the process; a lost update between threads only delays or hastens one decision)."""

    def __init__(self, light_seconds: float = LIGHT_SECONDS, proven_after: int = PROVEN_AFTER):
        self.light_seconds, self.proven_after = light_seconds, proven_after
        self._streak: dict[str, int] = {}

    def proven(self, key: str) -> bool:
        return self._streak.get(key, 0) >= self.proven_after

    def record(self, key: str, seconds: float) -> None:
        if seconds < self.light_seconds:
            self._streak[key] = min(self._streak.get(key, 0) + 1, self.proven_after)
        else:
            self._streak[key] = 0

    def timed(self, key: str, fn: Callable[[], T]) -> Callable[[], T]:
        def run() -> T:
            started = time.perf_counter()
            try:
                return fn()
            finally:
                self.record(key, time.perf_counter() - started)
        return run


LIGHT_RUNS = LightRuns()


async def read_work(key: str, fn: Callable[[], T], runs: LightRuns = LIGHT_RUNS) -> T:
    """``fn()``, a read's work (``key`` names the read): on the loop inside :func:`one_at_a_time`
    or once ``key`` has proven light, else in a worker thread; timed wherever it runs. On the
    loop it runs in a copy of the context, as in a thread: nothing it sets leaks into the caller."""
    if _ONE_AT_A_TIME.get():
        return fn()
    work = runs.timed(key, fn)
    if runs.proven(key):
        return contextvars.copy_context().run(work)
    return await anyio.to_thread.run_sync(work)


@contextlib.contextmanager
def one_at_a_time() -> Iterator[None]:
    """For the request being served (and the tasks it starts): nothing else shares this loop."""
    token = _ONE_AT_A_TIME.set(True)
    try:
        yield
    finally:
        _ONE_AT_A_TIME.reset(token)
