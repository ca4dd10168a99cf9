"""The grants role of OAuth 2.1 for agents (docs/oauth.md): what a person's Allow gave a client,
and the access and refresh tokens issued for it.

:class:`GrantStore` is the interface both stores implement; :class:`OAuthGrant` and
:class:`IssuedToken` its records (tokens kept only as :func:`~.hashes.secret_hash` of themselves).
The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

ACCESS, REFRESH = "access", "refresh"


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
    # (:attr:`OUTSIDE_DATA`): a release that predates the field reads the grant as it always
    # did, and forgetting it rewrites nothing else.
    code_hash: str | None = None

    # Fields kept outside the record's JSON ``data`` (their own column or attribute):
    # :func:`~.json_records.data_fields` leaves them out.
    OUTSIDE_DATA: ClassVar[tuple[str, ...]] = ("code_hash",)


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


class GrantStore(abc.ABC):
    """Grants and their tokens. Expiry is applied on every read (an expired token reads as absent);
    a refresh token is spent by one conditional write with its replacements."""

    # -- grants and tokens ------------------------------------------------------------------------

    @abc.abstractmethod
    def put_oauth_grant(self, grant: OAuthGrant) -> None: ...

    @abc.abstractmethod
    def list_oauth_grants(self, workspace_id: str, person_id: str | None = None) -> list[OAuthGrant]:
        """The grants of a workspace (or of one person in it), ordered by creation."""

    @abc.abstractmethod
    def forget_grant_code(self, workspace_id: str, connection_id: str) -> None:
        """The grant is known connected: its ``code_hash`` goes, nothing else of it is rewritten
        (fields a later release keeps in it stay). A no-op for an unknown grant."""

    @abc.abstractmethod
    def put_issued_tokens(self, tokens: Sequence[IssuedToken]) -> None:
        """Store new tokens (an access token and its refresh token) in one write."""

    @abc.abstractmethod
    def get_issued_token(self, token_hash: str, now: int) -> IssuedToken | None:
        """The token (a spent refresh token too, with ``used_at``); None if unknown or expired."""

    @abc.abstractmethod
    def rotate_refresh_token(self, token_hash: str, now: int, replacements: Sequence[IssuedToken]) -> bool:
        """One transaction: spend the refresh token (unspent, unexpired) and store its replacements.
        False, with nothing written, if it was already spent or has expired."""
