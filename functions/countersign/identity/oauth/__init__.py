"""OAuth 2.1 for agents: the one-URL way to connect an MCP client (docs/oauth.md).

This package is the protocol's core that both Lambda functions share and neither of them needs
the MCP SDK for: redirect URI rules, Client ID Metadata Documents, tokens, grants and the
consent decision. The HTTP endpoints are in ``countersign.surfaces.oauth`` (the MCP function,
built on the SDK's ``mcp.server.auth`` handlers) and ``countersign.surfaces.api.oauth`` (the
consent the confirm page asks for, in the API function).
"""

from __future__ import annotations

SCOPE = "mcp"  # the one scope: act as the connection on /mcp

# Lifetimes, in seconds.
REQUEST_TTL = 15 * 60  # an /authorize request waiting for the person (as long as a sign-in link)
CODE_TTL = 5 * 60
ACCESS_TTL = 60 * 60
REFRESH_TTL = 30 * 24 * 3600  # each refresh rotates it: a connection used once a month stays connected
CLIENT_CACHE_TTL = 10 * 60  # a fetched metadata document is used this long before it is fetched again
# A client registered with RFC 7591 that no person has allowed is forgotten after this long (a flood
# of registrations cannot grow the store without end); the first Allow keeps it for good.
UNUSED_CLIENT_TTL = 7 * 24 * 3600

# Prefixes make each kind of secret recognisable (and refusable) on sight.
ACCESS_PREFIX = "csa_"
REFRESH_PREFIX = "csr_"
CODE_PREFIX = "csc_"

# Paths, all on the public origin.
RESOURCE_PATH = "/mcp"
PROTECTED_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
AUTHORIZATION_SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server"
AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"
REGISTER_PATH = "/oauth/register"
REVOKE_PATH = "/oauth/revoke"
# The consent view of the confirm page: /confirm?authorize=<request id>.
CONSENT_PATH = "/confirm"
CONSENT_PARAMETER = "authorize"
# An /oauth/authorize request refused without a redirect to the client (RFC 6749 §4.1.2.1: no
# usable client or redirect URI), asked by a person's browser: the page's own error view,
# /confirm?authorize_error=<one of REFUSALS>.
REFUSED_PARAMETER = "authorize_error"
UNKNOWN_CLIENT, CLIENT_DOCUMENT_REFUSED, BAD_REDIRECT, BAD_REQUEST = (
    "unknown_client", "client_document_refused", "bad_redirect", "bad_request")
REFUSALS = (UNKNOWN_CLIENT, CLIENT_DOCUMENT_REFUSED, BAD_REDIRECT, BAD_REQUEST)


def issuer_of(public_url: str) -> str:
    """The authorization server's issuer identifier: the public origin, no trailing slash."""
    return public_url.rstrip("/")


def resource_of(public_url: str) -> str:
    """The protected resource (RFC 8707 / RFC 9728): the MCP endpoint's URL."""
    return issuer_of(public_url) + RESOURCE_PATH


def same_resource(given: str | None, resource: str) -> bool:
    """Whether a client's ``resource`` names ours (clients differ on a trailing slash)."""
    return given is not None and given.rstrip("/") == resource.rstrip("/")


def resource_metadata_url(public_url: str) -> str:
    return issuer_of(public_url) + PROTECTED_RESOURCE_METADATA_PATH
