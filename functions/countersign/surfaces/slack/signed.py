"""Which workspace's Slack app a request comes from, proved by Slack's signature.

Slack signs each request with the app's signing secret (``X-Slack-Signature``: ``v0=`` and the hex
HMAC-SHA256 of ``v0:<timestamp>:<raw body>``; ``X-Slack-Request-Timestamp``). The request names
its Slack team; the one app connected for that team (:meth:`~countersign.store.slack.SlackStore.app_for_team`)
verifies the signature with its secret, unsealed for this request only. Refused (:class:`NotSlack`,
answered 401, nothing done): either header missing, a timestamp that is not whole seconds or is
more than five minutes from now either way, a team no app is connected for, a signature that
does not match, and a request seen before — each signature is kept as a nonce
(:meth:`~countersign.store.limits.LimitStore.use_nonce`) for as long as its timestamp is
accepted, so a replayed body is refused even within the window.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping

from ...core.sealing import SealError
from ...runtime import Runtime
from ...store.slack import TEAM_ID, SlackApp

log = logging.getLogger("countersign.slack")

WINDOW = 5 * 60  # seconds either side of now a timestamp is accepted (slack_sdk's SignatureVerifier)
TIMESTAMP, SIGNATURE = "x-slack-request-timestamp", "x-slack-signature"


class NotSlack(Exception):
    """A request not proved to come from a connected Slack app: answered 401, nothing done."""


class _Clock:
    """slack_sdk's clock, read from the desk (tests move it)."""

    def __init__(self, now: Callable[[], float]):
        self._now = now

    def now(self) -> float:
        return self._now()


def verified_app(runtime: Runtime, body: bytes, headers: Mapping[str, str], team_id: object) -> SlackApp:
    """The app whose signing secret signed ``body``, for Slack team ``team_id``; :class:`NotSlack`
    otherwise. Spends the signature: the same request is refused the second time."""
    # slack_sdk at the first Slack request (~80 ms of imports), not at the API function's cold start
    from slack_sdk.signature import SignatureVerifier

    timestamp, signature = headers.get(TIMESTAMP), headers.get(SIGNATURE)
    if not timestamp or not signature:
        raise NotSlack("the request carries no Slack signature")
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):
        raise NotSlack("the request's timestamp is not a time")
    app = runtime.store.slack.app_for_team(team_id) if isinstance(team_id, str) and TEAM_ID.fullmatch(team_id) \
        else None
    if app is None:
        raise NotSlack("no Slack app is connected for the request's team")
    try:
        secret = runtime.slack.credentials.secret(app)
    except SealError as exc:
        log.error("the Slack app of workspace %s cannot be used: %s", app.workspace_id, exc)
        raise NotSlack("the app's signing secret cannot be opened") from None
    verifier = SignatureVerifier(secret, clock=_Clock(runtime.desk.clock))  # type: ignore[arg-type]
    try:
        valid = verifier.is_valid(body=body, timestamp=timestamp, signature=signature)
    except ValueError:  # a timestamp int() refuses
        valid = False
    if not valid:
        raise NotSlack("the signature does not match, or the timestamp is too old or too new")
    now = runtime.desk.now()
    nonce = "slack:" + hashlib.sha256(signature.encode("utf-8")).hexdigest()
    if not runtime.store.limits.use_nonce(nonce, int(timestamp) + WINDOW + 60, now):
        raise NotSlack("the request was seen before")
    return app
