"""A real uvicorn server on 127.0.0.1 in a background thread (the kernel picks the port)."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn


class LiveServer:
    def __init__(self, app, lifespan: str = "on"):
        # proto=IPPROTO_TCP so asyncio sets TCP_NODELAY on accepted connections (it skips proto 0,
        # and Nagle + delayed ACK then cost ~40 ms per keep-alive request).
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(
            # proxy_headers off, as countersign serve runs it: the app alone decides whom to trust.
            uvicorn.Config(app, lifespan=lifespan, log_level="warning", timeout_graceful_shutdown=2,
                           proxy_headers=False)
        )
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://localhost:{self.port}"

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
