"""A caller's credential and its member in one ``BatchGetItem`` (:mod:`countersign.store.callers`).

The store's roles each keep to their own items; this is where a credential's item (a connection
token, a session, an OAuth token and its connection) and the member's two items are read together,
on the one table they share.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..callers import CallerReads, Owner, owns
from ..cards import Card
from ..connections import Connection
from ..grants import IssuedToken
from ..limits import RequestCounts
from ..sessions import Session
from ..workspaces import Person, Workspace
from . import codec
from .client import Table
from .grants import issued_token_from, token_key as oauth_token_key
from .limits import count_keys, seen_in

T = TypeVar("T")


def _read(table: Table, first: list[codec.Item], owner: Owner, counts: RequestCounts | None
          ) -> tuple[list[dict[str, Any] | None], Workspace, Person, list[dict[str, Any]]] | None:
    """The items ``first`` (None where absent) and ``owner``'s member, in one request; None
    without the member. With ``counts``, the request's counters too: every item read comes last,
    for :func:`_counted` once the caller is known to be the owner."""
    member = [codec.workspace_key(owner.workspace_id), codec.person_key(owner.workspace_id, owner.person_id)]
    keys = [*first, *member]
    items = table.batch_get(keys + (count_keys(counts) if counts is not None else []))
    found = {(item["pk"], item["sk"]): item for item in items}
    *wanted, workspace, person = [found.get((k["pk"]["S"], k["sk"]["S"])) for k in keys]
    if workspace is None or person is None:
        return None
    return wanted, codec.workspace_from(workspace), codec.person_from(person), items


def _counted(counts: RequestCounts | None, items: list[dict[str, Any]], found: T) -> T:
    """``found`` (the caller), once the request's counters among ``items`` are in ``counts.seen``."""
    if counts is not None:
        seen_in(counts, items)
    return found


class DynamoCallerReads(CallerReads):
    def __init__(self, table: Table):
        self.table = table

    def get_connection_as(self, token_hash: str, owner: Owner,
                          counts: RequestCounts | None = None) -> tuple[Connection, Workspace, Person] | None:
        read = _read(self.table, [codec.token_key(token_hash)], owner, counts)
        if read is None:
            return None
        (token,), workspace, person, items = read
        connection = codec.connection_from(token) if token is not None else None
        if connection is None or not owns(owner, connection.workspace_id, connection.person_id):
            return None
        return _counted(counts, items, (connection, workspace, person))

    def get_session_as(self, session_hash: str, owner: Owner, now: int,
                       counts: RequestCounts | None = None) -> tuple[Session, Workspace, Person] | None:
        read = _read(self.table, [codec.single_key("SESSION", session_hash)], owner, counts)
        if read is None:
            return None
        (item,), workspace, person, items = read
        session = _live_session(item, owner, now)
        return None if session is None else _counted(counts, items, (session, workspace, person))

    def get_session_and_card(self, session_hash: str, owner: Owner, now: int, card_id: str,
                             counts: RequestCounts | None = None
                             ) -> tuple[Session, Workspace, Person, Card | None] | None:
        read = _read(self.table, [codec.single_key("SESSION", session_hash), codec.card_key(card_id)], owner,
                     counts)
        if read is None:
            return None
        (item, stored), workspace, person, items = read
        session = _live_session(item, owner, now)
        if session is None:
            return None
        card = codec.card_from(stored).at(now) if stored and stored["workspace_id"] == owner.workspace_id else None
        return _counted(counts, items, (session, workspace, person, card))

    def get_access_as(self, token_hash: str, owner: Owner, now: int,
                      counts: RequestCounts | None = None) -> tuple[IssuedToken, Connection, Workspace, Person] | None:
        keys = [oauth_token_key(token_hash), codec.connection_key(owner.workspace_id, owner.connection_id)]
        read = _read(self.table, keys, owner, counts)
        if read is None:
            return None
        (token, conn), workspace, person, items = read
        issued = issued_token_from(token, now)
        connection = codec.connection_from(conn) if conn is not None else None
        if (issued is None or connection is None
                or not owns(owner, issued.workspace_id, issued.person_id, issued.connection_id)
                or connection.person_id != owner.person_id):
            return None
        return _counted(counts, items, (issued, connection, workspace, person))


def _live_session(item: dict[str, Any] | None, owner: Owner, now: int) -> Session | None:
    if item is None or item["expires_at"] <= now:
        return None
    session = codec.session_from(item)
    return session if owns(owner, session.workspace_id, session.person_id) else None
