"""The records of the OAuth role (:class:`~countersign.store.interface.OAuthStore`). Plain data.

Every secret is stored as :func:`~countersign.store.records.secret_hash` of itself: authorization
request ids, codes, access and refresh tokens. Times are epoch seconds passed in by the caller.
What the protocol means by each record: docs/oauth.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

ACCESS, REFRESH = "access", "refresh"


@dataclass(frozen=True)
class OAuthClientRecord:
    """A client the authorization server knows: registered (RFC 7591; kept until ``expires_at`` while
    no person has allowed it, then for good) or a Client ID Metadata Document fetched from its
    ``client_id`` URL (kept until ``expires_at``)."""

    client_id: str
    metadata: dict[str, Any]  # redirect_uris, client_name, grant_types, ... as validated
    created_at: int
    expires_at: int | None = None


@dataclass(frozen=True)
class PendingAuthorization:
    """An ``/authorize`` request waiting for the person's Allow or Deny on the confirm page.

    ``request_hash`` hashes the id in the consent page's address; the request is answered once.
    ``client_name`` and ``redirect_uri`` are what the consent page shows, as validated when asked.
    """

    request_hash: str
    client_id: str
    client_name: str
    redirect_uri: str
    redirect_uri_provided_explicitly: bool
    code_challenge: str
    resource: str
    created_at: int
    expires_at: int
    state: str | None = None
    scopes: tuple[str, ...] = ()
    metadata_document: bool = False  # the client_id is a metadata document's URL (not registered here)


@dataclass(frozen=True)
class IssuedCode:
    """An authorization code (5 minutes, single use) for the connection a consent created."""

    code_hash: str
    client_id: str
    connection_id: str
    workspace_id: str
    person_id: str
    redirect_uri: str
    redirect_uri_provided_explicitly: bool
    code_challenge: str
    resource: str
    expires_at: int
    scopes: tuple[str, ...] = ()
    used_at: int | None = None


@dataclass(frozen=True)
class OAuthGrant:
    """What Allow gave a client: the connection its tokens act as (revoking the connection ends
    the grant), and who the client said it was when the person allowed it."""

    connection_id: str
    workspace_id: str
    person_id: str
    client_id: str
    client_name: str
    redirect_uri: str
    created_at: int
    # The hash of the code Allow issued, from Allow until the grant is known to be connected (its
    # code spent, or its connection used); None after that, and for a grant recorded before this
    # field existed. A grant whose code was never spent has a connection nothing can use
    # (:func:`countersign.identity.oauth.grants.settle`). Stored beside the record's JSON, not in it
    # (GRANT_OUTSIDE_DATA below): a release that predates the field reads the grant as it always
    # did, and forgetting it rewrites nothing else.
    code_hash: str | None = None


# Fields a grant keeps outside its JSON ``data`` (its own column or attribute).
GRANT_OUTSIDE_DATA = ("code_hash",)


def data_fields(record: Any) -> dict[str, Any]:
    """What a record's JSON ``data`` holds: its fields, but for a grant's kept outside it."""
    values = asdict(record)
    if isinstance(record, OAuthGrant):
        for name in GRANT_OUTSIDE_DATA:
            values.pop(name, None)
    return values


def known_fields(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` without the keys ``cls`` has no field for: a record written by a later release
    (during a rolling deploy, or after a rollback) still loads, its new fields dropped."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in values.items() if k in names}


@dataclass(frozen=True)
class IssuedToken:
    """An access token (``kind`` access) or a refresh token (``kind`` refresh) of a grant.

    A refresh token is spent once (``used_at``): its rotation writes the next pair in the same
    transaction, and presenting it again is reuse, which ends the grant.
    """

    token_hash: str
    kind: str
    connection_id: str
    workspace_id: str
    person_id: str
    client_id: str
    resource: str
    created_at: int
    expires_at: int
    scopes: tuple[str, ...] = field(default=())
    used_at: int | None = None
