"""Sign-in by email link (docs/security.md, "Sign-in by email link").

``POST /api/signin/request`` answers the same way, in about the same time, whether or not the
address belongs to a member: the lookup, the token and the email happen after the answer, take
the same path either way (a stranger's token is stored bound to nobody and its email is composed
and rendered, just not handed to the sender), and are padded to a fixed floor, so neither the
answer, a request that follows on the same connection, nor a Lambda that waits for the work
takes measurably longer for a member. ``POST /api/signin/complete`` spends the one-time token and
starts a session.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time

from fastapi import APIRouter, BackgroundTasks, Depends, Request, Response
from starlette.concurrency import run_in_threadpool

from ...identity.sessions import redeem_signin_token, signin_link
from ...notify import compose_signin, render
from ..http import origin
from ..http.origin import ORIGIN_HEADER
from .errors import ApiError
from .schemas import MessageBody, SessionView, SigninCompleteBody, SigninRequestBody, errors
from .session import check_origin, current, runtime_of, session_view, set_session_cookie, start_session

log = logging.getLogger("countersign.api")

router = APIRouter(tags=["sign-in"])

SIGNIN_MESSAGE = "If that address belongs to a member, a sign-in link is on its way."
INVALID_MESSAGE = "This sign-in link is invalid, expired or already used. Ask for a new one."
RATE_WINDOW = 15 * 60
PER_EMAIL = 5
PER_ADDRESS = 20


def through_cloudfront(request: Request) -> bool:
    """Whether the request proves it came through our CloudFront distribution: its
    ``X-Countersign-Origin`` equals the configured origin secret (constant-time). Without a
    configured secret (the local server, or a stack without one) nothing is trusted."""
    return origin.matches(origin.accepted(runtime_of(request)), request.headers.get(ORIGIN_HEADER))


def client_addresses(request: Request) -> list[tuple[str, int]]:
    """The rate-limit keys for the caller's address, with their limits.

    Behind CloudFront the API sees an edge address shared by many people, so the viewer address
    CloudFront adds (``CloudFront-Viewer-Address: ADDRESS:PORT``) is limited instead - but only
    when the request proves it came through CloudFront (:func:`countersign.surfaces.http.origin.client_address`):
    anyone could call the execute-api URL directly and name any viewer (on AWS such a request is
    refused before it gets here). Otherwise, and on the local server, the connecting address
    (the socket's peer, or API Gateway's source IP) is limited.

    No looser per-edge limit on trusted requests: the viewer address is then CloudFront's own
    observation, so a caller gets one allowance per real address; an edge limit would only
    refuse real people who share a busy edge. Mail to any one address is bounded by the per-email
    limit, and the whole API by its throttling (template.yaml).
    """
    peer = request.client.host if request.client else "unknown"
    address = origin.client_address({k.lower(): v for k, v in request.headers.items()}, peer,
                                    origin.accepted(runtime_of(request)))
    return [(f"signin-address:{address}", PER_ADDRESS)]


@router.post("/signin/request", status_code=202, response_model=MessageBody,
             dependencies=[Depends(check_origin)], responses=errors(403, 422, 429))
def request_link(body: SigninRequestBody, request: Request, background: BackgroundTasks) -> dict:
    """Email a one-time sign-in link to a member. The answer never says whether the address is known."""
    started = time.monotonic()
    email = body.email  # the schema's pattern already refused anything that is not an address
    runtime = runtime_of(request)
    now = runtime.desk.now()
    limited = ApiError(429, "rate_limited", "Too many sign-in requests. Wait 15 minutes, then ask again.",
                       headers={"Retry-After": str(RATE_WINDOW - now % RATE_WINDOW)})
    for key, limit in client_addresses(request):
        if not runtime.store.limits.hit_rate_limit(key, now, RATE_WINDOW, limit):
            raise limited
    email_key = hashlib.sha256(email.lower().encode("utf-8")).hexdigest()
    if not runtime.store.limits.hit_rate_limit(f"signin-email:{email_key}", now, RATE_WINDOW, PER_EMAIL):
        raise limited
    background.add_task(_deliver, request.app, email, started)
    return {"message": SIGNIN_MESSAGE}


async def _deliver(app, email: str, started: float) -> None:
    try:
        await run_in_threadpool(_send_link, app, email)
    except Exception:  # the answer is already given; a failed send must not say more
        log.exception("sending a sign-in link failed")
    floor = app.state.signin_floor - (time.monotonic() - started)
    if floor > 0:
        await asyncio.sleep(floor)


def _send_link(app, email: str) -> None:
    """The same work for every address: look it up, store a token, compose and render the email.
    Only a member's email is handed to the sender (which renders it the same way, then delivers)."""
    runtime, sender = app.state.runtime, app.state.sender
    link = signin_link(runtime.store.sessions, runtime.store.workspaces, email, runtime.desk.settings.public_url,
                       runtime.desk.now())
    message = compose_signin(link.to, link.link, sender.from_address)
    if link.member:
        sender.send(message)
    else:
        render(message)


@router.post("/signin/complete", response_model=SessionView, dependencies=[Depends(check_origin)],
             responses=errors(400, 403, 422))
def complete(body: SigninCompleteBody, request: Request, response: Response) -> dict:
    """Spend a sign-in token (once, within 15 minutes) and start a session."""
    runtime = runtime_of(request)
    member = redeem_signin_token(runtime.store.sessions, runtime.store.workspaces, body.token, runtime.desk.now())
    if member is None:
        raise ApiError(400, "signin_invalid", INVALID_MESSAGE)
    person, workspace = member
    previous = current(request)
    if previous is not None:  # never keep a session id across a sign-in
        runtime.store.sessions.delete_session(previous.session.session_hash)
    session_id, signed = start_session(runtime, person, workspace)
    set_session_cookie(response, session_id)
    return session_view(signed, runtime)
