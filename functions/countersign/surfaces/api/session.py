"""Sessions of the confirm page over HTTP: the ``__Host-`` cookie, the CSRF token and the Origin check.

* The cookie carries a random session id; the store keeps only its hash (and the CSRF token).
  Minting and resolving one is :mod:`countersign.identity.sessions`.
* Every state-changing request must come from the public origin (``Origin`` header) and carry
  ``X-CSRF-Token`` equal to its session's token; sign-in requests need the Origin too (login CSRF).
* ``GET /api/session`` and ``POST /api/signout`` live here.
"""

from __future__ import annotations

import hmac
import re
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Request, Response
from pydantic import Field

from ...core.smoke import SMOKE_SESSION_ROUTES, is_smoke_workspace
from ...core.times import iso
from ...identity import sessions
from ...identity.sessions import Signed
from ...runtime import Runtime
from ...store.push_subscriptions import subscription_id
from ...store.workspaces import Person, Workspace
from ..http.request_limits import check, counts_of
from .errors import FORBIDDEN_CSRF, SIGNED_OUT, ApiError
from .schemas import SessionView, Strict, errors

COOKIE = "__Host-cs_session"
CSRF_HEADER = "X-CSRF-Token"
SMOKE_ONLY = "The smoke test's credential may only read and answer the smoke workspace's cards."
COOKIE_ATTRIBUTES = "Path=/; Secure; HttpOnly; SameSite=Lax"

router = APIRouter(tags=["session"])


CARD_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def runtime_of(request: Request) -> Runtime:
    return request.app.state.runtime


