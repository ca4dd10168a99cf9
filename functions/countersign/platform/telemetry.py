"""Logs, metrics and traces of the Lambda functions (Powertools), with secrets kept out of logs.

Only the Lambda entry points (``countersign.handlers``) import this module and call :func:`setup`;
nothing here runs at import, so the tests keep plain ``logging``. The local server never uses
Powertools: its lines are redacted all the same (:func:`countersign.logs.filters.redact_local_logs`).

* **Logger**: JSON lines on stdout, one ``correlation_id`` per request (API Gateway's request id,
  which the HTTP API's access log also records), the Lambda context keys, and every record of
  the package's own loggers (``countersign.*``) and of the root logger passed through
  :func:`countersign.logs.redaction.redact` first: bearer tokens, tickets, confirmation codes,
  sign-in tokens, session ids and keys never reach a log line.
* **Metrics** (CloudWatch EMF, namespace ``POWERTOOLS_METRICS_NAMESPACE``, default ``countersign``):
  :func:`metric` counts one event by name. :func:`wire` connects the card desk and the card
  notifier to it, so these are counted, flushed at the end of every invocation:

  ====================== =============================================================
  ``card_filed``         a held call became a card
  ``card_confirmed``     a yes was committed (any channel: client, code, page): the card moved to
                         ``completed`` in one commit, or, for an action of several steps, to
                         ``running`` in its first commit
  ``card_declined``      a person declined (in the client or on the page)
  ``card_withdrawn``     the agent (or a revoked connection) withdrew it
  ``card_expired``       an answer came after the card's deadline (expiry itself is lazy)
  ``card_refused_drift`` confirmed, but what it describes had changed: refused, nothing ran
  ``email_sent``         a card email went out
  ``email_rate_limited`` a card email was suppressed: one per person per interval
  ``email_disabled`` / ``email_failed`` / ``email_nothing_pending`` / ``email_suppressed``  the other outcomes
  ``email_quiet_hours``  a card email (or a digest) put back until its person's quiet hours end
  ``email_reminder_sent`` / ``email_reminder_waits``  a card's reminder went out; or waits for the email interval
  ``email_bounced`` / ``email_complained`` / ``email_soft_bounce``  SES's feedback (the notifier)
  ``card_recovered``     the sweep (or a reader) settled a card a dead process left running
  ``signing_key_missing`` the sweep found answerable cards signed by a key this instance lacks
  ``sweep_settled`` / ``sweep_delivered``  per sweep: cards settled, notifications tried
  ``notification_not_delivered``  a stream record whose notification is still owed (retried)
  ``push_sent`` / ``push_gone`` / ``push_failed`` / ``push_rate_limited``  Web Push to a person's devices
  ``request_count_skipped``  a card written without its request's counters (one was throttled): not counted
  ``refusal_carried``    a 4xx with ``WWW-Authenticate`` (an MCP 401) carried past API Gateway as a 200
                         (``countersign.surfaces.http.challenge``): the 4xx alarm adds it to ``4XXError``
  ====================== =============================================================

* **Traces**: the functions run with ``Tracing: Active``, so X-Ray records every invocation
  (its init, its duration, its errors) with no code here. The X-Ray SDK itself (Powertools'
  Tracer, patching botocore so each AWS call is a subsegment) is **off by default**: importing and
  building it took 0.17-0.35 s of every cold start on the bench machine (``bench/coldstart.py``),
  most of the project's own share of an import. Set ``COUNTERSIGN_XRAY_SDK=1`` on a function to
  get per-call subsegments while investigating (botocore only; inside Lambda only); it never
  records responses or error messages, which could carry a code or a sign-in link.
"""

from __future__ import annotations

import functools
import logging
import os
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import MetricUnit

from ..logs.filters import RedactFilter
from ..logs.redaction import redact

if TYPE_CHECKING:
    from aws_lambda_powertools.logging.types import LogRecord

SERVICE_ENV = "POWERTOOLS_SERVICE_NAME"
NAMESPACE_ENV = "POWERTOOLS_METRICS_NAMESPACE"
# Read by Powertools itself; template.yaml sets each of them for both functions.
READ_BY_POWERTOOLS = (
    SERVICE_ENV,
    NAMESPACE_ENV,
    "POWERTOOLS_LOG_LEVEL",
    "POWERTOOLS_PARAMETERS_MAX_AGE",
    "POWERTOOLS_TRACER_CAPTURE_RESPONSE",
    "POWERTOOLS_TRACER_CAPTURE_ERROR",
)
DEFAULT_SERVICE = "countersign"
XRAY_SDK_ENV = "COUNTERSIGN_XRAY_SDK"  # "1": AWS-call subsegments through the X-Ray SDK (costs cold start)

CARD_EVENTS = (
    "card_filed", "card_confirmed", "card_declined", "card_withdrawn", "card_expired", "card_refused_drift",
)

# -- Powertools' JSON lines, redacted ------------------------------------------------------

# Keys Powertools adds from the Lambda context and the event: never secret, kept readable
# (a generated function name is long enough to look like a key).
_CONTEXT_KEYS = frozenset({
    "level", "location", "timestamp", "service", "sampling_rate", "cold_start", "function_name",
    "function_memory_size", "function_arn", "function_request_id", "correlation_id", "xray_trace_id",
})


