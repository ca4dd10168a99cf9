"""``countersign connection create``, ``list`` and ``revoke``: a member's agent connections. ``create``
prints a new one's token once; ``list`` shows them as the confirm page's Connections section does;
revoking one there or here alike, every token of it stops at once, and the cards it filed that
still wait are withdrawn."""

from __future__ import annotations

import json
import sys

from ..identity import accounts
from ..store.errors import BadInput, NotFound
from .common import command_line, existing_settings, member, open_command_store, store_options


def cmd_connection_create(args) -> int:
    s, store = open_command_store(args)
    person = member(store, args.email)
    if person is None:
        return 2
    new = accounts.create_connection(store.workspaces, store.connections, person.workspace_id, person.id, args.name)
    print(
        json.dumps({"connection_id": new.connection.id, "mcp_url": f"{s.public_url}/mcp", "token": new.token}, indent=2)
    )
    print("# the token is shown once: put it in your MCP client as 'Authorization: Bearer <token>'", file=sys.stderr)
    return 0


def cmd_connection_list(args) -> int:
    # When the command runs, not at the CLI's start (the gate's and the server's modules).
    from ..identity.oauth.grants import settle
    from ..runtime import keyless_desk
    from ..surfaces.api.connections import connection_views

    desk = keyless_desk(existing_settings(args))  # it may revoke an unfinished OAuth connection: no keys needed
    store = desk.store
    person = member(store, args.email)
    if person is None:
        return 2
    grants = {g.connection_id: g for g in store.grants.list_oauth_grants(person.workspace_id, person.id)}
    used = store.connections.connections_last_used(person.workspace_id)
    listed = store.connections.list_connections(person.workspace_id, person.id)
    settled = settle(desk, person.workspace_id, listed, grants, used)
    views = connection_views(settled, used)
    print(json.dumps(views, indent=2))
    if any(not view["revoked"] for view in views):
        print(f"# to revoke one: {command_line(args, 'connection revoke CONNECTION_ID', '--email', args.email)}",
              file=sys.stderr)
    return 0


def cmd_connection_revoke(args) -> int:
    # When the command runs, not at the CLI's start (the gate's and the server's modules).
    from ..runtime import keyless_desk
    from ..surfaces.api.connections import connection_view

    desk = keyless_desk(existing_settings(args))  # it only closes cards: no keys needed (runtime.keyless_desk)
    store = desk.store
    person = member(store, args.email)
    if person is None:
        return 2
    try:
        connection = store.connections.get_connection(person.workspace_id, args.connection_id)
    except (NotFound, BadInput):
        connection = None
    if connection is None or connection.person_id != person.id:  # another member's reads as unknown
        print(f"error: {args.email} has no connection {args.connection_id!r}; "
              f"`{command_line(args, 'connection list', '--email', args.email)}` shows theirs", file=sys.stderr)
        return 2
    withdrawn = 0
    if connection.revoked:
        print("# this connection was revoked already: nothing changed", file=sys.stderr)
    else:
        connection, withdrawn = accounts.revoke_connection(desk, person.workspace_id, connection, actor="system",
                                                           channel="system", reason=accounts.BY_OPERATOR)
    print(json.dumps({"connection": connection_view(connection), "withdrawn_cards": withdrawn}, indent=2))
    return 0


def add_parser(sub) -> None:
    group = sub.add_parser("connection", help="manage agent connections").add_subparsers(dest="action", required=True)
    create = group.add_parser("create", help="an agent connection for a member; prints its token once")
    store_options(create)
    create.add_argument("--email", required=True, help="the member who authorises this agent")
    create.add_argument("--name", required=True, help='a name such as "Claude on laptop"')
    create.set_defaults(func=cmd_connection_create)
    listing = group.add_parser("list", help="a member's connections: name, when made and last used, revoked or not")
    revoking = group.add_parser("revoke", help="revoke a member's connection: its token stops at once, and the "
                                               "cards it filed that still wait are withdrawn")
    revoking.add_argument("connection_id", metavar="CONNECTION_ID", help="its id (k_…), from `connection list`")
    for parser, func in ((listing, cmd_connection_list), (revoking, cmd_connection_revoke)):
        parser.add_argument("--email", required=True, help="the member whose connections these are")
        store_options(parser)
        parser.set_defaults(func=func)
