"""Access and refresh tokens: minting, rotating, and checking one on ``/mcp``.

Tokens are opaque: 256 random bits after a prefix (``csa_`` access, ``csr_`` refresh), stored
only as their SHA-256 hash with the grant they belong to (the connection), the client, the
resource (RFC 8707 audience) and the scopes. A token is good while it has not expired, names
this resource, and its connection is not revoked: revoking the connection ends every token of
the grant at once, because every use reads the connection.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.ids import new_secret_token
from ..gate.context import Principal
from ..store.errors import NotFound
from ..store.interface import Store
from ..store.oauth_records import ACCESS, REFRESH, IssuedCode, IssuedToken
from ..store.records import secret_hash
from . import ACCESS_PREFIX, ACCESS_TTL, REFRESH_PREFIX, REFRESH_TTL, same_resource

INVALID = "The access token is not valid: it expired, was revoked, or was never issued here."
OTHER_RESOURCE = "The access token was issued for another resource than this MCP server."


@dataclass(frozen=True)
class Minted:
    """A new token pair, in the clear only here (the caller hands it to the client once)."""

    access_token: str
    refresh_token: str
    expires_in: int
    scopes: tuple[str, ...]
    records: tuple[IssuedToken, IssuedToken]


def mint(of: IssuedCode | IssuedToken, now: int) -> Minted:
    """A new access token and refresh token for the grant ``of`` (a code, or a refresh token)."""
    access, refresh = new_secret_token(ACCESS_PREFIX), new_secret_token(REFRESH_PREFIX)

    def record(secret: str, kind: str, lifetime: int) -> IssuedToken:
        return IssuedToken(token_hash=secret_hash(secret), kind=kind, connection_id=of.connection_id,
                           workspace_id=of.workspace_id, person_id=of.person_id, client_id=of.client_id,
                           resource=of.resource, created_at=now, expires_at=now + lifetime, scopes=tuple(of.scopes))

    records = (record(access, ACCESS, ACCESS_TTL), record(refresh, REFRESH, REFRESH_TTL))
    return Minted(access, refresh, ACCESS_TTL, tuple(of.scopes), records)


def is_oauth_token(token: str) -> bool:
    return token.startswith((ACCESS_PREFIX, REFRESH_PREFIX))


def verify_access(store: Store, token: str, resource: str | None, now: int) -> Principal | str:
    """The principal an access token acts as, or why it is refused (a sentence for the 401).

    ``resource``: this server's resource URL; None refuses every OAuth token (a server that
    cannot say what it is cannot check an audience)."""
    if not token.startswith(ACCESS_PREFIX):
        return INVALID
    issued = store.get_issued_token(secret_hash(token), now)
    if issued is None or issued.kind != ACCESS:
        return INVALID
    if resource is None or not same_resource(issued.resource, resource):
        return OTHER_RESOURCE
    try:
        connection = store.get_connection(issued.workspace_id, issued.connection_id)
        if connection.revoked:
            return "This connection was revoked."
        workspace = store.get_workspace(issued.workspace_id)
        person = store.get_person(issued.workspace_id, connection.person_id)
    except NotFound:
        return INVALID
    return Principal(workspace=workspace, person=person, connection=connection)


def grant_is_live(store: Store, workspace_id: str, connection_id: str) -> bool:
    """Whether the grant's connection still exists and is not revoked."""
    try:
        return not store.get_connection(workspace_id, connection_id).revoked
    except NotFound:
        return False
