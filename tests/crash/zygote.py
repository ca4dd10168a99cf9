"""A fork server for the crash tests' server processes.

Starting a server process is mostly importing (the MCP SDK's types alone take seconds of CPU), and
the crash tests start one two or three times each. This process imports what
``python -m tests.crash.server`` imports, once, and then forks a fresh server process per request.
Each server is still a process of its own, with its own SQLite connections, killed with SIGKILL at
its crash point and started anew afterwards; only the import work is shared, done before the fork.

The crash points (``countersign.core.crash_points``) read ``COUNTERSIGN_FAULT`` when imported, so the child
sets its environment first and has that module read it again, as a new process would.

Protocol: one JSON object per line. The test process writes ``{"id", "args", "env", "cwd",
"log"}`` to this process's stdin; it answers ``{"id", "pid"}`` on stdout, and ``{"exit": pid,
"code": returncode}`` when a server ends (its code as :mod:`subprocess` gives it: ``-9`` for
SIGKILL). When its stdin closes it kills the servers still running and exits.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import threading
import traceback


def _child(request: dict, ctl: int) -> None:
    """In the forked child: become ``python -m tests.crash.server ARGS``; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(ctl)
        log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        from countersign.core import crash_points

        importlib.reload(crash_points)  # reads COUNTERSIGN_FAULT from this process's environment
        from tests.crash import server

        sys.argv = [server.__file__, *request["args"]]
        try:
            server.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - whatever happens, the child says why and exits
        traceback.print_exc()
    finally:
        import logging

        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001, S110 - exiting anyway
                pass
        os._exit(code)


def _warm() -> None:
    """Import what a server imports, including what it imports lazily while it builds: a child
    builds one in a scratch folder and names the modules that took; this process imports them."""
    import tempfile

    from tests.crash import server

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read)
            before = set(sys.modules)
            with tempfile.TemporaryDirectory() as data:
                server.make_app(data, 9)
            os.write(write, "\n".join(sorted(set(sys.modules) - before)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        names = pipe.read().decode().split()
    os.waitpid(pid, 0)
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S110 - a module that will not import here is imported by the server
            pass


def main() -> None:
    _warm()
    ctl = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # stray output of this process never mixes with the protocol
    os.close(null)
    children: set[int] = set()

    def say(message: dict) -> None:
        os.write(ctl, (json.dumps(message) + "\n").encode())

    def reap(signum, frame) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            children.discard(pid)
            say({"exit": pid, "code": os.waitstatus_to_exitcode(status)})

    signal.signal(signal.SIGCHLD, reap)
    # A fork copies only the forking thread: with any other thread alive the children could inherit
    # a lock held forever. The test process then starts servers the plain way.
    say({"ready": threading.active_count() == 1})
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, ctl)
        children.add(pid)
        say({"id": request["id"], "pid": pid})
    for pid in list(children):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


if __name__ == "__main__":
    main()
