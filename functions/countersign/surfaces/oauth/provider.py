"""The authorization server's provider for the MCP SDK's ``mcp.server.auth`` handlers.

The SDK's handlers parse and check the protocol (``response_type=code``, PKCE S256 only, the
client's redirect URI and scopes, code expiry, ``redirect_uri`` and the PKCE verifier at the
token endpoint); this provider supplies what they leave to the server (docs/oauth.md):

* clients: registered here (RFC 7591, public clients only) or Client ID Metadata Documents,
  fetched by :mod:`countersign.identity.oauth.cimd` and cached;
* redirect URIs matched exactly, loopback ones on any port (:mod:`countersign.identity.oauth.redirects`);
* ``authorize``: the resource (RFC 8707) must be this server's; the request is stored for the
  person to answer on the confirm page;
* codes and refresh tokens are spent once; a second use ends the grant (the connection is
  revoked and its waiting cards withdrawn);
* every token names its connection: revoking the connection ends it.
"""

from __future__ import annotations

import contextlib
import logging
import re
import secrets
from typing import Any

import anyio
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    IdentityAssertionParams,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import InvalidRedirectUriError, InvalidScopeError, OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from ...gate.offload import Offload
from ...identity.accounts import CLIENT_REVOKED, CODE_REUSED, NOT_STORED, REFRESH_TOKEN_REUSED
from ...identity.oauth import (
    CONSENT_PARAMETER,
    CONSENT_PATH,
    REQUEST_TTL,
    SCOPE,
    UNUSED_CLIENT_TTL,
    issuer_of,
    resource_of,
    same_resource,
)
from ...identity.oauth.cimd import DocumentFetcher, DocumentRefused, is_document_url
from ...identity.oauth.grants import connected, end_grant
from ...identity.oauth.redirects import BadRedirect, check_redirect_uri, choose_redirect
from ...identity.oauth.tokens import grant_is_live, mint
from ...runtime import Runtime
from ...store.authorizations import IssuedCode, OAuthClientRecord, PendingAuthorization
from ...store.grants import ACCESS, REFRESH, IssuedToken
from ...store.hashes import secret_hash

log = logging.getLogger("countersign.oauth")

MAX_NAME = 100
S256_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")  # base64url of a SHA-256, unpadded


