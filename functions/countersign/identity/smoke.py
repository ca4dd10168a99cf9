"""``countersign smoke setup``: the smoke workspace, its one member and their two credentials.

Run once by an operator, in front of the store (their own AWS credentials on AWS). It makes,
if missing, the smoke workspace (:mod:`countersign.core.smoke`: a fixed id, no owner, nobody to
manage it), then a fresh smoke member (``smoke@countersign.invalid``, a plain ``member`` whom card
emails never reach) with:

* an agent connection, whose token files the smoke card over ``/mcp``;
* a session (:data:`~countersign.core.smoke.SMOKE_SESSION_DAYS` long) and its CSRF token, with
  which the smoke command reads and answers that card on the confirm API.

The store keeps only their hashes, as for every token and session. Both belong to the smoke
workspace, where an agent may file ``countersign_smoke`` only and a session may only read and
answer cards: a leaked pair can file and confirm smoke cards, which write nothing, and nothing
else. Running it again replaces the member (its connection revoked, its cards withdrawn, its
session ended with it), so the earlier credentials stop at once; ``countersign member remove
smoke@countersign.invalid`` ends them without new ones.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from ..core import smoke
from ..core.ids import new_id, new_secret_token
from ..core.smoke import SMOKE_EMAIL, SMOKE_WORKSPACE_ID
from ..store.errors import Conflict, NotFound
from ..store.hashes import secret_hash
from ..store.sessions import Session
from ..store.workspaces import Person, Workspace
from .accounts import create_connection
from .desk import Desk
from .members import remove_member


@dataclass(frozen=True)
class SmokeCredentials:
    """What ``countersign smoke`` needs beside the URL (shown once: only hashes are stored)."""

    agent_token: str
    session: str
    csrf_token: str
    expires_at: int

    def to_json(self) -> dict:
        return {"agent_token": self.agent_token, "session": self.session, "csrf_token": self.csrf_token,
                "expires_at": self.expires_at}


def set_up_smoke(desk: Desk) -> SmokeCredentials:
    """The smoke workspace (made if missing) and a new smoke member with new credentials; an
    earlier smoke member is removed first, so their credentials stop."""
    store, now = desk.store, desk.now()
    try:
        store.workspaces.get_workspace(SMOKE_WORKSPACE_ID)
    except NotFound:
        store.workspaces.create_workspace(Workspace(SMOKE_WORKSPACE_ID, smoke.SMOKE_WORKSPACE_NAME, created_at=now))
    earlier = store.workspaces.get_person_by_email(SMOKE_EMAIL)
    if earlier is not None:
        if earlier.workspace_id != SMOKE_WORKSPACE_ID:
            raise Conflict(f"{SMOKE_EMAIL} belongs to workspace {earlier.workspace_id}, not the smoke workspace; "
                           "remove that member first. Nothing was made.")
        remove_member(desk, earlier)
    person = Person(id=new_id("p_"), workspace_id=SMOKE_WORKSPACE_ID, email=SMOKE_EMAIL, role="member",
                    name="Smoke test", agent_requests_email=False, created_at=now)
    store.workspaces.create_person(person)
    connection = create_connection(store.workspaces, store.connections, SMOKE_WORKSPACE_ID, person.id,
                                   smoke.SMOKE_CONNECTION_NAME, now)
    session_id, csrf_token = new_secret_token(), secrets.token_urlsafe(32)
    expires_at = now + smoke.SMOKE_SESSION_DAYS * 24 * 3600
    store.sessions.create_session(Session(secret_hash(session_id), person.id, SMOKE_WORKSPACE_ID, csrf_token,
                                          now, expires_at))
    return SmokeCredentials(connection.token, session_id, csrf_token, expires_at)
