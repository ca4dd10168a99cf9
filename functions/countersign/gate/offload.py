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
Writes hop (:meth:`Offload.off_the_loop`): a commit waits on the disk (and, on SQLite, for the
write lock another writer holds), and filing a card may send its email inline. So do the writes
of the layers in front of the tools: a request limit's count, the record of a connection's last
use, the OAuth authorization server's codes and tokens. A Lambda instance's layers are handed
:data:`ONE_AT_A_TIME`, so there those stay on the loop too.

One exception, the gate's decision on a call (:meth:`Offload.write_work`): while it is the only
request the process is serving (:class:`Serving`, counted by the local server's outermost layer) and
its kind has proven light as a read does (below the interpreter's switch interval, not 2 ms:
:data:`DECISION_RUNS`), it runs on the loop. Nobody then waits on the loop but a request that
arrives during it, and the hop is not free: the worker's wake-up and the loop's cost 0.4–0.5 ms of a
held call's ~3.5 ms on a 2-core VM (each side waits for an idle CPU to wake), where the run itself
is ~1.5 ms with its commit. A decision that sends an email, waits for the write lock or plans
against a slow upstream is not light, and goes back to threads as a slow read does; as soon as a
second request is in flight every decision hops again, and so does one that finds the store's write
lock taken by another writer when it starts (``lock_free``: on SQLite a ``BEGIN IMMEDIATE`` tried
without waiting), which it would otherwise wait for on the loop. A server that does not count its
requests (``Serving.counted`` false: any ASGI server but the local one) is never alone, so there
writes always hop.
"""

from __future__ import annotations

import contextvars
import functools
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
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
        return self._streak.get(key, 0) >= self.proven_after << self._wary.get(key, 0)  # needed(key), one call less

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
        """``fn`` as a callable that, run, is measured (:meth:`measure`)."""
        return functools.partial(self.measure, key, on_loop, fn)

    def measure(self, key: str, on_loop: bool, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)``, its cost recorded against ``key`` as a run ``on_loop`` or in a worker thread."""
        waits = own_waits() if on_loop else None
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return fn(*args)
        finally:
            wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
            computed_little = cpu < self.light_seconds and wall < self.wait_seconds
            if on_loop:
                paused = waits is not None and computed_little and own_waits() == waits
                light = wall < self.light_seconds or paused
            else:
                light = computed_little
            self.record(key, light, on_loop)


def own_waits() -> int | None:
    """How many times the running thread has stopped of its own accord (for a disk, a lock, a
    socket, a sleep: its voluntary context switches), or None where that is not counted."""
    return None if PER_THREAD is None else getrusage(PER_THREAD).ru_nvcsw


LIGHT_RUNS = LightRuns()
# A decision (it plans, may file a card and commit) is light below the interpreter's switch interval:
# shorter work runs to its end before the loop gets the interpreter back even from a worker thread
# (except while it waits on the disk), and a held call's decision computes for 1.3-1.8 ms here.
DECISION_RUNS = LightRuns(light_seconds=sys.getswitchinterval())


class Serving:
    """How many requests this process's event loop is serving right now, where its server counts
    them (:meth:`count`, the local server's outermost layer); touched on the loop only."""

    def __init__(self) -> None:
        self.counted = False  # no server counts here: never alone
        self.in_flight = 0

    def count(self, app: ASGIApp) -> ASGIApp:
        """``app`` with each HTTP request it serves counted while it is served."""
        self.counted = True

        async def counted(scope: dict, receive: Callable, send: Callable) -> None:
            if scope["type"] != "http":
                return await app(scope, receive, send)
            self.in_flight += 1
            try:
                return await app(scope, receive, send)
            finally:
                self.in_flight -= 1

        return counted


ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]


@dataclass(frozen=True)
class Offload:
    """Where this process runs a call's store and toolset work. ``one_at_a_time``: nothing else
    shares this event loop (a Lambda instance), so the work runs on it; otherwise writes run in a
    worker thread and reads once they have proven light on ``runs``, and the gate's decision on a
    call also on the loop while it is the only request ``serving`` counts and it has proven light
    on ``decisions`` (see the module docstring)."""

    one_at_a_time: bool = False
    runs: LightRuns = LIGHT_RUNS
    decisions: LightRuns = DECISION_RUNS
    serving: Serving = field(default_factory=Serving, compare=False)
    # whether the store's write lock is free right now (no wait): a decision tried on the loop
    # must not wait there for another writer (a CLI command, the sweep) for up to 30 s
    lock_free: Callable[[], bool] = field(default=lambda: True, compare=False)

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

    async def write_work(self, key: str, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)``, the gate's decision on a call, which may write (``key`` names its kind):
        on the loop when served one request at a time, or when this is the only request being
        served and ``key`` has proven light; else in a worker thread; timed wherever it runs (see
        the module docstring). On the loop it runs in a copy of the context, as in a thread."""
        if self.one_at_a_time:
            return fn(*args)
        # (the held call's path is bounded in steps, bench/held_path.py: whether it is alone, inline)
        serving, runs = self.serving, self.decisions
        if not serving.counted:  # never known to be alone: nothing to prove
            return await _in_a_thread(fn, *args)
        if serving.in_flight <= 1 and runs.proven(key) and self.lock_free():  # alone, proven, lock free
            return contextvars.copy_context().run(runs.measure, key, True, fn, *args)
        import anyio.to_thread  # (not at import: the notifier's and sweeper's bundles ship without anyio; _in_a_thread)

        return await anyio.to_thread.run_sync(functools.partial(runs.measure, key, False, fn, *args))


async def _in_a_thread(fn: Callable[..., T], *args: object) -> T:
    # anyio loads here, not with the module: the notifier's and the sweeper's Lambda bundles ship
    # without it (they serve one event at a time and never hop), yet import the desk that holds this.
    import anyio.to_thread

    return await anyio.to_thread.run_sync(fn, *args)


IN_THREADS = Offload()  # a server whose event loop serves many calls at once and does not count them
ONE_AT_A_TIME = Offload(one_at_a_time=True)  # a Lambda instance: one request at a time
