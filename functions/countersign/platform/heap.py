"""The objects a process builds to start, kept out of the garbage collector's full collections.

A full collection of CPython's cyclic garbage collector walks every object it tracks. A server
holds 90,000 to 140,000 of them once started (the MCP SDK and pydantic's schemas, FastAPI's
routes, boto3's models, the toolsets), and walking them takes 15–25 ms: on the local server every
call in flight on the event loop stands still meanwhile, and on Lambda the request that triggered
it waits. Those objects live as long as the process, so once it is built they are moved to the
collector's permanent generation (:func:`gc.freeze`), which no collection walks: a full
collection then walks only what requests made since (``bench/heap.py``).

What is frozen is never collected, so it should be what the process keeps: the local server
collects first (start-up can spare the ~20 ms); a Lambda function freezes without collecting,
since its import is its cold start, and the garbage of its import stays, a few hundred KB at most.
"""

from __future__ import annotations

import gc


def settle(collect: bool) -> None:
    """Freeze what the process holds now; ``collect``: after a full collection, so garbage is not kept."""
    if collect:
        gc.collect()
    gc.freeze()
