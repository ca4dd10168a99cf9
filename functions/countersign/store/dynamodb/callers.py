"""A caller's credential and its member in one ``BatchGetItem`` (:mod:`countersign.store.callers`).

The store's roles each keep to their own items; this is where a credential's item (a connection
token, a session, an OAuth token and its connection) and the member's two items are read together,
on the one table they share.
"""

from __future__ import annotations

from typing import Any

from ..callers import CallerReads, Owner, owns
from ..cards import Card
from ..connections import Connection
from ..grants import IssuedToken
from ..sessions import Session
from ..workspaces import Person, Workspace
from . import codec
from .client import Table
from .grants import issued_token_from, token_key as oauth_token_key


def _read(table: Table, first: list[codec.Item], owner: Owner) -> tuple[list[dict[str, Any] | None], Workspace,
                                                                        Person] | None:
    """The items ``first`` (None where absent) and ``owner``'s member, in one request; None
    without the member."""
    keys = [*first, codec.workspace_key(owner.workspace_id), codec.person_key(owner.workspace_id, owner.person_id)]
    found = {(item["pk"], item["sk"]): item for item in table.batch_get(keys)}
    *wanted, workspace, person = [found.get((k["pk"]["S"], k["sk"]["S"])) for k in keys]
    if workspace is None or person is None:
        return None
    return wanted, codec.workspace_from(workspace), codec.person_from(person)


class DynamoCallerReads(CallerReads):
    def __init__(self, table: Table):
        self.table = table

    def get_connection_as(self, token_hash: str, owner: Owner) -> tuple[Connection, Workspace, Person] | None:
        read = _read(self.table, [codec.token_key(token_hash)], owner)
        if read is None:
            return None
        (token,), workspace, person = read
        if token is None:
            return None
        connection = codec.connection_from(token)
        return (connection, workspace, person) if owns(owner, connection.workspace_id, connection.person_id) else None

    def get_session_as(self, session_hash: str, owner: Owner, now: int) -> tuple[Session, Workspace, Person] | None:
        read = _read(self.table, [codec.single_key("SESSION", session_hash)], owner)
        if read is None:
            return None
        (item,), workspace, person = read
        session = _live_session(item, owner, now)
        return None if session is None else (session, workspace, person)

    def get_session_and_card(self, session_hash: str, owner: Owner, now: int,
                             card_id: str) -> tuple[Session, Workspace, Person, Card | None] | None:
        read = _read(self.table, [codec.single_key("SESSION", session_hash), codec.card_key(card_id)], owner)
        if read is None:
            return None
        (item, stored), workspace, person = read
        session = _live_session(item, owner, now)
        if session is None:
            return None
        card = codec.card_from(stored).at(now) if stored and stored["workspace_id"] == owner.workspace_id else None
        return session, workspace, person, card

    def get_access_as(self, token_hash: str, owner: Owner,
                      now: int) -> tuple[IssuedToken, Connection, Workspace, Person] | None:
        keys = [oauth_token_key(token_hash), codec.connection_key(owner.workspace_id, owner.connection_id)]
        read = _read(self.table, keys, owner)
        if read is None:
            return None
        (token, conn), workspace, person = read
        issued = issued_token_from(token, now)
        if issued is None or conn is None:
            return None
        connection = codec.connection_from(conn)
        if (not owns(owner, issued.workspace_id, issued.person_id, issued.connection_id)
                or connection.person_id != owner.person_id):
            return None
        return issued, connection, workspace, person


def _live_session(item: dict[str, Any] | None, owner: Owner, now: int) -> Session | None:
    if item is None or item["expires_at"] <= now:
        return None
    session = codec.session_from(item)
    return session if owns(owner, session.workspace_id, session.person_id) else None
