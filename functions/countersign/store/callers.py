"""A caller's credential and the member it acts for, in one read once their ids are known.

Every request names its caller by a bearer secret (a connection token, a confirm-page session,
an OAuth access token), stored only as its hash. Resolving one takes two dependent reads: the
credential's record, which says whose it is, then the workspace and person it belongs to. On
DynamoDB that is two round trips on every call.

Whose a credential is never changes after it is issued: a connection, a session or an access
token never moves to another workspace or person. So a process that has resolved one may
remember its :class:`Owner` (ids only, keyed by the hash: nothing secret) and, the next time,
read the credential and the member together, in one request (``BatchGetItem``). Every record is
still read afresh on every call, so a revoked connection, a deleted session, an expired token, a
removed member or a changed role or setting count at once, exactly as before; the ids are the
only thing remembered. When a read by owner finds anything amiss it answers None, and the caller
resolves the credential the long way, which gives the precise refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .errors import NotFound
from .oauth_records import IssuedToken
from .records import Card, Connection, Person, Session, Workspace

Member = tuple[Workspace, Person]


class _Reads(Protocol):
    """The reads of :class:`~countersign.store.interface.Store` the defaults below are made of."""

    def get_connection_by_token_hash(self, token_hash: str) -> Connection | None: ...
    def get_connection(self, workspace_id: str, connection_id: str) -> Connection: ...
    def get_session(self, session_hash: str, now: int) -> Session | None: ...
    def get_issued_token(self, token_hash: str, now: int) -> IssuedToken | None: ...
    def get_member(self, workspace_id: str, person_id: str) -> Member: ...
    def get_card(self, workspace_id: str, card_id: str, now: int) -> Card: ...
    def get_session_as(self, session_hash: str, owner: Owner, now: int) -> tuple[Session, Workspace, Person] | None: ...


@dataclass(frozen=True)
class Owner:
    """Whom a credential belongs to (fixed when it was issued)."""

    workspace_id: str
    person_id: str
    connection_id: str = ""  # an OAuth access token's connection


class CallerReads:
    """A credential with its member, given its :class:`Owner`: None unless every record exists
    (live, for a session or a token) and the credential really is that owner's.

    These defaults make the separate reads (SQLite answers each from its own file at once); the
    DynamoDB store makes each one ``BatchGetItem``.
    """

    def get_connection_as(self: _Reads, token_hash: str, owner: Owner) -> tuple[Connection, Workspace, Person] | None:
        """The connection whose token hashes to ``token_hash`` (revoked ones included), with its member."""
        connection = self.get_connection_by_token_hash(token_hash)
        if connection is None or not owns(owner, connection.workspace_id, connection.person_id):
            return None
        member = _member(self, owner)
        return None if member is None else (connection, *member)

    def get_session_as(self: _Reads, session_hash: str, owner: Owner,
                       now: int) -> tuple[Session, Workspace, Person] | None:
        """The session (live at ``now``) with its member."""
        session = self.get_session(session_hash, now)
        if session is None or not owns(owner, session.workspace_id, session.person_id):
            return None
        member = _member(self, owner)
        return None if member is None else (session, *member)

    def get_session_and_card(self: _Reads, session_hash: str, owner: Owner, now: int,
                             card_id: str) -> tuple[Session, Workspace, Person, Card | None] | None:
        """:meth:`get_session_as`, and the card ``card_id`` of the owner's workspace as it stands at
        ``now`` (None if there is none): a click's session and its card in one read."""
        found = self.get_session_as(session_hash, owner, now)
        if found is None:
            return None
        try:
            card: Card | None = self.get_card(owner.workspace_id, card_id, now)
        except NotFound:
            card = None
        return (*found, card)

    def get_access_as(self: _Reads, token_hash: str, owner: Owner,
                      now: int) -> tuple[IssuedToken, Connection, Workspace, Person] | None:
        """The issued token (live at ``now``; of any kind: the caller checks), its connection (revoked
        ones included) and its member."""
        issued = self.get_issued_token(token_hash, now)
        if issued is None or not owns(owner, issued.workspace_id, issued.person_id, issued.connection_id):
            return None
        try:
            connection = self.get_connection(owner.workspace_id, owner.connection_id)
        except NotFound:
            return None
        member = _member(self, owner) if connection.person_id == owner.person_id else None
        return None if member is None else (issued, connection, *member)


def _member(store: _Reads, owner: Owner) -> Member | None:
    try:
        return store.get_member(owner.workspace_id, owner.person_id)
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
