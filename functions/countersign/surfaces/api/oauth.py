"""The consent step of OAuth (docs/oauth.md): what the confirm page shows at
``/confirm?authorize=<request id>`` and the person's Allow or Deny.

The MCP function's ``/oauth/authorize`` checked the request (client, redirect URI, PKCE,
resource) and stored it for 15 minutes; here the signed-in person reads it and answers it once.
Both answers need the page's Origin, session and CSRF token. The answer is the URL the page sends
the person to: the client's registered redirect URI with ``code`` (or ``error``), ``state`` and
``iss``. The page navigates there at once and keeps no copy.
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request

from ...core.times import iso
from ...identity.oauth import grants
from ...identity.oauth.redirects import authority_of, host_of, is_loopback
from ...identity.sessions import Signed
from ...store.authorizations import PendingAuthorization
from ...store.hashes import secret_hash
from .connections import connection_view
from .errors import ApiError
from .schemas import AllowBody, ConsentAnswer, ConsentView, errors
from .session import Acting, SignedIn, runtime_of

router = APIRouter(tags=["oauth"])

REQUEST_ID = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
GONE = ("This connection request is unknown, expired (after 15 minutes) or already answered. "
        "Start connecting again from your MCP client.")


def _gone() -> ApiError:
    return ApiError(404, "authorization_not_found", GONE)


def _pending(request: Request, request_id: str) -> PendingAuthorization:
    if not REQUEST_ID.fullmatch(request_id):
        raise _gone()
    runtime = runtime_of(request)
    found = runtime.store.authorizations.get_pending_authorization(secret_hash(request_id), runtime.desk.now())
    if found is None:
        raise _gone()
    return found


def _take(request: Request, request_id: str) -> PendingAuthorization:
    runtime = runtime_of(request)
    taken = runtime.store.authorizations.take_pending_authorization(secret_hash(request_id), runtime.desk.now())
    if taken is None:  # answered meanwhile (another tab, a double click) or just expired
        raise _gone()
    return taken


def _workspaces(signed: Signed) -> list[dict]:
    """Where the person may make the connection: every workspace they belong to (one, today)."""
    return [{"id": signed.workspace.id, "name": signed.workspace.name}]


@router.get("/oauth/requests/{request_id}", response_model=ConsentView, responses=errors(401, 404))
def describe(request_id: str, request: Request, signed: SignedIn) -> dict:
    """Who asks to connect, where the answer goes, and the workspaces the person may choose from."""
    pending = _pending(request, request_id)
    client_host = authority_of(pending.client_id) if pending.metadata_document else host_of(pending.redirect_uri)
    vouched = grants.vouched_by(pending)
    return {
        "client": {"name": grants.connection_name(pending), "clientId": pending.client_id, "host": client_host,
                   "metadataDocument": pending.metadata_document, "verified": vouched is not None,
                   "verifiedBy": vouched, "namedItself": bool(pending.client_name.strip())},
        "redirectUri": pending.redirect_uri,
        "redirectHost": host_of(pending.redirect_uri),
        "loopback": is_loopback(pending.redirect_uri),
        "workspaces": _workspaces(signed),
        "expiresAt": iso(pending.expires_at),
    }


@router.post("/oauth/requests/{request_id}/allow", response_model=ConsentAnswer, responses=errors(401, 403, 404, 422))
def allow(request_id: str, body: AllowBody, request: Request, signed: Acting) -> dict:
    """Allow: a connection named after the client, and a code for it in the redirect."""
    _pending(request, request_id)
    if body.workspaceId not in {w["id"] for w in _workspaces(signed)}:
        raise ApiError(403, "not_yours", "You can connect an agent only to a workspace you belong to.")
    pending = _take(request, request_id)
    runtime = runtime_of(request)
    allowed = grants.allow(runtime.desk, pending, signed.person, signed.workspace)
    return {"redirectTo": allowed.redirect_to, "connection": connection_view(allowed.connection, grant=allowed.grant)}


@router.post("/oauth/requests/{request_id}/deny", response_model=ConsentAnswer, responses=errors(401, 403, 404))
def deny(request_id: str, request: Request, signed: Acting) -> dict:
    """Deny: nothing is created; the client hears ``access_denied``."""
    pending = _take(request, request_id)
    return {"redirectTo": grants.deny(runtime_of(request).desk, pending), "connection": None}
