"""The store's roles for credentials beyond a connection's own token: OAuth (clients, codes,
grants, tokens) and passkeys. Part of :class:`~countersign.store.interface.Store`, whose module
states the rules every implementation keeps."""

from __future__ import annotations

import abc
from collections.abc import Sequence

from .oauth_records import IssuedCode, IssuedToken, OAuthClientRecord, OAuthGrant, PendingAuthorization
from .records import Passkey, PasskeyChallenge


class OAuthStore(abc.ABC):
    """OAuth 2.1 for agents (docs/oauth.md): clients, authorization requests waiting for a person,
    codes, grants and tokens, all secrets as hashes; and when each connection was last used.

    Expiry is applied on every read (an expired request, code, token or cached client reads as
    absent), and the single-use values are spent by one conditional write each.
    """

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

    # -- connections in use -------------------------------------------------------------------------

    @abc.abstractmethod
    def note_connection_use(self, workspace_id: str, connection_id: str, now: int, every: int = 60) -> None:
        """Record that the connection was used at ``now``; a no-op within ``every`` seconds of the last record."""

    @abc.abstractmethod
    def connections_last_used(self, workspace_id: str) -> dict[str, int]:
        """Connection id → when it was last used (connections never used are absent)."""


class PasskeyStore(abc.ABC):
    """Passkeys (one record per credential, found by its id across workspaces for a discoverable
    sign-in) and the WebAuthn challenges the server issued (kept by hash, spent once)."""

    @abc.abstractmethod
    def put_passkey(self, passkey: Passkey) -> None:
        """Register; :class:`Conflict` if the credential id is registered already (to anyone)."""

    @abc.abstractmethod
    def get_passkey(self, credential_id: str) -> Passkey | None:
        """The passkey with this credential id, in any workspace; None if unknown or removed."""

    @abc.abstractmethod
    def list_passkeys(self, workspace_id: str, person_id: str) -> list[Passkey]:
        """The person's passkeys, oldest first."""

    @abc.abstractmethod
    def rename_passkey(self, workspace_id: str, person_id: str, credential_id: str, name: str) -> Passkey:
        """:class:`NotFound` unless it is this person's; :class:`BadInput` for an empty or long name."""

    @abc.abstractmethod
    def remove_passkey(self, workspace_id: str, person_id: str, credential_id: str) -> None:
        """:class:`NotFound` unless it is this person's. Its assertions are refused from then on."""

    @abc.abstractmethod
    def note_passkey_use(self, credential_id: str, sign_count: int, now: int) -> None:
        """Record the last use and the authenticator's counter (a removed passkey: no-op)."""

    @abc.abstractmethod
    def put_passkey_challenge(self, challenge: PasskeyChallenge) -> None: ...

    @abc.abstractmethod
    def take_passkey_challenge(self, challenge_hash: str, now: int) -> PasskeyChallenge | None:
        """Delete and return the challenge: the first call before expiry gets it, every later call
        (and any call after expiry) None. One conditional write."""
