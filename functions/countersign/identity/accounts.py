"""Workspaces, members and connections: made, and a connection revoked. The operations the CLI,
the demo, the confirm API, OAuth and the tests share. A connection's token is returned once to the
caller and stored only as its hash. Sign-in links and sessions are :mod:`.sessions`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..core.ids import new_id, new_secret_token
from ..store.connections import Connection, ConnectionStore
from ..store.errors import BadInput
from ..store.hashes import secret_hash
from ..store.workspaces import Person, Workspace, WorkspaceStore, check_workspace_name
from .desk import Desk

CONNECTION_TOKEN_PREFIX = "cs_"
REVOKED_REASON = "Withdrawn: the connection ‘{name}’ that asked was revoked."

# Why a connection was revoked: the code recorded with it, and the words Settings shows for it.
BY_PERSON, BY_OPERATOR, MEMBER_REMOVED = "person", "operator", "member_removed"
CLIENT_REVOKED, REFRESH_TOKEN_REUSED, CODE_REUSED = "client_revoked", "refresh_token_reused", "code_reused"
NEVER_FINISHED, NOT_STORED = "never_finished", "not_stored"
REVOKED_WHY = {
    BY_PERSON: "You revoked it.",
    BY_OPERATOR: "It was revoked from the command line.",
    MEMBER_REMOVED: "Its person was removed from the workspace.",
    CLIENT_REVOKED: "The app ended the connection itself.",
    REFRESH_TOKEN_REUSED: "Its refresh token was used twice — a sign it was copied. Allow the app again if you "
                          "still use it.",
    CODE_REUSED: "Its sign-in code was used twice — a sign it was intercepted. Allow the app again if you still "
                 "use it.",
    NEVER_FINISHED: "The app never finished connecting.",
    NOT_STORED: "Connecting failed before the app got its tokens. Allow the app again.",
}


def revoked_why(connection: Connection) -> str | None:
    """Why ``connection`` was revoked, in the person's words; None while it is live, or when no
    reason was recorded (revoked before reasons were kept)."""
    return REVOKED_WHY.get(connection.revoked_reason or "") if connection.revoked else None


def _now() -> int:
    return int(time.time())


def email_address(value: str) -> str:
    """``value`` as an address a member can have (surrounding spaces dropped), or :class:`BadInput`."""
    email = (value or "").strip()
    local, _, domain = email.partition("@")
    if not local or "." not in domain or any(c.isspace() for c in email) or len(email) > 254:
        raise BadInput("email", f"{value!r} is not an email address")
    return email


def create_workspace(
    workspaces: WorkspaceStore, name: str, owner_email: str, owner_name: str = "", now: int | None = None
) -> tuple[Workspace, Person]:
    """A new workspace and its owner, in one transaction: an owner's email that already belongs
    to a member (:class:`Conflict`) leaves no workspace behind."""
    now = _now() if now is None else now
    name = check_workspace_name(name or "")
    workspace = Workspace(id=new_id("w_"), name=name, created_at=now)
    owner = _person(workspace.id, owner_email, "owner", owner_name, now)
    workspaces.create_workspace(workspace, owner)
    return workspace, owner


def add_person(
    workspaces: WorkspaceStore, workspace_id: str, email: str, role: str = "member", name: str = "",
    now: int | None = None,
) -> Person:
    """A new member of an existing workspace (:class:`NotFound` if there is none with that id;
    :class:`Conflict` if the email already belongs to a member, of this workspace or another)."""
    person = _person(workspace_id, email, role, name, _now() if now is None else now)
    workspaces.create_person(person)
    return person


def _person(workspace_id: str, email: str, role: str, name: str | None, now: int) -> Person:
    """The record to create (its role and name are checked by the store, before it writes)."""
    return Person(id=new_id("p_"), workspace_id=workspace_id, email=email_address(email), role=role,
                  name=(name or "").strip(), created_at=now)


@dataclass(frozen=True)
class NewConnection:
    connection: Connection
    token: str  # shown once; only its hash is stored


def create_connection(
    workspaces: WorkspaceStore, connections: ConnectionStore, workspace_id: str, person_id: str, name: str,
    now: int | None = None,
) -> NewConnection:
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise BadInput("name", "a connection needs a name of 1 to 100 characters")
    if not name.isprintable():  # as an OAuth client's name is kept (surfaces.oauth.provider, cimd)
        raise BadInput("name", "a connection's name is one line, without control characters")
    workspaces.get_person(workspace_id, person_id)
    token = new_secret_token(CONNECTION_TOKEN_PREFIX)
    connection = Connection(id=new_id("k_"), workspace_id=workspace_id, person_id=person_id, name=name,
                            token_hash=secret_hash(token), created_at=_now() if now is None else now)
    connections.create_connection(connection)
    return NewConnection(connection, token)


def revoke_connection(desk: Desk, workspace_id: str, connection: Connection, actor: str,
                      channel: str = "page", reason: str | None = None) -> tuple[Connection, int]:
    """Revoke ``connection`` (every token of it stops at once) and withdraw the cards it filed that
    still wait; ``reason`` (one of :data:`REVOKED_WHY`) is recorded with it. Returns the connection
    as revoked and how many cards were withdrawn."""
    revoked = desk.store.connections.revoke_connection(workspace_id, connection.id, desk.now(), reason)
    withdrawn = desk.withdraw_waiting(workspace_id, connection.person_id, actor, channel,
                                      REVOKED_REASON.format(name=revoked.name), connection_id=connection.id)
    return revoked, withdrawn
