"""A caller's credential and the member it acts for, in one read once their ids are known.

Every request names its caller by a bearer secret (a connection token, a confirm-page session,
an OAuth access token), stored only as its hash. Resolving one takes two dependent reads: the
credential's record, which says whose it is, then the workspace and person it belongs to. On
DynamoDB that is two round trips on every call.

Whose a credential is never changes after it is issued: a connection, a session or an access
token never moves to another workspace or person. So a process that has resolved one may
remember its :class:`Owner` (ids only, keyed by the hash: nothing secret) and, the next time,
read the credential and the member together, in one request (``BatchGetItem``) — with the
request's counters against the request limits, when it has some (``counts``,
:class:`~.limits.RequestCounts`: their hits fill ``counts.seen``, only when the caller was found). Every record is
still read afresh on every call, so a revoked connection, a deleted session, an expired token, a
removed member or a changed role or setting count at once, exactly as before; the ids are the
only thing remembered. When a read by owner finds anything amiss it answers None, and the caller
resolves the credential the long way, which gives the precise refusal.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TypeVar

from .cards import Card, CardStore
from .connections import Connection, ConnectionStore
from .errors import NotFound
from .grants import GrantStore, IssuedToken
from .limits import LimitStore, RequestCounts
from .sessions import Session, SessionStore
from .workspaces import Member, Person, Workspace, WorkspaceStore

T = TypeVar("T")


@dataclass(frozen=True)
class Owner:
    """Whom a credential belongs to (fixed when it was issued)."""

    workspace_id: str
    person_id: str
    connection_id: str = ""  # an OAuth access token's connection


class CallerReads(abc.ABC):
    """A credential with its member, given its :class:`Owner`: None unless every record exists
    (live, for a session or a token) and the credential really is that owner's."""

    @abc.abstractmethod
    def get_connection_as(self, token_hash: str, owner: Owner,
                          counts: RequestCounts | None = None) -> tuple[Connection, Workspace, Person] | None:
        """The connection whose token hashes to ``token_hash`` (revoked ones included), with its member."""

    @abc.abstractmethod
    def get_session_as(self, session_hash: str, owner: Owner, now: int,
                       counts: RequestCounts | None = None) -> tuple[Session, Workspace, Person] | None:
        """The session (live at ``now``) with its member."""

    @abc.abstractmethod
    def get_session_and_card(self, session_hash: str, owner: Owner, now: int,
                             card_id: str, counts: RequestCounts | None = None
                             ) -> tuple[Session, Workspace, Person, Card | None] | None:
        """:meth:`get_session_as`, and the card ``card_id`` of the owner's workspace as it stands at
        ``now`` (None if there is none): a click's session and its card in one read."""

    @abc.abstractmethod
    def get_access_as(self, token_hash: str, owner: Owner, now: int,
                      counts: RequestCounts | None = None) -> tuple[IssuedToken, Connection, Workspace, Person] | None:
        """The issued token (live at ``now``; of any kind: the caller checks), its connection (revoked
        ones included) and its member."""


class RoleCallerReads(CallerReads):
    """The reads made separately, one role at a time (SQLite answers each from its own file at
    once); the DynamoDB store makes each one ``BatchGetItem``."""

    def __init__(self, *, workspaces: WorkspaceStore, connections: ConnectionStore, sessions: SessionStore,
                 grants: GrantStore, cards: CardStore, limits: LimitStore):
        self.limits = limits
        self.workspaces = workspaces
        self.connections = connections
        self.sessions = sessions
        self.grants = grants
        self.cards = cards

    def get_connection_as(self, token_hash: str, owner: Owner,
                          counts: RequestCounts | None = None) -> tuple[Connection, Workspace, Person] | None:
        connection = self.connections.get_connection_by_token_hash(token_hash)
        if connection is None or not owns(owner, connection.workspace_id, connection.person_id):
            return None
        member = self._member(owner)
        return None if member is None else self._counted(counts, (connection, *member))

    def get_session_as(self, session_hash: str, owner: Owner, now: int,
                       counts: RequestCounts | None = None) -> tuple[Session, Workspace, Person] | None:
        session = self.sessions.get_session(session_hash, now)
        if session is None or not owns(owner, session.workspace_id, session.person_id):
            return None
        member = self._member(owner)
        return None if member is None else self._counted(counts, (session, *member))

    def get_session_and_card(self, session_hash: str, owner: Owner, now: int,
                             card_id: str, counts: RequestCounts | None = None
                             ) -> tuple[Session, Workspace, Person, Card | None] | None:
        found = self.get_session_as(session_hash, owner, now, counts)
        if found is None:
            return None
        try:
            card: Card | None = self.cards.get_card(owner.workspace_id, card_id, now)
        except NotFound:
            card = None
        return (*found, card)

    def get_access_as(self, token_hash: str, owner: Owner, now: int,
                      counts: RequestCounts | None = None) -> tuple[IssuedToken, Connection, Workspace, Person] | None:
        issued = self.grants.get_issued_token(token_hash, now)
        if issued is None or not owns(owner, issued.workspace_id, issued.person_id, issued.connection_id):
            return None
        try:
            connection = self.connections.get_connection(owner.workspace_id, owner.connection_id)
        except NotFound:
            return None
        member = self._member(owner) if connection.person_id == owner.person_id else None
        return None if member is None else self._counted(counts, (issued, connection, *member))

    def _counted(self, counts: RequestCounts | None, found: T) -> T:
        """``found``, once the request's counters (if any) are read into ``counts``."""
        if counts is not None:
            self.limits.read_counts(counts)
        return found

    def _member(self, owner: Owner) -> Member | None:
        try:
            return self.workspaces.get_member(owner.workspace_id, owner.person_id)
        except NotFound:
            return None


def owns(owner: Owner, workspace_id: str, person_id: str, connection_id: str = "") -> bool:
    return (owner.workspace_id, owner.person_id, owner.connection_id) == (workspace_id, person_id, connection_id)


class Owners:
    """What this process remembers of the credentials it has resolved: hash → :class:`Owner`.
    Bounded (forgotten all at once when full: the next call of each takes the long way once)."""

    def __init__(self, most: int = 10_000):
        self.most = most
        self._known: dict[str, Owner] = {}

    def get(self, credential_hash: str) -> Owner | None:
        return self._known.get(credential_hash)

    def remember(self, credential_hash: str, owner: Owner) -> None:
        if len(self._known) >= self.most and credential_hash not in self._known:
            self._known.clear()
        self._known[credential_hash] = owner
