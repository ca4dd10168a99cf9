"""The scheduled upkeep as a surface: :meth:`Runtime.sweep` once per event.

On AWS an EventBridge schedule invokes the ``sweeper`` function (:mod:`countersign.handlers.sweeper`)
every minute; locally the server runs the same sweep on a timer. One sweep:

* settles cards a dead process left ``running`` past their lease (:mod:`countersign.gate.recovery`:
  resumed, or closed as ``failed`` saying which steps ran);
* delivers every notification that is due: a first send that failed and waited its backoff, a
  sender that died mid-way (its lease lapsed), a stream record that never got through;
* checks that the store holds no answerable card signed by a key this instance lacks.

One bad card never stops a sweep (recovery and delivery each catch per card). A sweep that cannot
reach the store at all raises: the invocation is an error (the ``Errors`` metric), and the next
minute's sweep tries again. :func:`schedule_handler` is the function without its observability
wrapper, so tests drive it in process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("countersign.sweep")

LIMIT = 50  # cards settled and notifications tried per sweep (each a separate limit)


def schedule_handler(runtime: Any, metric: Callable[[str, float], None] | None = None,
                     limit: int = LIMIT) -> Callable[[dict, Any], dict]:
    """A Lambda handler for schedule events: one sweep, returning (and counting) what it did."""

    def handle(event: dict, context: Any) -> dict:
        counts = runtime.sweep(limit)
        for name, value in counts.items():
            if metric is not None:
                metric(f"sweep_{name}", value)
        if any(counts.values()):
            log.info("swept: %s", ", ".join(f"{k} {v}" for k, v in counts.items()))
        return counts

    return handle


def summary(event: dict, result: Any) -> dict:
    """The ``handled`` log line's fields for one sweep."""
    return dict(result) if isinstance(result, dict) else {}
