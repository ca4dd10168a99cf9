"""Running upstreams for the gateway tests: the file-store server of :mod:`.upstream`, over HTTP in
a process of its own (so a test can kill it) or as a stdio command, on loopback only."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FileStore:
    """The upstream's folder: its files, and the calls it received."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def reset(self) -> None:
        for p in self.root.iterdir():
            p.unlink() if p.is_file() else shutil.rmtree(p)

    def calls(self) -> list[str]:
        path = self.root / ".calls"
        return path.read_text().splitlines() if path.exists() else []

    def received(self) -> list[dict]:
        """Every call the upstream received: its name and its arguments exactly as they came."""
        import json

        path = self.root / ".received"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def write(self, name: str, text: str) -> None:
        (self.root / name).write_text(text)

    def read(self, name: str) -> str | None:
        path = self.root / name
        return path.read_text() if path.exists() else None

    def flag(self, name: str, value: str = "") -> None:
        (self.root / f".{name}").write_text(value)

    def stdio_command(self) -> list[str]:
        return [sys.executable, "-m", "tests.gateway.upstream", str(self.root), "stdio"]


class HttpUpstream(FileStore):
    def __init__(self, root: Path):
        super().__init__(root)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.gateway.upstream", str(self.root), "http",
                                      str(self.port)], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the upstream did not start")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None
