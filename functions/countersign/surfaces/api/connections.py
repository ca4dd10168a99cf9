"""The signed-in person's agent connections: list, create (token shown once), revoke.

Revoking withdraws the connection's pending cards through the desk, so each gets its audit entry
and the agent sees them as declined.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from ... import accounts
from ...core.cards import Refusal
from ...gate.cards import REVOKED_REASON
from ...gate.replies import iso
from ...store.errors import NotFound
from ...store.records import Connection
from .cards import CARD_ID
from .errors import ApiError, not_found
from .schemas import ConnectionList, NewConnectionBody, NewConnectionView, RevokedView, errors
from .session import Acting, SignedIn, runtime_of

router = APIRouter(tags=["connections"])

PAGE = 100


def connection_view(connection: Connection) -> dict:
    return {"id": connection.id, "name": connection.name, "createdAt": iso(connection.created_at),
            "revoked": connection.revoked}


@router.get("/connections", response_model=ConnectionList, responses=errors(401))
def list_connections(request: Request, signed: SignedIn) -> dict:
    connections = runtime_of(request).store.list_connections(signed.workspace.id, signed.person.id)
    return {"connections": [connection_view(c) for c in connections]}


@router.post("/connections", status_code=201, response_model=NewConnectionView, responses=errors(401, 403, 422))
def create(body: NewConnectionBody, request: Request, signed: Acting) -> dict:
    """A new agent credential for the signed-in person. The token is in this answer only."""
    runtime = runtime_of(request)
    new = accounts.create_connection(runtime.store, signed.workspace.id, signed.person.id, body.name,
                                     now=runtime.desk.now())
    return {"connection": connection_view(new.connection), "token": new.token,
            "mcpUrl": f"{runtime.desk.settings.public_url}/mcp"}


@router.post("/connections/{connection_id}/revoke", response_model=RevokedView, responses=errors(401, 403, 404))
def revoke(connection_id: str, request: Request, signed: Acting) -> dict:
    """Revoke a connection (its token stops working) and withdraw the cards it filed that still wait."""
    runtime = runtime_of(request)
    store, now = runtime.store, runtime.desk.now()
    if not CARD_ID.match(connection_id):
        raise not_found("connection")
    try:
        connection = store.get_connection(signed.workspace.id, connection_id)
    except NotFound:
        raise not_found("connection") from None
    if connection.person_id != signed.person.id:
        raise ApiError(403, "not_yours", "This connection belongs to someone else; only they can revoke it.")
    connection = store.revoke_connection(signed.workspace.id, connection_id, now)
    withdrawn, cursor = 0, None
    while True:  # every pending card of the person, filed through this connection
        cards, cursor = store.list_pending_cards(signed.workspace.id, signed.person.id, now, limit=PAGE, cursor=cursor)
        for listed_card in cards:
            if listed_card.connection_id != connection_id:
                continue
            try:  # a listed card carries no ticket: act on the card as stored
                card = store.get_card(signed.workspace.id, listed_card.id, now)
                runtime.desk.withdraw(card, now, f"person:{signed.person.id}", channel="page",
                                      reason=REVOKED_REASON.format(name=connection.name))
                withdrawn += 1
            except Refusal:  # answered or being confirmed meanwhile: it is no longer waiting
                pass
        if cursor is None:
            break
    return {"connection": connection_view(connection), "withdrawnCards": withdrawn}
