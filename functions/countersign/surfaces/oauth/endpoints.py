"""The OAuth endpoints on the public origin, beside ``/mcp`` (docs/oauth.md):

| path | what |
|---|---|
| ``/.well-known/oauth-protected-resource/mcp`` | RFC 9728: the resource ``/mcp`` and its authorization server |
| ``/.well-known/oauth-authorization-server`` | RFC 8414 metadata (CIMD and RFC 9207 advertised) |
| ``/oauth/authorize`` | the SDK's handler: checks the request, stores it, sends the person to the consent page |
| ``/oauth/token`` | the SDK's handler: code + PKCE, or a refresh token (rotated); the resource checked |
| ``/oauth/register`` | the SDK's RFC 7591 handler (public clients) |
| ``/oauth/revoke`` | RFC 7009 for public clients: revoking a token ends its grant |

Served by the MCP function on AWS (the SDK is loaded there already) and by the local server.
Responses carry the API's security headers and ``Cache-Control: no-store``; the endpoints a
browser-based client calls allow any origin (no cookies are involved).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.auth.settings import ClientRegistrationOptions
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Match, Route, Router, request_response

from ...identity import oauth
from ...identity.oauth import (
    BAD_REDIRECT,
    BAD_REQUEST,
    CLIENT_DOCUMENT_REFUSED,
    CONSENT_PATH,
    REFUSED_PARAMETER,
    SCOPE,
    UNKNOWN_CLIENT,
    issuer_of,
    resource_of,
    same_resource,
)
from ...identity.oauth.cimd import DocumentFetcher, DocumentRefused, is_document_url
from ...identity.oauth.redirects import response_url
from ...runtime import Runtime
from ..api.guard import Guard
from .provider import Provider

PATHS = frozenset({
    oauth.PROTECTED_RESOURCE_METADATA_PATH, oauth.AUTHORIZATION_SERVER_METADATA_PATH, oauth.AUTHORIZE_PATH,
    oauth.TOKEN_PATH, oauth.REGISTER_PATH, oauth.REVOKE_PATH,
})
MAX_BODY = 16 * 1024
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def serves(path: str) -> bool:
    """Whether ``path`` is one of the OAuth endpoints (the rest of the origin is someone else's)."""
    return path in PATHS


def _error(status: int, error: str, description: str) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=status, headers=NO_STORE)


def _cors(app, methods: list[str]):
    return CORSMiddleware(app, allow_origins=["*"], allow_methods=methods,
                          allow_headers=["Authorization", "Content-Type", "MCP-Protocol-Version"])


class _ConsentNoted:
    """The provider as one authorization request's handler sees it: what :meth:`Provider.authorize`
    answers (the consent page's address) is kept in :attr:`consent_url`, so the request can tell that
    redirect from one back to the client with an error. Made per request: nothing is shared."""

    def __init__(self, provider: Provider):
        self.provider = provider
        self.consent_url: str | None = None
        self.client_found = False

    async def get_client(self, client_id: str) -> Any:
        client = await self.provider.get_client(client_id)
        self.client_found = client is not None
        return client

    async def authorize(self, client: Any, params: Any) -> str:
        self.consent_url = await self.provider.authorize(client, params)
        return self.consent_url


def _from_a_browser(request: Request) -> bool:
    """Whether a person's browser is navigating here (rather than a program calling the endpoint):
    it says so with ``Sec-Fetch-Mode: navigate``, or asks for HTML."""
    return (request.headers.get("sec-fetch-mode") == "navigate"
            or "text/html" in request.headers.get("accept", "").lower())


GRANTS = ("authorization_code", "refresh_token")
VERIFIER = re.compile(r"[A-Za-z0-9._~-]{43,128}")
_REDIRECT_MISMATCH = "redirect_uri did not match the one used when creating auth code"