class Client(OAuthClientInformationFull):
    """A client as the SDK's handlers see it, with this server's redirect and scope rules."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        registered = [str(u) for u in self.redirect_uris or []]
        try:
            return AnyUrl(choose_redirect(registered, None if redirect_uri is None else str(redirect_uri)))
        except BadRedirect as bad:
            raise InvalidRedirectUriError(str(bad)) from None

    def validate_scope(self, requested_scope: str | None) -> list[str] | None:
        if requested_scope is None:
            return [SCOPE]
        scopes = requested_scope.split()
        if not scopes or any(s != SCOPE for s in scopes):
            raise InvalidScopeError(f"the only scope is {SCOPE!r}")
        return [SCOPE]


class CodeGrant(AuthorizationCode):
    record: IssuedCode


class RefreshGrant(RefreshToken):
    record: IssuedToken


class AccessGrant(AccessToken):
    record: IssuedToken


def _client(client_id: str, metadata: dict[str, Any]) -> Client:
    return Client.model_validate({**metadata, "client_id": client_id, "scope": SCOPE,
                                  "token_endpoint_auth_method": "none"})


class Provider:
    """``OAuthAuthorizationServerProvider`` over the store. ``fetcher`` fetches metadata documents."""

    def __init__(self, runtime: Runtime, fetcher: DocumentFetcher | None = None):
        self.runtime = runtime
        self.fetcher = fetcher or DocumentFetcher()

    @property
    def store(self):
        return self.runtime.store

    @property
    def offload(self) -> Offload:
        """Where the authorization server's writes run (:mod:`countersign.gate.offload`)."""
        return self.runtime.desk.offload

    def now(self) -> int:
        return self.runtime.desk.now()

    @property
    def issuer(self) -> str:
        return issuer_of(self.runtime.desk.settings.public_url)

    # -- clients ----------------------------------------------------------------------------------

    async def load_document(self, client_id: str) -> Client:
        """A metadata-document client, cached or fetched now; :class:`DocumentRefused` says why not."""
        cached = self.store.authorizations.get_oauth_client(client_id, self.now())
        if cached is not None:
            return _client(client_id, cached.metadata)
        with anyio.fail_after(self.fetcher.timeout + 1):
            fetched = await anyio.to_thread.run_sync(self.fetcher.fetch, client_id, abandon_on_cancel=True)
        now = self.now()
        record = OAuthClientRecord(client_id, fetched.document, now, now + fetched.cache_seconds)
        await self.offload.off_the_loop(self.store.authorizations.put_oauth_client, record)
        return _client(client_id, fetched.document)

    async def get_client(self, client_id: str) -> Client | None:
        if not client_id or len(client_id) > 2000:
            return None
        if is_document_url(client_id):
            try:
                return await self.load_document(client_id)
            except (DocumentRefused, TimeoutError) as refused:
                log.warning("client metadata document refused: %s", refused or "took too long")
                return None
        found = self.store.authorizations.get_oauth_client(client_id, self.now())
        return None if found is None else _client(client_id, found.metadata)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        """RFC 7591. Every client here is public (a native app or a CLI keeps no secret): the
        registration is answered with ``token_endpoint_auth_method`` ``none`` and no secret."""
        try:
            uris = [check_redirect_uri(str(u)) for u in client_info.redirect_uris or []]
        except BadRedirect as bad:
            raise RegistrationError("invalid_redirect_uri", str(bad)) from None
        if not 1 <= len(uris) <= 10:
            raise RegistrationError("invalid_redirect_uri", "register 1 to 10 redirect URIs")
        extra = set(client_info.grant_types) - {"authorization_code", "refresh_token"}
        if extra:
            raise RegistrationError("invalid_client_metadata", f"unsupported grant_types: {sorted(extra)}")
        name = "".join(c for c in (client_info.client_name or "") if c.isprintable()).strip()[:MAX_NAME] or None
        client_info.client_name = name
        client_info.client_secret = client_info.client_secret_expires_at = None
        client_info.token_endpoint_auth_method = "none"
        client_info.scope = SCOPE
        metadata = client_info.model_dump(mode="json", exclude_none=True,
                                          exclude={"client_id", "client_secret", "client_secret_expires_at"})
        now = self.now()
        record = OAuthClientRecord(client_info.client_id, metadata, now, now + UNUSED_CLIENT_TTL)
        await self.offload.off_the_loop(self.store.authorizations.put_oauth_client, record)

    # -- the authorization request ------------------------------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        resource = resource_of(self.runtime.desk.settings.public_url)
        if params.resource is not None and not same_resource(params.resource, resource):
            raise AuthorizeError("invalid_target", f"this server's only resource is {resource}")
        if not S256_CHALLENGE.fullmatch(params.code_challenge or ""):  # no verifier could ever match another
            raise AuthorizeError("invalid_request", "code_challenge is the S256 of a code_verifier: 43 base64url "
                                                    "characters (RFC 7636 §4.2)")
        request_id, now = secrets.token_urlsafe(32), self.now()
        await self.offload.off_the_loop(self.store.authorizations.put_pending_authorization, PendingAuthorization(
            request_hash=secret_hash(request_id), client_id=client.client_id, client_name=client.client_name or "",
            redirect_uri=str(params.redirect_uri),
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            code_challenge=params.code_challenge, resource=resource, created_at=now, expires_at=now + REQUEST_TTL,
            state=params.state, scopes=tuple(params.scopes or [SCOPE]),
            metadata_document=is_document_url(client.client_id),
        ))
        return f"{self.issuer}{CONSENT_PATH}?{CONSENT_PARAMETER}={request_id}"

    # -- codes --------------------------------------------------------------------------------------

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str
                                      ) -> CodeGrant | None:
        record = self.store.authorizations.get_issued_code(secret_hash(authorization_code), self.now())
        if record is None or record.client_id != client.client_id:
            return None
        if record.used_at is not None:  # a replay: the code may have been stolen
            await self._end_grant(record, CODE_REUSED)
            return None
        if not grant_is_live(self.store.connections, record.workspace_id, record.connection_id):
            return None
        return CodeGrant(code=authorization_code, scopes=list(record.scopes), expires_at=record.expires_at,
                         client_id=record.client_id, code_challenge=record.code_challenge,
                         redirect_uri=AnyUrl(record.redirect_uri),
                         redirect_uri_provided_explicitly=record.redirect_uri_provided_explicitly,
                         resource=record.resource, subject=record.person_id, record=record)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code: CodeGrant
                                          ) -> OAuthToken:
        record, now = authorization_code.record, self.now()
        if not await self.offload.off_the_loop(self.store.authorizations.spend_issued_code, record.code_hash, now):
            await self._end_grant(record, CODE_REUSED)
            raise TokenError("invalid_grant", "authorization code does not exist")
        minted = mint(record, now, refresh_too="refresh_token" in (client.grant_types or ()))
        try:
            await self.offload.off_the_loop(self.store.grants.put_issued_tokens, minted.records)
        except Exception:
            # The code is spent and no token was stored: the connection can never be used, so it
            # is ended (if the store takes that write) rather than listed as connected.
            with contextlib.suppress(Exception):
                await self._end_grant(record, NOT_STORED)
            raise
        try:
            await self.offload.off_the_loop(connected, self.store.grants, record)
        except Exception:  # the spent code says the same where connections are listed
            log.warning("could not mark the grant of connection %s connected", record.connection_id, exc_info=True)
        return OAuthToken(access_token=minted.access_token, expires_in=minted.expires_in,
                          scope=" ".join(minted.scopes), refresh_token=minted.refresh_token)

    # -- refresh tokens -----------------------------------------------------------------------------

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshGrant | None:
        record = self.store.grants.get_issued_token(secret_hash(refresh_token), self.now())
        if record is None or record.kind != REFRESH or record.client_id != client.client_id:
            return None
        if record.used_at is not None:  # a rotated token came back: whoever holds it, the grant ends
            await self._end_grant(record, REFRESH_TOKEN_REUSED)
            return None
        if not grant_is_live(self.store.connections, record.workspace_id, record.connection_id):
            return None
        return RefreshGrant(token=refresh_token, client_id=record.client_id, scopes=list(record.scopes),
                            expires_at=record.expires_at, resource=record.resource, subject=record.person_id,
                            record=record)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshGrant,
                                     scopes: list[str]) -> OAuthToken:
        record, now = refresh_token.record, self.now()
        minted = mint(record, now)
        rotated = await self.offload.off_the_loop(self.store.grants.rotate_refresh_token, record.token_hash, now,
                                                  minted.records)
        if not rotated:
            await self._end_grant(record, REFRESH_TOKEN_REUSED)
            raise TokenError("invalid_grant", "refresh token does not exist")
        return OAuthToken(access_token=minted.access_token, expires_in=minted.expires_in,
                          scope=" ".join(minted.scopes), refresh_token=minted.refresh_token)

    # -- revocation (RFC 7009) ----------------------------------------------------------------------

    def find_token(self, token: str) -> IssuedToken | None:
        """An access or refresh token of any state (for revocation)."""
        return self.store.grants.get_issued_token(secret_hash(token), self.now())

    async def load_access_token(self, token: str) -> AccessGrant | None:
        record = self.find_token(token)
        if record is None or record.kind != ACCESS:
            return None
        return AccessGrant(token=token, client_id=record.client_id, scopes=list(record.scopes),
                           expires_at=record.expires_at, resource=record.resource, subject=record.person_id,
                           record=record)

    async def revoke(self, record: IssuedToken) -> None:
        """Revoking either token of a grant ends the grant: the connection, its tokens, its cards."""
        await self._end_grant(record, CLIENT_REVOKED)

    async def revoke_token(self, token: AccessGrant | RefreshGrant) -> None:
        await self.revoke(token.record)

    async def _end_grant(self, record: IssuedCode | IssuedToken, reason: str) -> None:
        """End the grant ``record`` belongs to, for ``reason`` (writes: off the event loop, as every
        write here)."""
        await self.offload.off_the_loop(end_grant, self.runtime.desk, record.workspace_id, record.connection_id,
                                        reason)

    async def exchange_identity_assertion(self, client: OAuthClientInformationFull, params: IdentityAssertionParams
                                          ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "only authorization_code and refresh_token are supported")
