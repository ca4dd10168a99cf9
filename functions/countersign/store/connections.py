"""The connections role: an agent's connection to a workspace (its token kept only as a hash),
and when each connection was last used.

:class:`ConnectionStore` is the interface both stores implement; :class:`Connection` its record.
The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass


@dataclass(frozen=True)
class Connection:
    id: str
    workspace_id: str
    person_id: str
    name: str
    token_hash: str
    created_at: int = 0
    revoked_at: int | None = None
    # Why it was revoked: a short code (``countersign.identity.accounts.REVOKED_WHY`` words it);
    # None while live, and for one revoked before the reason was recorded.
    revoked_reason: str | None = None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


class ConnectionStore(abc.ABC):
    """Connections of a workspace's members, found by id or by their token's hash."""

    @abc.abstractmethod
    def create_connection(self, connection: Connection) -> None:
        """Store a connection (its token only as ``token_hash``)."""

    @abc.abstractmethod
    def get_connection(self, workspace_id: str, connection_id: str) -> Connection:
        """:class:`NotFound` if unknown or in another workspace."""

    @abc.abstractmethod
    def get_connection_by_token_hash(self, token_hash: str) -> Connection | None:
        """The connection whose token hashes to ``token_hash`` (revoked ones included)."""

    @abc.abstractmethod
    def list_connections(self, workspace_id: str, person_id: str | None = None) -> list[Connection]:
        """Connections of a workspace (or of one person in it), ordered by creation."""

    @abc.abstractmethod
    def revoke_connection(self, workspace_id: str, connection_id: str, now: int,
                          reason: str | None = None) -> Connection:
        """Mark revoked, with why (``reason``). Idempotent: a second revoke keeps the first time and
        reason."""

    # -- in use -----------------------------------------------------------------------------------

    @abc.abstractmethod
    def note_connection_use(self, workspace_id: str, connection_id: str, now: int, every: int = 60) -> None:
        """Record that the connection was used at ``now``; a no-op within ``every`` seconds of the last record."""

    @abc.abstractmethod
    def connections_last_used(self, workspace_id: str) -> dict[str, int]:
        """Connection id → when it was last used (connections never used are absent)."""
