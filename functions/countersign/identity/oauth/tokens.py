"""Access and refresh tokens: minting, rotating, and checking one on ``/mcp``.

Tokens are opaque: 256 random bits after a prefix (``csa_`` access, ``csr_`` refresh), stored
only as their SHA-256 hash with the grant they belong to (the connection), the client, the
resource (RFC 8707 audience) and the scopes. A token is good while it has not expired, names
this resource, and its connection is not revoked: revoking the connection ends every token of
the grant at once, because every use reads the connection.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.ids import new_secret_token
from ...store.authorizations import IssuedCode
from ...store.callers import CallerReads, Owner, Owners
from ...store.connections import ConnectionStore
from ...store.errors import NotFound
from ...store.grants import ACCESS, REFRESH, GrantStore, IssuedToken
from ...store.hashes import secret_hash
from ...store.limits import RequestCounts
from ..principal import Principal
from . import ACCESS_PREFIX, ACCESS_TTL, REFRESH_PREFIX, REFRESH_TTL, same_resource

INVALID = "The access token is not valid: it expired, was revoked, or was never issued here."
OTHER_RESOURCE = "The access token was issued for another resource than this MCP server."
REVOKED = "This connection was revoked."


@dataclass(frozen=True)
class Minted:
    """A new access token and (for a client that may refresh) refresh token, in the clear only
    here (the caller hands them to the client once)."""

    access_token: str
    refresh_token: str | None
    expires_in: int
    scopes: tuple[str, ...]
    records: tuple[IssuedToken, ...]


def mint(of: IssuedCode | IssuedToken, now: int, *, refresh_too: bool = True) -> Minted:
    """A new access token and refresh token for the grant ``of`` (a code, or a refresh token);
    without ``refresh_too`` (a client that did not register the refresh grant), no refresh token:
    it could never be used."""
    access, refresh = new_secret_token(ACCESS_PREFIX), new_secret_token(REFRESH_PREFIX)

    def record(secret: str, kind: str, lifetime: int) -> IssuedToken:
        return IssuedToken(token_hash=secret_hash(secret), kind=kind, connection_id=of.connection_id,
                           workspace_id=of.workspace_id, person_id=of.person_id, client_id=of.client_id,
                           resource=of.resource, created_at=now, expires_at=now + lifetime, scopes=tuple(of.scopes))

    if not refresh_too:
        return Minted(access, None, ACCESS_TTL, tuple(of.scopes), (record(access, ACCESS, ACCESS_TTL),))
    records = (record(access, ACCESS, ACCESS_TTL), record(refresh, REFRESH, REFRESH_TTL))
    return Minted(access, refresh, ACCESS_TTL, tuple(of.scopes), records)


def is_oauth_token(token: str) -> bool:
    return token.startswith((ACCESS_PREFIX, REFRESH_PREFIX))


def verify_access(callers: CallerReads, grants: GrantStore, token: str, resource: str | None, now: int,
                  owners: Owners | None = None, counts: RequestCounts | None = None) -> Principal | str:
    """The principal an access token acts as, or why it is refused (a sentence for the 401).

    ``resource``: this server's resource URL; None refuses every OAuth token (a server that
    cannot say what it is cannot check an audience). ``owners``: what this process remembers of
    the tokens it has accepted, so that a token seen before is read with its connection and member
    in one request (:mod:`countersign.store.callers`). ``counts``: the request's counters against
    the request limits, read with them, and carried by the principal."""
    if not token.startswith(ACCESS_PREFIX):
        return INVALID
    token_hash = secret_hash(token)
    owner = owners.get(token_hash) if owners is not None else None
    found = callers.get_access_as(token_hash, owner, now, counts) if owner is not None else None
    if found is None:  # not seen here before: the token says whose it is, then one read of the rest
        issued = grants.get_issued_token(token_hash, now)
        refused = _refusal(issued, resource)
        if refused is not None or issued is None:
            return refused or INVALID
        owner = Owner(issued.workspace_id, issued.person_id, issued.connection_id)
        found = callers.get_access_as(token_hash, owner, now, counts)
        if found is None:  # its connection or member is gone (or it expired in between)
            return INVALID
        if owners is not None:
            owners.remember(token_hash, owner)
    issued, connection, workspace, person = found
    refused = _refusal(issued, resource) or (REVOKED if connection.revoked else None)
    return refused or Principal(workspace=workspace, person=person, connection=connection, counts=counts)


def _refusal(issued: IssuedToken | None, resource: str | None) -> str | None:
    """Why ``issued`` (as read) does not let its bearer in here, if it does not."""
    if issued is None or issued.kind != ACCESS:
        return INVALID
    if resource is None or not same_resource(issued.resource, resource):
        return OTHER_RESOURCE
    return None


def grant_is_live(connections: ConnectionStore, workspace_id: str, connection_id: str) -> bool:
    """Whether the grant's connection still exists and is not revoked."""
    try:
        return not connections.get_connection(workspace_id, connection_id).revoked
    except NotFound:
        return False
