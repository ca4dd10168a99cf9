"""The signed-in person's agent connections: list, create (token shown once), revoke.

Revoking withdraws the connection's pending cards through the desk, so each gets its audit entry
and the agent sees them as declined.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from ...core.times import iso
from ...identity import accounts
from ...identity.oauth.grants import earlier_authorizations, settle
from ...identity.oauth.redirects import host_of
from ...store.connections import Connection
from ...store.errors import NotFound
from ...store.grants import OAuthGrant
from .errors import ApiError, not_found
from .schemas import ConnectionList, NewConnectionBody, NewConnectionView, RevokedView, errors
from .session import CARD_ID, Acting, SignedIn, runtime_of

router = APIRouter(tags=["connections"])


def connection_view(connection: Connection, last_used: int | None = None, grant: OAuthGrant | None = None,
                    latest: str | None = None) -> dict:
    """``latest``: for an earlier authorization of a client allowed again, the id of its latest one."""
    view = {"id": connection.id, "name": connection.name, "createdAt": iso(connection.created_at),
            "revoked": connection.revoked, "revokedReason": connection.revoked_reason if connection.revoked else None,
            "revokedWhy": accounts.revoked_why(connection),
            "lastUsedAt": None if last_used is None else iso(last_used), "oauth": None}
    if grant is not None:
        view["oauth"] = {"clientId": grant.client_id, "redirectHost": host_of(grant.redirect_uri),
                         "connected": grant.code_hash is None, "earlierOf": latest}
    return view


def connection_views(settled: list[tuple[Connection, OAuthGrant | None]], used: dict[str, int]) -> list[dict]:
    """Each of the person's connections as the page and ``countersign connection list`` show them."""
    latest = earlier_authorizations(settled)
    return [connection_view(c, used.get(c.id), grant, latest.get(c.id)) for c, grant in settled]


@router.get("/connections", response_model=ConnectionList, responses=errors(401))
def list_connections(request: Request, signed: SignedIn) -> dict:
    """The person's connections, with when each was last used and, for OAuth clients, which one."""
    runtime = runtime_of(request)
    store = runtime.store
    grants = {g.connection_id: g for g in store.grants.list_oauth_grants(signed.workspace.id, signed.person.id)}
    used = store.connections.connections_last_used(signed.workspace.id)
    listed = store.connections.list_connections(signed.workspace.id, signed.person.id)
    settled = settle(runtime.desk, signed.workspace.id, listed, grants, used)
    return {"connections": connection_views(settled, used)}


@router.post("/connections", status_code=201, response_model=NewConnectionView, responses=errors(401, 403, 422))
def create(body: NewConnectionBody, request: Request, signed: Acting) -> dict:
    """A new agent credential for the signed-in person. The token is in this answer only."""
    runtime = runtime_of(request)
    new = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, signed.workspace.id,
                                     signed.person.id, body.name,
                                     now=runtime.desk.now())
    return {"connection": connection_view(new.connection), "token": new.token,
            "mcpUrl": f"{runtime.desk.settings.public_url}/mcp"}


@router.post("/connections/{connection_id}/revoke", response_model=RevokedView, responses=errors(401, 403, 404))
def revoke(connection_id: str, request: Request, signed: Acting) -> dict:
    """Revoke a connection (its token stops working) and withdraw the cards it filed that still wait."""
    runtime = runtime_of(request)
    store = runtime.store
    if not CARD_ID.fullmatch(connection_id):
        raise not_found("connection")
    try:
        connection = store.connections.get_connection(signed.workspace.id, connection_id)
    except NotFound:
        raise not_found("connection") from None
    if connection.person_id != signed.person.id:
        raise ApiError(403, "not_yours", "This connection belongs to someone else; only they can revoke it.")
    connection, withdrawn = accounts.revoke_connection(runtime.desk, signed.workspace.id, connection,
                                                       actor=f"person:{signed.person.id}", reason=accounts.BY_PERSON)
    used = runtime.store.connections.connections_last_used(signed.workspace.id).get(connection.id)
    grants = {g.connection_id: g for g in runtime.store.grants.list_oauth_grants(signed.workspace.id, signed.person.id)}
    return {"connection": connection_view(connection, used, grants.get(connection.id)), "withdrawnCards": withdrawn}