@dataclass
class _TokenEndpoint(TokenHandler):
    """The SDK's token handler, after checking the ``resource`` parameter (RFC 8707), which the
    SDK parses and does not check, and with RFC 6749 §5.2's error codes where the SDK answers
    ``invalid_request``: a grant type this server has none of is ``unsupported_grant_type``, and a
    code presented with another ``redirect_uri`` than it was issued for ``invalid_grant``."""

    server: OAuthEndpoints | None = None

    async def handle(self, request: Request):
        form = await request.form()  # Starlette keeps the parsed form for the handler
        resource, grant = form.get("resource"), form.get("grant_type")
        if self.server is not None and isinstance(resource, str) and not same_resource(resource, self.server.resource):
            return _error(400, "invalid_target", f"this server's only resource is {self.server.resource}")
        if isinstance(grant, str) and grant and grant not in GRANTS:
            return _error(400, "unsupported_grant_type", f"this server's grant types are {' and '.join(GRANTS)}")
        verifier = form.get("code_verifier")
        if grant == "authorization_code" and isinstance(verifier, str) and not VERIFIER.fullmatch(verifier):
            return _error(400, "invalid_request", "code_verifier is 43 to 128 of the characters A-Z a-z 0-9 - . _ ~ "
                                                  "(RFC 7636 §4.1)")
        answer = await super().handle(request)
        if answer.status_code == 400 and _REDIRECT_MISMATCH.encode() in bytes(answer.body):
            return _error(400, "invalid_grant", "redirect_uri is not the one the authorization code was issued for")
        return answer