def public_origin(runtime: Runtime) -> str:
    # The desk's settings are the live ones (tests and the local server may move the public URL).
    parts = urlsplit(runtime.desk.settings.public_url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def check_origin(request: Request) -> None:
    """Dependency: the request comes from the confirm page's origin."""
    origin = request.headers.get("origin")
    if origin is None or origin.rstrip("/").lower() != public_origin(runtime_of(request)):
        raise ApiError(403, "csrf", FORBIDDEN_CSRF)


def _unauthorized() -> ApiError:
    return ApiError(401, "signed_out", SIGNED_OUT)


def current(request: Request) -> Signed | None:
    """The session named by the cookie, if it is valid now. A session of the smoke workspace
    (:mod:`countersign.core.smoke`) may only read and answer cards: anything else is refused.
    Over the page's request limit: :class:`~countersign.store.limits.OverLimit` (429). A click's
    counts against that limit, read with its session, are carried by the :class:`Signed`
    (:attr:`~countersign.identity.sessions.Signed.counts`): its handler passes them down."""
    runtime = runtime_of(request)
    counts = counts_of(request.scope)  # a click's counters against the page's limit, read with its session
    unread = counts if counts is not None and counts.seen is None and not counts.taken else None
    store = runtime.store
    signed = sessions.resolve_session(store.callers, store.sessions, store.workspaces, runtime.sessions,
                                      request.cookies.get(COOKIE), runtime.desk.now(), _card_named(request), unread)
    check(store.limits, unread)  # over the limit: 429 (countersign.surfaces.http.request_limits)
    if signed is not None and is_smoke_workspace(signed.workspace.id):
        route = str(getattr(request.scope.get("route"), "path", ""))  # the template, with or without /api
        if (request.method, route.removeprefix("/api")) not in SMOKE_SESSION_ROUTES:
            raise ApiError(403, "smoke_only", SMOKE_ONLY)
    return signed


def _card_named(request: Request) -> str | None:
    """The card a request's path names (``/api/cards/{card_id}...``), if it is a card id at all."""
    card_id = request.path_params.get("card_id")
    return card_id if isinstance(card_id, str) and CARD_ID.fullmatch(card_id) else None


def signed_in(request: Request) -> Signed:
    """Dependency for reads: a signed-in person, else 401 ``signed_out``."""
    signed = current(request)
    if signed is None:
        raise _unauthorized()
    return signed


def acting(request: Request) -> Signed:
    """Dependency for every state-changing request: Origin, session, then the CSRF token."""
    check_origin(request)
    signed = signed_in(request)
    sent = request.headers.get(CSRF_HEADER, "")
    if not sent or not hmac.compare_digest(sent.encode("utf-8"), signed.session.csrf_token.encode("utf-8")):
        raise ApiError(403, "csrf", FORBIDDEN_CSRF)
    return signed


SignedIn = Annotated[Signed, Depends(signed_in)]
Acting = Annotated[Signed, Depends(acting)]


def start_session(runtime: Runtime, person: Person, workspace: Workspace) -> tuple[str, Signed]:
    """A new session for ``person``: (the cookie's value, the signed-in view)."""
    return sessions.start_session(runtime.store.sessions, runtime.sessions, person, workspace, runtime.desk.now())


def set_session_cookie(response: Response, session_id: str) -> None:
    response.headers.append("set-cookie", f"{COOKIE}={session_id}; {COOKIE_ATTRIBUTES}")


def clear_session_cookie(response: Response) -> None:
    response.headers.append("set-cookie", f"{COOKIE}=; {COOKIE_ATTRIBUTES}; Max-Age=0")


NOTICES = {
    "bounce": "Card emails to {email} stopped on {date}: the address did not accept mail.",
    "complaint": "Card emails to {email} stopped on {date}: one of them was reported as spam.",
}
NOTICE_END = (" Cards still wait here. Once the address takes mail again, ask whoever runs countersign to send "
              "to it again.")


def email_notice(runtime: Runtime, person: Person) -> dict | None:
    """What the page tells a person whose address no longer gets card emails (a bounce or a
    complaint SES reported: countersign.surfaces.background.feedback), or None."""
    suppression = runtime.store.suppressions.address_suppression(person.email)
    if suppression is None:
        return None
    text = NOTICES.get(suppression.reason, NOTICES["bounce"]).format(email=person.email, date=iso(suppression.at)[:10])
    return {"reason": suppression.reason, "since": iso(suppression.at), "message": text + NOTICE_END}


def session_view(signed: Signed, runtime: Runtime | None = None) -> dict:
    p, w = signed.person, signed.workspace
    return {
        "person": {"id": p.id, "email": p.email, "name": p.name, "role": p.role},
        "workspace": {"id": w.id, "name": w.name},
        "csrfToken": signed.session.csrf_token,
        "emailNotice": None if runtime is None else email_notice(runtime, p),
    }


@router.get("/session", response_model=SessionView, responses=errors(401))
def get_session(request: Request, signed: SignedIn) -> dict:
    """Who is signed in, the CSRF token the page sends back on every change, and whether card
    emails to them stopped (a bounce or a spam complaint)."""
    return session_view(signed, runtime_of(request))


class SignoutBody(Strict):
    pushEndpoint: str | None = Field(default=None, max_length=2048,
                                     description="This device's push subscription (its endpoint), if it has one: "
                                                 "dropped with the session, so it gets no more of your cards")


@router.post("/signout", status_code=204, response_class=Response, responses=errors(401, 403, 422))
def signout(request: Request, body: SignoutBody | None = None) -> Response:
    """End the session and expire its cookie. Already signed out is fine (204). The device's push
    subscription the page names is removed first (only if it is the signed-in person's), in the
    same request: a session that ended leaves no device getting its person's cards."""
    check_origin(request)
    signed = current(request)
    response = Response(status_code=204)
    if signed is not None:
        acting(request)  # a live session ends only with its CSRF token
        runtime = runtime_of(request)
        if body is not None and body.pushEndpoint:
            runtime.store.push_subscriptions.remove_subscription(signed.workspace.id, signed.person.id,
                                                                 subscription_id(body.pushEndpoint))
        runtime.store.sessions.delete_session(signed.session.session_hash)
    clear_session_cookie(response)
    return response
