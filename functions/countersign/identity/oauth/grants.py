"""Grants: what the person's Allow creates, what Deny answers, and how a grant ends.

* **Allow** answers the authorization request once: it creates a **connection** (the same object
  ``countersign connection create`` makes, named after the client), records the grant (which
  client, where it was sent back to), and issues a code (5 minutes, single use, only its hash
  stored) bound to the request's client, redirect URI, PKCE challenge and resource. The answer is
  the client's redirect URI with ``code``, ``state`` and ``iss`` (RFC 9207).
* Until the client is known to have spent the code, the grant keeps the code's hash
  (``code_hash``). Where connections are listed, :func:`settle` decides each such grant by facts
  every release writes (the code spent, the connection used), so a code exchanged by an older
  instance during a rolling deploy still counts: **connected**, still **waiting** (the code may
  yet be spent), or **unfinished** (expired unspent: the connection is revoked).
* **Deny** answers it with ``error=access_denied`` (and ``state``, ``iss``); nothing is created.
* A grant **ends** when its connection is revoked: by the person in Settings, by the client
  (RFC 7009), or by the server when a spent refresh token or code comes back (a sign that it
  was stolen). Revoking withdraws the connection's waiting cards, as the Settings page always did.

No MCP SDK here: the API function answers the consent page with these.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from ...core.ids import new_secret_token
from ...store.authorizations import IssuedCode, PendingAuthorization
from ...store.connections import Connection
from ...store.errors import NotFound
from ...store.grants import GrantStore, OAuthGrant
from ...store.hashes import secret_hash
from ...store.workspaces import Person, Workspace
from .. import accounts
from ..accounts import NEVER_FINISHED, NOT_STORED, revoke_connection
from ..desk import Desk
from . import CODE_PREFIX, CODE_TTL, issuer_of
from .cimd import is_document_url
from .redirects import host_of, response_url

log = logging.getLogger("countersign.oauth")

MAX_NAME = 100
UNFINISHED_GRACE = 60  # seconds past a code's expiry before its unexchanged grant is ended


def connection_name(pending: PendingAuthorization) -> str:
    """A connection is named after its client: the name it gave, else its host."""
    name = (pending.client_name or "").strip()
    if not name:
        name = host_of(pending.client_id) if "://" in pending.client_id else host_of(pending.redirect_uri)
    return name[:MAX_NAME] or "OAuth client"


def vouched_by(pending: PendingAuthorization) -> str | None:
    """The host that vouches for the client, if one does: a metadata document's host when the
    client returns to that same host over https. Then the name is what that host publishes, and
    only that host receives the answer. Otherwise (a registered client, whose name is whatever it
    sent; a document whose client returns to an app on this device, which any app can listen as,
    or to another host) nothing ties the name to anyone: the consent page shows it as the
    client's claim."""
    if not pending.metadata_document:
        return None
    host = host_of(pending.client_id)
    returns = urlsplit(pending.redirect_uri)
    return host if returns.scheme == "https" and host_of(pending.redirect_uri) == host else None


@dataclass(frozen=True)
class Allowed:
    connection: Connection
    grant: OAuthGrant
    redirect_to: str  # the client's redirect URI with the code: handed to the page once, never kept


def allow(desk: Desk, pending: PendingAuthorization, person: Person, workspace: Workspace) -> Allowed:
    """The person's Allow on a request already taken from the store (answered once)."""
    store, now = desk.store, desk.now()
    made = accounts.create_connection(store.workspaces, store.connections, workspace.id, person.id,
                                      connection_name(pending), now=now)
    # The connection's own bearer token is dropped unseen: an OAuth connection acts only through
    # the tokens of its grant.
    code = new_secret_token(CODE_PREFIX)
    try:
        client = store.authorizations.get_oauth_client(pending.client_id, now)
        if client is not None and client.expires_at is not None and not is_document_url(client.client_id):
            # A registered client (not a metadata document, which is fetched again) that a person
            # has allowed is kept for good: its refresh tokens name it.
            store.authorizations.put_oauth_client(replace(client, expires_at=None))
        grant = OAuthGrant(
            connection_id=made.connection.id, workspace_id=workspace.id, person_id=person.id,
            client_id=pending.client_id, client_name=made.connection.name, redirect_uri=pending.redirect_uri,
            created_at=now, code_hash=secret_hash(code),
        )
        store.grants.put_oauth_grant(grant)
        store.authorizations.put_issued_code(IssuedCode(
            code_hash=secret_hash(code), client_id=pending.client_id, connection_id=made.connection.id,
            workspace_id=workspace.id, person_id=person.id, redirect_uri=pending.redirect_uri,
            redirect_uri_provided_explicitly=pending.redirect_uri_provided_explicitly,
            code_challenge=pending.code_challenge, resource=pending.resource, expires_at=now + CODE_TTL,
            scopes=pending.scopes,
        ))
    except Exception:
        # Three writes, not one transaction: a connection whose grant or code was never stored can
        # never be used, so it is revoked at once rather than left in Settings as if it worked.
        log.warning("oauth allow failed after its connection was made; revoking connection %s", made.connection.id)
        try:
            store.connections.revoke_connection(workspace.id, made.connection.id, now, NOT_STORED)
        except Exception:  # the store refuses writes altogether: the connection has no token anyone holds
            log.exception("could not revoke connection %s", made.connection.id)
        raise
    issuer = issuer_of(desk.settings.public_url)
    return Allowed(made.connection, grant,
                   response_url(pending.redirect_uri, code=code, state=pending.state, iss=issuer))


