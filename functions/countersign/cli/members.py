"""``countersign member list``, ``add`` and ``remove``: who belongs to a workspace, adding a
person, and removing one (:mod:`countersign.identity.members`: their connections revoked, the cards waiting on them
withdrawn, their passkeys removed, then the person).

A person added here is a ``member``: they can sign in to the confirm page, authorise agents and
confirm their own agents' requests. More authority (approver, admin, owner) is granted with the
mail toolset's ``grant_role``, which is always held for an owner's or admin's confirmation, so
the command line never hands out authority that no person confirmed (``workspace create`` makes
a workspace's first owner, as it always has).
"""

from __future__ import annotations

import json
import sys

from ..identity import accounts
from ..identity.members import remove_member
from ..store.errors import BadInput, Conflict, NotFound
from .common import command_line, existing_settings, iso, member, open_command_store, store_options


def _workspace_of(store, args):
    """The workspace ``--workspace`` names, or the one ``--email``'s member belongs to (None once
    it has said there is none: the command exits 2)."""
    if args.email is not None:
        person = member(store, args.email)
        return None if person is None else store.workspaces.get_workspace(person.workspace_id)
    try:
        return store.workspaces.get_workspace(args.workspace)
    except (NotFound, BadInput):
        print(f"error: no workspace with id {args.workspace!r}; `workspace create` printed its id, and "
              f"`{command_line(args, 'member list', '--email', 'E')}` shows the workspace of a member", file=sys.stderr)
        return None


def person_view(person) -> dict:
    return {"person_id": person.id, "email": person.email, "name": person.name, "role": person.role,
            "agent_requests_email": person.agent_requests_email, "added": iso(person.created_at)}


def cmd_member_list(args) -> int:
    _, store = open_command_store(args)
    workspace = _workspace_of(store, args)
    if workspace is None:
        return 2
    print(json.dumps({"workspace_id": workspace.id, "workspace": workspace.name,
                      "members": [person_view(p) for p in store.workspaces.list_persons(workspace.id)]}, indent=2))
    return 0


def cmd_member_add(args) -> int:
    _, store = open_command_store(args)
    workspace = _workspace_of(store, args)
    if workspace is None:
        return 2
    try:
        person = accounts.add_person(store.workspaces, workspace.id, args.new_email, "member", args.name or "")
    except Conflict:  # the same answer whichever workspace the address belongs to
        print(f"error: {args.new_email!r} already belongs to a member; an address is a member of one workspace "
              "only. Nothing was written.", file=sys.stderr)
        return 2
    print(json.dumps({"workspace_id": workspace.id, **person_view(person)}, indent=2))
    signin = command_line(args, "signin-link", "--email", person.email)
    print(f"# {person.email} can now sign in (`{signin}`); grant_role, "
          "confirmed by an owner or admin, gives them more than the member role", file=sys.stderr)
    return 0


def cmd_member_remove(args) -> int:
    # When the command runs, not at the CLI's start (the gate's and the server's modules).
    from ..runtime import keyless_desk

    desk = keyless_desk(existing_settings(args))  # it only closes cards: no keys needed (runtime.keyless_desk)
    person = member(desk.store, args.member_email)
    if person is None:
        return 2
    removed = remove_member(desk, person)
    print(json.dumps({"workspace_id": person.workspace_id, "removed": person_view(removed.person),
                      "revoked_connections": removed.revoked_connections, "withdrawn_cards": removed.withdrawn_cards,
                      "removed_passkeys": removed.removed_passkeys}, indent=2))
    return 0


def add_parser(sub) -> None:
    """``member list``, ``add`` and ``remove`` (``sub``: the top-level subparsers)."""
    group = sub.add_parser("member", help="a workspace's members: list, add, remove").add_subparsers(
        dest="action", required=True)
    listing = group.add_parser("list", help="a workspace's members: email, name, role, when added")
    adding = group.add_parser("add", help="add a person to a workspace as a member (roles: grant_role, held)")
    adding.add_argument("new_email", metavar="EMAIL", help="the new member's email (one workspace per address)")
    adding.add_argument("--name", help="their name, as emails greet them")
    for parser, func in ((listing, cmd_member_list), (adding, cmd_member_add)):
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--workspace", help="the workspace's id (w_…)")
        which.add_argument("--email", help="or any member of it, by email")
        store_options(parser)
        parser.set_defaults(func=func)
    removing = group.add_parser("remove", help="remove a member: their connections revoked, the cards waiting on "
                                               "them withdrawn, their passkeys removed, then the member")
    removing.add_argument("member_email", metavar="EMAIL", help="the member to remove")
    store_options(removing)
    removing.set_defaults(func=cmd_member_remove)
