"""The ``sweeper`` Lambda function: every minute (an EventBridge schedule), one sweep.

It settles cards a dead instance left running and delivers every notification still owed (a
failed send whose backoff is over, a sender that died, a stream record that never got through);
see :mod:`countersign.surfaces.background.sweeper`. Built once per instance, at import (cold start), like
the other functions; no MCP SDK, no web framework. Logs, metrics and traces:
:mod:`countersign.platform.telemetry`.
"""

from __future__ import annotations

from ..platform import heap, telemetry
from ..runtime import build
from ..settings import load
from ..surfaces.background.sweeper import schedule_handler, summary

telemetry.setup()  # first, so what building logs is JSON and redacted
runtime = build(load(), deliver_inline=False, lazy_toolsets=True)  # plans only to recover
telemetry.wire(runtime)
handler = telemetry.instrument(schedule_handler(runtime, telemetry.metric),
                                   correlation_id_path="id", summary=summary)
heap.settle(collect=False)  # what was built lives as long as the instance (countersign.platform.heap)
