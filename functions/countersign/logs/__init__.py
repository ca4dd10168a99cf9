"""Secrets kept out of log lines, wherever the process runs (the Lambda functions, the local
server, the CLI).

* :mod:`.redaction`: :func:`~.redaction.redact` (what looks like a bearer token, ticket, code or
  key) and the secrets this process holds in the clear (:func:`~.redaction.hold_secret`).
* :mod:`.filters`: the ``logging`` filters that pass records through it, and
  :func:`~.filters.redact_local_logs` for the local server.

On Lambda, :mod:`countersign.platform.telemetry` installs them on Powertools' logger and the root
logger; nothing here imports Powertools.
"""