def _redact_value(value: Any, key: str | None = None) -> Any:
    if key in _CONTEXT_KEYS:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_value(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_redact_value(v) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact(str(value))  # e.g. the exception object in Powertools' stack_trace


class RedactingFormatter(LambdaPowertoolsFormatter):
    """Powertools' JSON formatter, every string value (message, extra keys, the formatted
    exception and its stack trace) redacted just before the line is serialised."""

    def serialize(self, log: LogRecord) -> str:
        return super().serialize(log=_redact_value(log))


def make_logger(service: str | None = None, stream=None, level: str | int | None = None) -> Logger:
    """A Powertools ``Logger`` whose lines are redacted (``service`` names the logging logger)."""
    logger = Logger(service=service or os.environ.get(SERVICE_ENV) or DEFAULT_SERVICE, stream=stream,
                    level=level, logger_formatter=RedactingFormatter())
    logger.logger_handler.addFilter(RedactFilter())
    return logger


# -- the process's logger, metrics and tracer ---------------------------------------------------

_logger: Any = None
_metrics: Any = None
_tracer: Any = None


def on_lambda() -> bool:
    return bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))


def setup() -> None:
    """Configure logging, metrics and (inside Lambda) tracing for this process. Idempotent."""
    global _logger, _metrics, _tracer
    if _logger is not None:
        return
    root = logging.getLogger()
    if not root.handlers:
        # The Lambda runtime installs one before importing the handler; elsewhere, install the
        # same, so a library's logging.basicConfig (the MCP SDK's rich console) stays a no-op.
        root.addHandler(logging.StreamHandler())
    _logger = make_logger()  # Powertools keeps the package's records off the root handlers
    for handler in root.handlers:  # the Lambda runtime's own handler
        if not any(isinstance(f, RedactFilter) for f in handler.filters):
            handler.addFilter(RedactFilter())
    _metrics = Metrics(namespace=os.environ.get(NAMESPACE_ENV) or DEFAULT_SERVICE,
                       service=os.environ.get(SERVICE_ENV) or DEFAULT_SERVICE)
    if on_lambda() and os.environ.get(XRAY_SDK_ENV) == "1":  # building it imports the X-Ray SDK: see above
        _tracer = Tracer(service=os.environ.get(SERVICE_ENV) or DEFAULT_SERVICE, patch_modules=["botocore"])


def logger():
    setup()
    return _logger


def metric(name: str, value: float = 1) -> None:
    """Count ``value`` of event ``name``; flushed (EMF) when the invocation ends."""
    if _metrics is None:
        return
    _metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def wire(runtime: Any) -> None:
    """Count the desk's card events, the card notifier's email outcomes (the runtime's
    notifier: it emails after filing where it delivers inline, and in every sweep), the webhook
    deliverer's (``webhook_delivered``, ``webhook_retrying``, ``webhook_failed``,
    ``webhook_disabled``), the Slack notifier's posts and the push notifier's (``push_sent``,
    ``push_gone``, ``push_failed``, ``push_rate_limited``)."""
    runtime.desk.on_event = metric
    for notifier in (getattr(runtime, "notifier", None), runtime.desk.on_filed, getattr(runtime, "webhooks", None),
                     getattr(runtime, "slack", None), getattr(runtime, "push", None)):
        if notifier is not None and hasattr(notifier, "on_event"):
            notifier.on_event = metric


HTTP_REQUEST_ID = "requestContext.requestId"  # API Gateway's request id (REST and HTTP APIs alike)
CARRIED_STATUS = "x-countersign-status"  # a refusal carried past API Gateway (surfaces.http.challenge)


def http_summary(event: dict, result: Any) -> dict:
    """The ``handled`` line of an HTTP request, like the REST API's access log but with the
    function's view: the status the viewer gets (a carried refusal's own). Never the query
    string, headers or body."""
    status = None
    if isinstance(result, dict):
        carried = (result.get("headers") or {}).get(CARRIED_STATUS)
        status = int(carried) if isinstance(carried, str) and carried.isdigit() else result.get("statusCode")
    return {"method": event.get("httpMethod"), "path": event.get("path"), "status": status}


Answer = TypeVar("Answer")  # what a Lambda handler returns


def instrument(
    handler: Callable[[dict, Any], Answer],
    *,
    correlation_id_path: str = HTTP_REQUEST_ID,
    summary: Callable[[dict, Any], dict] = http_summary,
) -> Callable[[dict, Any], Answer]:
    """The Lambda entry: correlation id and context keys on every log line of the invocation,
    one ``handled`` line per invocation (``summary(event, result)``'s fields and the duration),
    metrics flushed at its end (plus ``ColdStart``), and X-Ray SDK subsegments when they are on.

    ``correlation_id_path`` (JMESPath into the event): API Gateway's request id for the HTTP
    functions; the first record's ``eventID`` for a stream batch; the EventBridge event's ``id``
    for a schedule."""
    setup()

    @functools.wraps(handler)
    def entry(event: dict, context: Any) -> Answer:
        started = time.perf_counter()
        result = handler(event, context)
        _logger.info("handled", extra={**summary(event, result),
                                       "ms": round((time.perf_counter() - started) * 1000, 1)})
        return result

    # "No application metrics to publish" on an invocation that counted nothing is expected.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    wrapped = _metrics.log_metrics(entry, capture_cold_start_metric=True)
    wrapped = _logger.inject_lambda_context(wrapped, correlation_id_path=correlation_id_path,
                                            log_event=False, clear_state=True)
    if _tracer is not None:
        wrapped = _tracer.capture_lambda_handler(wrapped, capture_response=False, capture_error=False)
    return wrapped
