"""Crash points, for the crash tests only (``tests/crash``).

``COUNTERSIGN_FAULT=<point>`` (or ``<point>@<n>``: the n-th time) makes this process kill itself
with SIGKILL when the named point is reached, so a test can stop a real server exactly there and
check what a restart finds. Unset — always, outside those tests — every call is a no-op.

Points: ``filed`` (a card and its notification committed, nothing sent or replied),
``before_commit`` (an answer planned and staged, nothing committed), ``mid_commit`` (inside the
SQLite transaction, after every write, before COMMIT), ``after_commit`` (committed, no reply
yet), ``after_step`` (an action of several steps: one step committed), ``after_outside`` (an
outside call returned, its result not committed), ``after_send`` (an email handed to the
sender, the notification not yet marked done).
"""

from __future__ import annotations

import os
import signal
import threading

_FAULT = os.environ.get("COUNTERSIGN_FAULT") or ""
_POINT, _, _NTH = _FAULT.partition("@")
_WANTED = int(_NTH) if _NTH.isdigit() else 1
_hits = 0
_lock = threading.Lock()


def crash_point(name: str) -> None:
    """Die here if this is the configured point (and hit); otherwise do nothing."""
    global _hits
    if not _POINT or name != _POINT:
        return
    with _lock:
        _hits += 1
        if _hits != _WANTED:
            return
    os.kill(os.getpid(), signal.SIGKILL)
