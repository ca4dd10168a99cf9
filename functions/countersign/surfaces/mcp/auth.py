"""Bearer-token auth for ``/mcp``: the token names a connection; the connection names the
workspace and the person every card filed through it waits on (docs/security.md, "Connections and
bearer tokens").

Two kinds of token reach the same connection object: a connection's own token (``cs_``, made by
the CLI or on the Settings page), and an OAuth access token (``csa_``) of the connection a person
allowed on the consent page, accepted only for this resource (RFC 8707) and only while it has
not expired and its connection is not revoked (docs/oauth.md).

No or bad token, or a revoked connection → HTTP 401 with ``WWW-Authenticate``; it names the
protected resource metadata (RFC 9728) when the server knows its public URL. Only the token's
hash is looked up; the token itself is never logged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from ...gate.offload import IN_THREADS, Offload
from ...identity.oauth import SCOPE, resource_metadata_url, resource_of
from ...identity.oauth.tokens import REVOKED, is_oauth_token, verify_access
from ...identity.principal import Principal
from ...store import Store
from ...store.callers import Owner, Owners
from ...store.hashes import secret_hash
from ...store.limits import RequestCounts
from ..http.request_limits import check, counts_of

SCOPE_KEY = "countersign.principal"


def principal_of(request: Any) -> Principal | None:
    """The principal the middleware attached to this HTTP request (None if there is none)."""
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return None
    return scope.get(SCOPE_KEY)


def _bearer(scope: dict) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            text = value.decode("latin-1").strip()
            if text[:7].lower() == "bearer " and text[7:].strip():
                return text[7:].strip()
            return None
    return None


class BearerAuth:
    """ASGI middleware in front of the MCP app."""

    def __init__(self, app, store: Store, realm: str = "countersign", public_url: Callable[[], str] | None = None,
                 offload: Offload = IN_THREADS):
        """``public_url``: the live public URL (the resource is ``PUBLIC_URL/mcp``). Without it
        OAuth access tokens are refused (no audience to check) and 401s name no metadata.
        ``offload``: where recording a connection's use runs (:mod:`countersign.gate.offload`)."""
        self.app = app
        self.offload = offload
        self.store = store  # whole: a caller is read through four roles (callers, connections, grants, limits)
        self.realm = realm
        self.public_url = public_url
        self._noted: dict[str, int] = {}  # connection id → when this process last recorded its use
        # whose each token this process accepted is: the next call reads its records in one request
        self.owners = Owners()

    async def authenticate(self, token: str | None, counts: RequestCounts | None = None) -> Principal | str:
        """The principal ``token`` names, or why there is none. The lookups are reads, made on the
        event loop (SQLite's WAL readers never wait on a writer); recording the use is a write,
        which may wait for the write lock and the disk, so it runs off the loop
        (:meth:`~countersign.gate.offload.Offload.off_the_loop`). ``counts``: the request's
        counters against the request limits, read with the connection and its member, and carried
        by the principal (the gate takes them in the write that files or answers its card)."""
        outcome = self._authenticate(token, counts)
        if isinstance(outcome, Principal):
            due = self._use_due(outcome)
            if due is not None:
                connection = outcome.connection
                await self.offload.off_the_loop(self.store.connections.note_connection_use, connection.workspace_id,
                                                connection.id, due)
        return outcome

    def _use_due(self, principal: Principal) -> int | None:
        """Settings shows each connection's last use, to the minute: at most one write a minute
        per connection and process; the time to record, or None when this process did lately."""
        now, connection = int(time.time()), principal.connection
        if self._noted.get(connection.id, 0) > now - 60:
            return None
        self._noted[connection.id] = now
        if len(self._noted) > 10_000:
            self._noted.clear()
        return now

    def _authenticate(self, token: str | None, counts: RequestCounts | None = None) -> Principal | str:
        if not token:
            return "Authentication required: send Authorization: Bearer <connection token>."
        if is_oauth_token(token):
            resource = resource_of(self.public_url()) if self.public_url is not None else None
            return verify_access(self.store.callers, self.store.grants, token, resource, int(time.time()),
                                 self.owners, counts)
        token_hash = secret_hash(token)
        owner = self.owners.get(token_hash)
        found = self.store.callers.get_connection_as(token_hash, owner, counts) if owner is not None else None
        if found is None:  # not seen here before: the token says whose it is, then one read of the rest
            connection = self.store.connections.get_connection_by_token_hash(token_hash)
            if connection is None:
                return "The connection token is not valid."
            if connection.revoked:
                return REVOKED
            owner = Owner(connection.workspace_id, connection.person_id)
            found = self.store.callers.get_connection_as(token_hash, owner, counts)
            if found is None:  # its member was removed
                return "The connection token is not valid."
            self.owners.remember(token_hash, owner)
        known, workspace, person = found
        return REVOKED if known.revoked else Principal(workspace=workspace, person=person, connection=known,
                                                       counts=counts)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        token = _bearer(scope)
        counts = counts_of(scope)
        outcome = await self.authenticate(token, counts)
        if counts is not None and counts.seen is None:  # no caller, so no counters read: counted now
            await self.offload.off_the_loop(check, self.store.limits, counts)
        check(self.store.limits, counts)  # over a limit: 429 (countersign.surfaces.http.request_limits)
        if isinstance(outcome, str):
            return await self._unauthorized(send, outcome, has_token=token is not None)
        scope[SCOPE_KEY] = outcome
        # The SDK ties a stateful MCP session to the credential that opened it (and answers
        # "Session not found" to any other): tell it who this is.
        scope["user"] = AuthenticatedUser(AccessToken(
            token=outcome.connection.token_hash, client_id=outcome.connection.id, scopes=[],
            subject=outcome.person.id, claims={"iss": outcome.workspace.id},
        ))
        await self.app(scope, receive, send)

    async def _unauthorized(self, send, description: str, has_token: bool) -> None:
        challenge = f'Bearer realm="{self.realm}"'
        if self.public_url is not None:
            challenge += f', resource_metadata="{resource_metadata_url(self.public_url())}", scope="{SCOPE}"'
        if has_token:
            challenge += f', error="invalid_token", error_description="{description}"'
        body = json.dumps({"error": "invalid_token" if has_token else "unauthorized", "error_description": description})
        await send({
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", challenge.encode("latin-1")),
                (b"cache-control", b"no-store"),
            ],
        })
        await send({"type": "http.response.body", "body": body.encode("utf-8")})
