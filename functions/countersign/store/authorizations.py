"""The authorizations role of OAuth 2.1 for agents (docs/oauth.md): the clients the authorization
server knows, ``/authorize`` requests waiting for a person's Allow or Deny, and the codes Allow
issues.

:class:`AuthorizationStore` is the interface both stores implement; :class:`OAuthClientRecord`,
:class:`PendingAuthorization` and :class:`IssuedCode` its records. Every secret is stored as
:func:`~.hashes.secret_hash` of itself (request ids, codes). What follows an exchanged code is
:mod:`.grants`. The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any


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


class AuthorizationStore(abc.ABC):
    """Clients, authorization requests and codes. Expiry is applied on every read (an expired
    request, code or cached client reads as absent), and the single-use values are spent by one
    conditional write each."""

    # -- clients ----------------------------------------------------------------------------------

    @abc.abstractmethod
    def put_oauth_client(self, client: OAuthClientRecord) -> None:
        """Store (or replace) a client: registered, or a metadata document cached until ``expires_at``."""

    @abc.abstractmethod
    def get_oauth_client(self, client_id: str, now: int) -> OAuthClientRecord | None: ...

    # -- authorization requests and codes ---------------------------------------------------------

    @abc.abstractmethod
    def put_pending_authorization(self, pending: PendingAuthorization) -> None: ...

    @abc.abstractmethod
    def get_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None: ...

    @abc.abstractmethod
    def take_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        """Remove and return the request: the first call before expiry gets it, every later call None."""

    @abc.abstractmethod
    def put_issued_code(self, code: IssuedCode) -> None: ...

    @abc.abstractmethod
    def get_issued_code(self, code_hash: str, now: int) -> IssuedCode | None:
        """The code (spent ones too, with ``used_at``: a second use is a replay); None once expired."""

    @abc.abstractmethod
    def spend_issued_code(self, code_hash: str, now: int) -> bool:
        """One conditional write: True for the first use before expiry, False ever after."""

    @abc.abstractmethod
    def issued_code_spent(self, code_hash: str) -> bool | None:
        """Whether the code was spent, past its expiry too; None once it is no longer kept (an
        expired code is removed some time after its expiry)."""
