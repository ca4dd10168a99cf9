"""The TLS context every outbound POST verifies with (a webhook delivery, a push, a Slack call): one per process.

``httpx2.Client()`` builds a TLS context of its own and loads the CA bundle into it: 21.7 ms on
this machine, for every webhook delivery and every push, against 0.03 ms for a client handed a
context built once (:func:`tls_context`). A client is still made per POST: each goes to the one
address its endpoint's host was resolved to and checked against (``webhooks.target``), never to
a connection pooled for another.
"""

from __future__ import annotations

import functools
import ssl
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The context every outbound POST verifies its server with (the CA bundle httpx2 ships, not the
    environment's: ``trust_env`` is off for these requests), made on first use."""
    import httpx2  # not at a function's cold start (the API's and MCP's never post)

    return httpx2.create_ssl_context(trust_env=False)


def client(timeout: float) -> httpx2.Client:
    """A client for one POST: no redirects followed, nothing taken from the environment."""
    import httpx2  # not at a function's cold start, as in tls_context

    return httpx2.Client(timeout=timeout, follow_redirects=False, trust_env=False, verify=tls_context())
