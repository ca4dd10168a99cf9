"""A webhook receiver on 127.0.0.1: a real HTTP server that keeps every request it gets and
answers with the statuses a test queues (200 once the queue is empty)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes


class Receiver:
    def __init__(self, server: ThreadingHTTPServer):
        self._server = server
        self.received: list[Received] = []
        self.statuses: list[int] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/hooks/countersign"

    def answer(self, *statuses: int) -> None:
        """Answer the next requests with ``statuses``, in order."""
        with self._lock:
            self.statuses.extend(statuses)

    def _next_status(self) -> int:
        with self._lock:
            return self.statuses.pop(0) if self.statuses else 200


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver._lock:
                receiver.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            status = receiver._next_status()
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = Receiver(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
