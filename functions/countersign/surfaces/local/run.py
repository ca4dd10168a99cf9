"""Running the local server under uvicorn (:func:`serve`).

uvicorn's own proxy handling is off: forwarding headers (``X-Forwarded-For``, ``X-Forwarded-Proto``)
are trusted only from the proxies ``COUNTERSIGN_TRUSTED_PROXIES`` names, which the app itself
checks (:func:`countersign.surfaces.local.app.build_local`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from ...logs.filters import redact_local_logs
from ...platform import heap


def serve(app: ASGIApp, host: str, port: int, on_listening: Callable[[], None] | None = None,
          log_level: str = "info") -> int:
    """Run ``app`` under uvicorn until stopped; ``on_listening`` once the socket is bound.

    uvicorn's own proxy handling is off: it would trust ``X-Forwarded-For`` from 127.0.0.1, so any
    local process could pose as any address (the app trusts only ``COUNTERSIGN_TRUSTED_PROXIES``).
    Returns 0 (also when stopped with Ctrl+C, as its start-up text says to: uvicorn has shut the
    app down and said so, then raises the interrupt again), or 1 when the server could not start
    (uvicorn has said why).
    """
    config = uvicorn.Config(app, host=host, port=port, lifespan="on", proxy_headers=False, log_level=log_level)
    redact_local_logs()  # uvicorn's loggers exist now: every line it and the app write is redacted
    server = _Server(config, on_listening)
    try:
        server.run()
    except SystemExit as exc:  # uvicorn exits when the port is taken or the lifespan failed
        return 1 if exc.code else 0
    except KeyboardInterrupt:  # Ctrl+C, after the shutdown: not a traceback
        return 0
    return 0


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_listening: Callable[[], None] | None):
        super().__init__(config)
        self.on_listening = on_listening

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            heap.settle(collect=True)  # the app is built and its lifespan started (countersign.platform.heap)
            if self.on_listening is not None:
                self.on_listening()