def deny(desk: Desk, pending: PendingAuthorization) -> str:
    """Where Deny sends the person: back to the client, with ``access_denied``."""
    return response_url(pending.redirect_uri, error="access_denied",
                        error_description="The person denied this connection.", state=pending.state,
                        iss=issuer_of(desk.settings.public_url))


def same_client(grant: OAuthGrant) -> tuple[str, str, str]:
    """What tells one client from another to the person: a metadata document's URL (one app, however
    many installations), else the name a registered client gave itself; and the host it returns to.

    A registered client registers again whenever it has lost its registration (each run of a client
    that keeps nothing), under a new ``client_id``: its name and redirect host are all that stay the
    same. They are the client's claim, so this only groups what Settings lists; it never ends a
    connection (docs/oauth.md, "Allowed again")."""
    returns_to = host_of(grant.redirect_uri)
    if is_document_url(grant.client_id):
        return "document", grant.client_id, returns_to
    return "registered", grant.client_name, returns_to


def earlier_authorizations(settled: list[tuple[Connection, OAuthGrant | None]]) -> dict[str, str]:
    """For each earlier authorization of a client the person allowed more than once
    (:func:`same_client`), the id of that client's latest one: the last allowed that is still live,
    else the last allowed. ``settled`` is in creation order (as :func:`settle` returns it)."""
    groups: dict[tuple[str, str, str], list[Connection]] = {}
    for connection, grant in settled:
        if grant is not None:
            groups.setdefault(same_client(grant), []).append(connection)
    under: dict[str, str] = {}
    for allowed in groups.values():
        latest = next((c for c in reversed(allowed) if not c.revoked), allowed[-1])
        under.update((c.id, latest.id) for c in allowed if c.id != latest.id)
    return under


CONNECTED, WAITING, UNFINISHED = "connected", "waiting", "unfinished"


def judge(grant: OAuthGrant, spent: bool | None, used: bool, now: int) -> str:
    """Where ``grant``'s client stands. ``spent``: whether its code was spent (None: the code is no
    longer kept); ``used``: whether its connection was ever used. Unfinished only when the code is
    known unspent and has expired, with a minute's grace for an exchange under way as it did. A
    code no longer kept tells nothing (an earlier release may have spent it, for a client that has
    not called yet): the grant counts as connected, since revoking a working client is the worse
    mistake."""
    if grant.code_hash is None or spent is not False or used:
        return CONNECTED
    return WAITING if now < grant.created_at + CODE_TTL + UNFINISHED_GRACE else UNFINISHED


def settle(desk: Desk, workspace_id: str, connections: list[Connection], grants: dict[str, OAuthGrant],
           used: dict[str, int]) -> list[tuple[Connection, OAuthGrant | None]]:
    """Each of ``connections`` with its grant, once every OAuth grant still holding its code's hash
    is decided (:func:`judge`): a connected one forgets the hash; an unfinished one has its
    connection revoked (it has no token and never will, so it is not left in Settings as if it
    worked). Called where connections are listed (the Settings page, ``countersign connection
    list``); nothing else needs it to have happened."""
    now, out = desk.now(), []
    for connection in connections:
        grant = grants.get(connection.id)
        if grant is not None and grant.code_hash is not None and not connection.revoked:
            try:
                connection, grant = _settle_one(desk, workspace_id, connection, grant, connection.id in used, now)
            except Exception:  # a tidy-up, not the listing: the connection is listed as it stands
                log.warning("could not settle the OAuth grant of connection %s; listed as it stands", connection.id,
                            exc_info=True)
        out.append((connection, grant))
    return out


def _settle_one(desk: Desk, workspace_id: str, connection: Connection, grant: OAuthGrant, used: bool,
                now: int) -> tuple[Connection, OAuthGrant]:
    assert grant.code_hash is not None
    spent = None if used else desk.store.authorizations.issued_code_spent(grant.code_hash)
    state = judge(grant, spent, used, now)
    if state == CONNECTED:
        desk.store.grants.forget_grant_code(workspace_id, connection.id)
        grant = replace(grant, code_hash=None)
    elif state == UNFINISHED:
        connection, _ = revoke_connection(desk, workspace_id, connection, actor="system", channel="system",
                                          reason=NEVER_FINISHED)
        log.info("connection %s revoked: its OAuth client never exchanged its code", connection.id)
    return connection, grant


def connected(grants: GrantStore, record: IssuedCode) -> None:
    """The client spent the code of its grant and has its tokens: the grant forgets the code."""
    grants.forget_grant_code(record.workspace_id, record.connection_id)


def end_grant(desk: Desk, workspace_id: str, connection_id: str, reason: str) -> None:
    """The server ends a grant (a replayed code or refresh token, the client revoking, tokens that
    could not be stored): the connection is revoked as if its person had, its waiting cards
    withdrawn, and ``reason`` (``CODE_REUSED``, ``REFRESH_TOKEN_REUSED``, ``CLIENT_REVOKED`` or
    ``NOT_STORED`` of :mod:`..accounts`) recorded with it for Settings to show."""
    try:
        connection = desk.store.connections.get_connection(workspace_id, connection_id)
    except NotFound:
        return
    if not connection.revoked:
        revoke_connection(desk, workspace_id, connection, actor="system", channel="system", reason=reason)
        log.warning("connection %s revoked: %s", connection_id, reason)
