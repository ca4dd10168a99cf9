"""Where a call's store and toolset work runs: in a worker thread, or on the event loop.

A server that serves many calls at once on one event loop (the local server) runs that work in a
worker thread, so a call waiting on the disk (a commit's fsync) or on the network (DynamoDB, an
SMTP server) never holds up the calls beside it. A Lambda instance serves one request at a time:
nobody waits on its loop, so the hop buys nothing, and its work runs on the loop. Which of the two
a process is, is an explicit value chosen where the process is assembled (:class:`Offload`:
:data:`IN_THREADS` for the local server, :data:`ONE_AT_A_TIME` for a Lambda instance), held by the
gate's desk and handed to each layer in front of the tools.

The hop is not free where many calls share the loop: the loop and the worker then trade the GIL
at every SQLite statement, which halved the local server's read throughput at 8 concurrent
agents (``bench/mcp_calls.py``). And for work shorter than the interpreter's switch interval
(5 ms) a thread shares nothing: such work runs to its end before the loop gets the GIL back
either way. So a *read* (which writes nothing and sends nothing) runs on the loop once its last
:data:`PROVEN_AFTER` runs each took less than :data:`LIGHT_SECONDS` (the CPU time of a run in a
worker thread, the wall time of a run on the loop unless the machine paused it: :class:`LightRuns`),
and in a worker thread
otherwise — every read until it has proven itself, and after any run on the loop that took
longer until it has proven itself again, over twice as many runs each time that happens
(:meth:`Offload.read_work`). A read proves itself per workspace: light for a small budget is not light
for a big one. A slow read therefore keeps its share of the interpreter as before; the cost is
that the first slow run on the loop of a read that had proven light (a far larger page, a cold
disk, a wait its CPU time did not show) holds the loop for its own length, once each time.
Writes always hop (:meth:`Offload.off_the_loop`): a commit waits on the disk (and, on SQLite, for the
write lock another writer holds), and filing a card may send its email inline. So do the writes
of the layers in front of the tools: a request limit's count, the record of a connection's last
use, the OAuth authorization server's codes and tokens. A Lambda instance's layers are handed
:data:`ONE_AT_A_TIME`, so there those stay on the loop too.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

try:
    from resource import RUSAGE_THREAD, getrusage

    PER_THREAD: int | None = RUSAGE_THREAD
except ImportError:  # no per-thread count of waits here (not Linux): a run on the loop is judged by its wall time
    PER_THREAD = None

T = TypeVar("T")

LIGHT_SECONDS = 0.002
PROVEN_AFTER = 8
MOST_WARY = 7  # a read that keeps holding the loop is tried there once in 8 × 2**7 = 1,024 runs
WAIT_SECONDS = 0.05  # a run in a thread this long waited on more than the interpreter lock

class LightRuns:
    """Which kinds of read have proven light (shared by every request of the process; a lost
    update between threads only delays or hastens one decision).

    What a run costs is measured where it ran. On the loop, its wall time: how long the loop was
    held, whatever for, with one exception: a run that computed for less than the threshold and
    never stopped of its own accord (:func:`own_waits`: no disk, lock, socket or sleep) yet took
    longer was paused by the machine (another process, the hypervisor), which would have paused the
    loop wherever the read ran. Such a run, up to :data:`WAIT_SECONDS`, counts as light: on a busy
    machine a quarter of a light read's runs on the loop were paused past 2 ms with 0.2 ms of work,
    and each sent the read back to threads for twice as long as before. In a worker thread, the
    thread's CPU time: its wall time there also counts the waits for the interpreter lock while the
    loop and other workers run, which grow with the load, so under load a light read would never
    prove itself again; a run there that took longer than :data:`WAIT_SECONDS` all the same waited
    on something else (a stalled disk, a network call, a lock) and is not light. Shorter waits the
    CPU time leaves out, so a read that waits briefly but computes little proves light in a thread
    and holds the loop for its wait on its first run there: each time that happens it must prove
    itself twice as long (8, 16, 32… light runs, up to :data:`MOST_WARY` doublings), and each
    further :data:`PROVEN_AFTER` light runs on the loop halve that again."""

    def __init__(self, light_seconds: float = LIGHT_SECONDS, proven_after: int = PROVEN_AFTER,
                 most_wary: int = MOST_WARY, wait_seconds: float = WAIT_SECONDS):
        self.light_seconds, self.proven_after, self.most_wary = light_seconds, proven_after, most_wary
        self.wait_seconds = wait_seconds
        self._streak: dict[str, int] = {}
        self._wary: dict[str, int] = {}  # how many times over the streak needed has doubled

    def needed(self, key: str) -> int:
        """How many light runs in a row ``key`` needs before it runs on the loop."""
        return self.proven_after << self._wary.get(key, 0)

    def proven(self, key: str) -> bool:
        return self._streak.get(key, 0) >= self.needed(key)

    def record(self, key: str, light: bool, on_loop: bool) -> None:
        if not light:
            self._streak[key] = 0
            if on_loop:  # it held the loop: trusted again only after a longer streak
                self._wary[key] = min(self._wary.get(key, 0) + 1, self.most_wary)
            return
        streak = self._streak.get(key, 0) + 1
        wary = self._wary.get(key, 0)
        if on_loop and wary and streak >= self.needed(key) + self.proven_after:
            self._wary[key] = wary - 1  # light on the loop for a while: a little less wary
            streak = self.needed(key)
        self._streak[key] = min(streak, self.needed(key) + self.proven_after)

    def timed(self, key: str, fn: Callable[[], T], on_loop: bool) -> Callable[[], T]:
        def run() -> T:
            waits = own_waits() if on_loop else None
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return fn()
            finally:
                wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
                computed_little = cpu < self.light_seconds and wall < self.wait_seconds
                if on_loop:
                    paused = waits is not None and computed_little and own_waits() == waits
                    light = wall < self.light_seconds or paused
                else:
                    light = computed_little
                self.record(key, light, on_loop)
        return run


def own_waits() -> int | None:
    """How many times the running thread has stopped of its own accord (for a disk, a lock, a
    socket, a sleep: its voluntary context switches), or None where that is not counted."""
    return None if PER_THREAD is None else getrusage(PER_THREAD).ru_nvcsw


LIGHT_RUNS = LightRuns()


@dataclass(frozen=True)
class Offload:
    """Where this process runs a call's store and toolset work. ``one_at_a_time``: nothing else
    shares this event loop (a Lambda instance), so the work runs on it; otherwise writes run in a
    worker thread and reads once they have proven light on ``runs`` (see the module docstring)."""

    one_at_a_time: bool = False
    runs: LightRuns = LIGHT_RUNS

    async def off_the_loop(self, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)``: in a worker thread, or on the loop when served one request at a time."""
        if self.one_at_a_time:
            return fn(*args)
        return await _in_a_thread(fn, *args)

    async def read_work(self, key: str, fn: Callable[[], T]) -> T:
        """``fn()``, a read's work (``key`` names the read): on the loop when served one request at
        a time or once ``key`` has proven light, else in a worker thread; timed wherever it runs.
        On the loop it runs in a copy of the context, as in a thread: nothing it sets leaks into
        the caller."""
        if self.one_at_a_time:
            return fn()
        if self.runs.proven(key):
            return contextvars.copy_context().run(self.runs.timed(key, fn, on_loop=True))
        return await _in_a_thread(self.runs.timed(key, fn, on_loop=False))


async def _in_a_thread(fn: Callable[..., T], *args: object) -> T:
    # anyio loads here, not with the module: the notifier's and the sweeper's Lambda bundles ship
    # without it (they serve one event at a time and never hop), yet import the desk that holds this.
    import anyio.to_thread

    return await anyio.to_thread.run_sync(fn, *args)


IN_THREADS = Offload()  # a server whose event loop serves many calls at once (the local server)
ONE_AT_A_TIME = Offload(one_at_a_time=True)  # a Lambda instance: one request at a time
