"""The connections role: an agent's connection to a workspace (its token kept only as a hash),
and when each connection was last used.

:class:`ConnectionStore` is the interface both stores implement; :class:`Connection` its record.
The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field


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
    # Tool → when the last standing grant this connection was given for it expires (whatever became
    # of it since: revoked and used-up grants count, a held reply still names them); a tool absent
    # was never granted. Read with the connection, so a held call reads the connection's grants
    # only when one could cover it or be named. None: the store does not know (a connection made
    # before it was kept, or one made in memory): read the grants. Kept by the store, in the
    # transaction that makes each grant (:class:`~.standing_grants.StandingGrantWrite`).
    grants_until: dict[str, int] | None = field(default=None, compare=False)

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
