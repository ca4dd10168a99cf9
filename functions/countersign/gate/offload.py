"""Where a call's store and toolset work runs: in a worker thread, or on the event loop.

A server that serves many calls at once on one event loop (the local server) runs that work in a
worker thread, so a call waiting on the disk (a commit's fsync) or on the network (DynamoDB) never
holds up the calls beside it. A Lambda instance serves one request at a time: nobody waits on its
loop, so the hop (measured at about 0.3 ms per call, as much as a light read's own work) buys
nothing, and its app runs the work on the loop (:func:`one_at_a_time`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TypeVar

import anyio.to_thread

T = TypeVar("T")

_ONE_AT_A_TIME: ContextVar[bool] = ContextVar("countersign_one_at_a_time", default=False)


async def off_the_loop(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)``: in a worker thread, or on the loop inside :func:`one_at_a_time`."""
    if _ONE_AT_A_TIME.get():
        return fn(*args)
    return await anyio.to_thread.run_sync(fn, *args)


@contextlib.contextmanager
def one_at_a_time() -> Iterator[None]:
    """For the request being served (and the tasks it starts): nothing else shares this loop."""
    token = _ONE_AT_A_TIME.set(True)
    try:
        yield
    finally:
        _ONE_AT_A_TIME.reset(token)
