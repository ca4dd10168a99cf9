"""Proof that a request came through the deployment's CloudFront, and the caller's address.

CloudFront adds ``X-Countersign-Origin`` to every request it sends to the HTTP API
(template.yaml: ``OriginCustomHeaders``), with the value of the OriginVerifySecret secret. The
execute-api URL itself is public, so on AWS:

* :func:`require_origin` wraps each HTTP function's Lambda handler and answers **403** to every
  request that does not carry the secret: nothing reaches the MCP endpoint or the confirm API
  around CloudFront (its headers, its TLS, its viewer address);
* :func:`client_address` trusts ``CloudFront-Viewer-Address`` only on a request that carries it,
  and otherwise names the connecting address (the local server's peer, API Gateway's source IP).

Accepted values: the secret's current value and, while a rotation settles, its previous one
(``AWSPREVIOUS``, read at cold start too), so instances reloaded before CloudFront switches keep
answering both (docs/operations.md: Rotating the origin secret). Without a configured secret (the local server)
nothing is refused and the viewer header is never trusted.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger("countersign.origin")

ORIGIN_HEADER = "x-countersign-origin"
VIEWER_HEADER = "cloudfront-viewer-address"
FORBIDDEN = {"error": {"code": "forbidden", "message": "Reach this service through its public URL."}}
_mismatch_logged = False


def accepted(runtime: Any) -> tuple[str, ...]:
    """The origin values ``runtime`` accepts: current first, then the previous one (if any)."""
    return tuple(v for v in (getattr(runtime, "origin_secret", None), getattr(runtime, "origin_previous", None)) if v)


def matches(secrets: Iterable[str], sent: str | bytes | None) -> bool:
    """Whether ``sent`` (a header value) equals one of ``secrets``, compared in constant time."""
    global _mismatch_logged
    secrets = tuple(secrets)
    if not secrets or sent is None:
        return False
    # Starlette decodes header bytes as latin-1: encoding back gives exactly what was sent.
    raw = sent if isinstance(sent, bytes) else sent.encode("latin-1", "replace")
    found = False
    for secret in secrets:  # every comparison runs: which value matched takes no longer to tell
        found |= hmac.compare_digest(raw, secret.encode("utf-8"))
    if not found and not _mismatch_logged:  # once per instance: a forger could otherwise fill the log
        _mismatch_logged = True
        log.warning("a request's %s did not match COUNTERSIGN_ORIGIN_SECRET (after a rotation: reload the "
                    "functions, then deploy with OriginSecretVersion)", ORIGIN_HEADER)
    return found


def client_address(headers: dict[str, str], peer: str | None, secrets: Iterable[str]) -> str:
    """The address a request comes from: CloudFront's ``CloudFront-Viewer-Address`` (``ADDR:PORT``)
    when the request proves it came through CloudFront, else the connecting address."""
    viewer = (headers.get(VIEWER_HEADER) or "").strip()
    if viewer and matches(secrets, headers.get(ORIGIN_HEADER)):
        return viewer.rsplit(":", 1)[0][:64]
    return (peer or "unknown")[:64]


def scope_headers(scope: dict) -> dict[str, str]:
    """An ASGI scope's headers, names lower-cased, values decoded as latin-1 (last one wins)."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def scope_address(scope: dict, secrets: Iterable[str]) -> str:
    client = scope.get("client")
    return client_address(scope_headers(scope), client[0] if client else None, secrets)


def require_origin(handler: Callable[[dict, Any], Any], secrets: Iterable[str]) -> Callable[[dict, Any], Any]:
    """A Lambda handler (API Gateway proxy event) that answers 403 unless the event carries one of
    ``secrets`` in ``X-Countersign-Origin``. No secrets: ``handler`` itself."""
    accepted_values = tuple(secrets)
    if not accepted_values:
        return handler

    def guarded(event: dict, context: Any) -> Any:
        headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
        if matches(accepted_values, headers.get(ORIGIN_HEADER)):
            return handler(event, context)
        return {"statusCode": 403, "body": json.dumps(FORBIDDEN), "isBase64Encoded": False,
                "headers": {"content-type": "application/json", "cache-control": "no-store"}}

    return guarded