class OAuthEndpoints:
    """An ASGI app answering :data:`PATHS`; ``fetcher`` fetches client metadata documents."""

    def __init__(self, runtime: Runtime, fetcher: DocumentFetcher | None = None):
        self.runtime = runtime
        self.provider = Provider(runtime, fetcher)
        authenticator = ClientAuthenticator(self.provider)
        registration = ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE])
        token = _TokenEndpoint(self.provider, authenticator, server=self)
        register = RegistrationHandler(self.provider, registration)
        self.routes = [
            Route(oauth.PROTECTED_RESOURCE_METADATA_PATH, _cors(request_response(self.resource_metadata),
                                                               ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"]),
            Route(oauth.AUTHORIZATION_SERVER_METADATA_PATH, _cors(request_response(self.server_metadata),
                                                                 ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"]),
            Route(oauth.AUTHORIZE_PATH, self.authorize, methods=["GET", "POST"]),
            Route(oauth.TOKEN_PATH, _cors(request_response(token.handle), ["POST", "OPTIONS"]),
                  methods=["POST", "OPTIONS"]),
            Route(oauth.REGISTER_PATH, _cors(request_response(register.handle), ["POST", "OPTIONS"]),
                  methods=["POST", "OPTIONS"]),
            Route(oauth.REVOKE_PATH, _cors(request_response(self.revoke), ["POST", "OPTIONS"]),
                  methods=["POST", "OPTIONS"]),
        ]
        self.app = Guard(Router(self.routes), max_body=MAX_BODY)

    @staticmethod
    def serves(path: str) -> bool:
        """Whether ``path`` is one of these endpoints (:func:`serves`)."""
        return serves(path)

    @property
    def fetcher(self) -> DocumentFetcher:
        return self.provider.fetcher

    @fetcher.setter
    def fetcher(self, fetcher: DocumentFetcher) -> None:
        self.provider.fetcher = fetcher

    @property
    def issuer(self) -> str:
        return issuer_of(self.runtime.desk.settings.public_url)

    @property
    def resource(self) -> str:
        return resource_of(self.runtime.desk.settings.public_url)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            for route in self.routes:  # a known path asked with another method: 405, as OAuth errors are shaped
                match, _ = route.matches(scope)
                if match is Match.FULL:
                    break
                if match is Match.PARTIAL:
                    allowed = ", ".join(sorted(route.methods or ()))
                    refused = _error(405, "invalid_request", f"{route.path} accepts {allowed}, not {scope['method']}.")
                    refused.headers["Allow"] = allowed
                    return await refused(scope, receive, send)
        await self.app(scope, receive, send)

    # -- metadata -----------------------------------------------------------------------------------

    async def resource_metadata(self, request: Request) -> Response:
        return JSONResponse({
            "resource": self.resource, "authorization_servers": [self.issuer], "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"], "resource_name": "countersign",
        })

    async def server_metadata(self, request: Request) -> Response:
        issuer = self.issuer
        return JSONResponse({
            "issuer": issuer,
            "authorization_endpoint": issuer + oauth.AUTHORIZE_PATH,
            "token_endpoint": issuer + oauth.TOKEN_PATH,
            "registration_endpoint": issuer + oauth.REGISTER_PATH,
            "revocation_endpoint": issuer + oauth.REVOKE_PATH,
            "scopes_supported": [SCOPE],
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
        })

    # -- authorize ----------------------------------------------------------------------------------

    async def authorize(self, request: Request) -> Response:
        params = request.query_params if request.method == "GET" else await request.form()
        client_id = params.get("client_id")
        if isinstance(client_id, str) and is_document_url(client_id):
            # Fetched (or taken from the cache) before the SDK's handler asks for the client, so a
            # refused document is answered with the reason, never a redirect.
            try:
                await self.provider.load_document(client_id)
            except DocumentRefused as refused:
                return self._refused(request, CLIENT_DOCUMENT_REFUSED, _error(
                    400, "invalid_client", f"The client's metadata document was refused: {refused}."))
            except TimeoutError:
                return self._refused(request, CLIENT_DOCUMENT_REFUSED, _error(
                    400, "invalid_client", "The client's metadata document took too long to fetch."))
        noted = _ConsentNoted(self.provider)
        response = await AuthorizationHandler(noted).handle(request)  # type: ignore[arg-type]  # the two methods it calls
        location = response.headers.get("location")
        if response.status_code in (302, 303) and location and location != noted.consent_url:
            # Back to the client with an error: RFC 9207 wants iss there too (the SDK adds none).
            response.headers["location"] = response_url(location, iss=self.issuer)
        elif response.status_code == 400:
            # No client, or no redirect URI it registered: answered here, never at a redirect.
            why = BAD_REDIRECT if noted.client_found else UNKNOWN_CLIENT if client_id else BAD_REQUEST
            return self._refused(request, why, response)
        return response

    def _refused(self, request: Request, why: str, answer: Response) -> Response:
        """A request that cannot go back to its client (RFC 6749 §4.1.2.1): ``answer`` (the JSON
        error) to a program; a person's browser is sent to the page's own error view, which says
        ``why`` (one of :data:`~countersign.identity.oauth.REFUSALS`) in words, what to do, and
        links back to the page. Nothing of the request is carried there."""
        if not _from_a_browser(request):
            return answer
        return RedirectResponse(f"{self.issuer}{CONSENT_PATH}?{REFUSED_PARAMETER}={why}", status_code=303,
                                headers=NO_STORE)

    # -- revoke (RFC 7009) ----------------------------------------------------------------------------

    async def revoke(self, request: Request) -> Response:
        """Public clients revoke with their ``client_id``; an unknown token is a success (RFC 7009 §2.2),
        another client's token a refusal that revokes nothing (§2.1)."""
        form = await request.form()
        token, client_id = form.get("token"), form.get("client_id")
        if not isinstance(token, str) or not token or not isinstance(client_id, str) or not client_id:
            return _error(400, "invalid_request", "token and client_id are required")
        if await self.provider.get_client(client_id) is None:
            return _error(401, "invalid_client", "unknown client_id")
        record = self.provider.find_token(token)
        if record is not None and record.client_id != client_id:  # RFC 7009 §2.1: refused, and nothing revoked
            return _error(400, "unauthorized_client", "this token was not issued to this client")
        if record is not None:
            await self.provider.revoke(record)
        return Response(status_code=200, headers=NO_STORE)
