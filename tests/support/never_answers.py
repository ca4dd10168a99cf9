"""A loopback listener that accepts every connection and never answers: each connection accepted is
one attempt of a client's (tests/unit/test_aws_config.py, bench/aws_timeouts.py)."""

from __future__ import annotations

import socket
import threading


class NeverAnswers:
    def __init__(self):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.accepted: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def address(self) -> tuple[str, int]:
        return self.listener.getsockname()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.address[1]}"

    def _accept(self) -> None:
        while True:
            try:
                self.accepted.append(self.listener.accept()[0])
            except OSError:  # closed
                return

    def close(self) -> None:
        self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() that waits
        self.listener.close()
        self.thread.join(5)
        for connection in self.accepted:
            connection.close()
