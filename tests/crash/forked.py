"""The test process's side of the fork server (tests/crash/zygote.py): server processes forked from
one process that has already imported everything, handled like :class:`subprocess.Popen` objects.

One fork server per test process, started on first use and stopped at exit. Where it cannot be
used (it reports another thread alive at fork time, or it died) :func:`start_server` falls back to
``python -m tests.crash.server`` through :class:`subprocess.Popen`, which is slower and equivalent.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class Forked:
    """A server process forked by the fork server: the part of ``Popen`` the harness uses."""

    def __init__(self, server: ForkServer, pid: int):
        self.server, self.pid = server, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self.server.wait_exit(self.pid, timeout)
            if code is None:
                raise subprocess.TimeoutExpired(f"server process {self.pid}", timeout or 0)
            self.returncode = code
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")}
        env["PYTHONPATH"] = os.pathsep.join((str(REPO), str(REPO / "functions")))  # this tree's package
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.crash.zygote"], cwd=REPO, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        hello = self.proc.stdout.readline()
        self.usable = bool(hello) and json.loads(hello).get("ready") is True
        self.ids = itertools.count(1)
        self.changed = threading.Condition()
        self.pids: dict[int, int] = {}  # request id -> pid
        self.exits: dict[int, int] = {}  # pid -> returncode
        self.alive = self.usable
        self.write_lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True, name="fork-server-reader").start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.changed:
                if "exit" in message:
                    self.exits[message["exit"]] = message["code"]
                elif "pid" in message:
                    self.pids[message["id"]] = message["pid"]
                self.changed.notify_all()
        with self.changed:
            self.alive = False
            self.changed.notify_all()

    def spawn(self, args: list[str], env: dict[str, str], log: Path) -> Forked | None:
        """A new server process, or None when this fork server cannot make one."""
        request_id = next(self.ids)
        request = {"id": request_id, "args": args, "env": env, "cwd": str(REPO), "log": str(log)}
        try:
            with self.write_lock:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            return None
        with self.changed:
            self.changed.wait_for(lambda: request_id in self.pids or not self.alive, timeout=30)
            pid = self.pids.pop(request_id, None)
        return None if pid is None else Forked(self, pid)

    def exit_code(self, pid: int) -> int | None:
        with self.changed:
            return self.exits.get(pid)

    def wait_exit(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.exits or not self.alive, timeout=timeout)
            return self.exits.get(pid)

    def close(self) -> None:
        try:
            self.proc.stdin.close()  # it kills what it still runs, then exits
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


_server: ForkServer | None = None
_lock = threading.Lock()


def _fork_server() -> ForkServer | None:
    global _server
    with _lock:
        if _server is None:
            _server = ForkServer()
            atexit.register(_server.close)
        return _server if _server.usable and _server.alive else None


def start_server(args: list[str], env: dict[str, str], log) -> Forked | subprocess.Popen:
    """``python -m tests.crash.server ARGS`` with exactly ``env``, its output to the open file ``log``:
    forked from the fork server when it can, else a plain subprocess."""
    if os.environ.get("COUNTERSIGN_TEST_NO_FORK") != "1":
        server = _fork_server()
        forked = server.spawn(args, env, Path(log.name)) if server is not None else None
        if forked is not None:
            return forked
    return subprocess.Popen([sys.executable, "-m", "tests.crash.server", *args], cwd=REPO, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
