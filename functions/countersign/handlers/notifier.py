"""The ``notifier`` Lambda function: the table's stream delivers each filed card's notification;
SES's bounces and complaints (an SNS topic) suppress addresses (:mod:`countersign.surfaces.background.feedback`).

The event source mapping (``template.yaml``) passes only ``INSERT`` records of ``OUTBOX`` items,
in batches, with partial batch responses: a record whose notification is still owed after this
function handled it is reported in ``batchItemFailures`` and retried; after the retries its
batch's metadata lands in the ``NotifierDLQ`` queue, and the sweeper delivers it anyway
(``docs/operations.md``). What a record means: :mod:`countersign.surfaces.background.notifier`.

Built once per instance, at import (cold start), like the HTTP functions; no MCP SDK, no web
framework. Logs, metrics and traces: :mod:`countersign.platform.telemetry`.
"""

from __future__ import annotations

from typing import Any

from ..platform import heap, telemetry
from ..runtime import build
from ..settings import load
from ..surfaces.background.feedback import feedback_handler, is_feedback
from ..surfaces.background.notifier import stream_handler, summary

telemetry.setup()  # first, so what building logs is JSON and redacted
runtime = build(load(), deliver_inline=False, lazy_toolsets=True)  # plans nothing
telemetry.wire(runtime)
stream = stream_handler(runtime, telemetry.metric)
feedback = feedback_handler(runtime, telemetry.metric)


def route(event: dict, context: Any) -> Any:
    """A stream batch (OUTBOX inserts) or an SNS delivery of SES feedback."""
    return feedback(event, context) if is_feedback(event) else stream(event, context)


# The correlation id: the first stream record's eventID, or the SNS message's id.
handler = telemetry.instrument(route, correlation_id_path="Records[0].eventID || Records[0].Sns.MessageId",
                                   summary=summary)
heap.settle(collect=False)  # what was built lives as long as the instance (countersign.platform.heap)
