"""The ``sweeper`` Lambda function: every minute (an EventBridge schedule), one sweep.

It settles cards a dead instance left running and delivers every notification still owed (a
failed send whose backoff is over, a sender that died, a stream record that never got through);
see :mod:`countersign.surfaces.sweeper`. Built once per instance, at import (cold start), like
the other functions; no MCP SDK, no web framework. Logs, metrics and traces:
:mod:`countersign.observability`.
"""

from __future__ import annotations

from .. import heap, observability
from ..runtime import build
from ..settings import load
from ..surfaces.sweeper import schedule_handler, summary

observability.setup()  # first, so what building logs is JSON and redacted
runtime = build(load(), deliver_inline=False, lazy_toolsets=True)  # plans only to recover
observability.wire(runtime)
handler = observability.instrument(schedule_handler(runtime, observability.metric),
                                   correlation_id_path="id", summary=summary)
heap.settle(collect=False)  # what was built lives as long as the instance (countersign.heap)
