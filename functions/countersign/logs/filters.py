"""The ``logging`` filters that pass every record through :func:`~.redaction.redact`, and the
local server's use of them (:func:`redact_local_logs`)."""

from __future__ import annotations

import logging

from .redaction import redact


class RedactFilter(logging.Filter):
    """Rewrites a record's message (and its exception text) through :func:`redact`.

    Installed on the Powertools handler and on the root logger's handlers (the Lambda runtime's),
    so library records are covered as well as the package's own.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string or a broken __str__: keep what can be kept
            message = f"{record.msg!r} {record.args!r}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


class RedactAccessFilter(logging.Filter):
    """:func:`redact` for uvicorn's access log, whose formatter unpacks ``record.args`` (client,
    method, path, HTTP version, status) itself: the path, the one part a client writes, is
    redacted in place and the shape kept. Any other record is redacted whole."""

    whole = RedactFilter()

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            record.args = (*args[:2], redact(args[2]), *args[3:])
            return True
        return self.whole.filter(record)


def redact_local_logs() -> None:
    """The local server's log lines through :func:`redact`, as the functions' are: the root
    logger's handlers (the MCP SDK installs one) and uvicorn's own. Called once uvicorn has set
    up its loggers; plain logging otherwise, and no Powertools."""
    for name, make in (("", RedactFilter), ("uvicorn", RedactFilter), ("uvicorn.access", RedactAccessFilter)):
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, (RedactFilter, RedactAccessFilter)) for f in handler.filters):
                handler.addFilter(make())
