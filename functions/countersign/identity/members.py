"""Removing a person from their workspace: everything that could act for them stops, then they go.

In this order, so that an interrupted removal is finished by running it again: each connection
they authorised is revoked (its tokens stop, and the cards it filed that still wait are
withdrawn), every other card still waiting on them is withdrawn, their passkeys are removed, and
last the person, conditionally on their role as it was read. Their sessions need nothing of
their own: every credential resolves its member on every request, and there is none.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..store.errors import BadInput, NotFound
from ..store.workspaces import Person
from .accounts import MEMBER_REMOVED, revoke_connection
from .desk import Desk

REMOVED_REASON = "Withdrawn: {email} is no longer a member of this workspace."


@dataclass(frozen=True)
class Removed:
    person: Person
    revoked_connections: int
    withdrawn_cards: int
    removed_passkeys: int


def remove_member(desk: Desk, person: Person, actor: str = "system", channel: str = "system") -> Removed:
    """Remove ``person`` (as just read). :class:`BadInput` (field ``email``), with nothing changed,
    for the workspace's last owner; :class:`~countersign.store.errors.Conflict` if their role changed
    meanwhile (everything before the last step done: run it again)."""
    store, workspace_id = desk.store, person.workspace_id
    owners = [p for p in store.workspaces.list_persons(workspace_id) if p.role == "owner"]
    if person.role == "owner" and len(owners) <= 1:
        raise BadInput("email", f"{person.email} is the workspace's last owner; make another member an owner "
                                "first (grant_role), then remove them. Nothing changed.")
    revoked = withdrawn = 0
    for connection in store.connections.list_connections(workspace_id, person.id):
        if not connection.revoked:
            withdrawn += revoke_connection(desk, workspace_id, connection, actor=actor, channel=channel,
                                           reason=MEMBER_REMOVED)[1]
            revoked += 1
    withdrawn += desk.withdraw_waiting(workspace_id, person.id, actor, channel,
                                       REMOVED_REASON.format(email=person.email))
    passkeys = store.passkeys.list_passkeys(workspace_id, person.id)
    for passkey in passkeys:
        try:
            store.passkeys.remove_passkey(workspace_id, person.id, passkey.credential_id)
        except NotFound:  # removed meanwhile
            pass
    store.slack.unlink(workspace_id, person.id)  # their Slack user answers for no one, and may be linked again
    store.workspaces.remove_person(workspace_id, person.id, person.role)
    return Removed(person, revoked, withdrawn, len(passkeys))
