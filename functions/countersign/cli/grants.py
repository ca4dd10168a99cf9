"""``countersign grants list``, ``revoke`` and ``grant``: a member's standing grants (docs/policy.md),
as the confirm page's Settings, Grants shows them. ``list`` prints each with its bounds in words,
uses left, expiry and each use; ``revoke`` stops the next call it would have covered (the member's
own grant, or any of the workspace's for an owner or admin). ``grant`` files the held request for one
of the member's own connections and prints its card: nothing is granted until that member confirms
the card on the page (with their passkey under a passkey policy), as from the page."""

from __future__ import annotations

import json
import sys

from ..core.askers import COMMAND_LINE
from ..store.errors import BadInput, NotFound
from ..store.workspaces import MANAGERS
from .common import command_desk, command_line, member, reading_desk, store_options


def cmd_grants_list(args) -> int:
    # imported when the command runs, not at the CLI's start (the gate, the API: ~0.3 s more on every command)
    from ..surfaces.api.standing_grants import grant_fields

    desk = reading_desk(args)
    person = member(desk.store, args.email)
    if person is None:
        return 2
    ws = person.workspace_id
    everyone = args.all and person.role in MANAGERS
    if args.all and not everyone:
        print("error: only a workspace's owners and admins list every member's grants", file=sys.stderr)
        return 2
    grants = desk.store.standing_grants.list_standing_grants(ws, person_id=None if everyone else person.id)
    names = {c.id: c.name for c in desk.store.connections.list_connections(ws)}
    views = [grant_fields(desk, g, person.id, names) for g in grants]
    print(json.dumps(views, indent=2, ensure_ascii=False))
    if any(v["state"] == "active" for v in views):
        print(f"# to revoke one: {command_line(args, 'grants revoke GRANT_ID', '--email', args.email)}",
              file=sys.stderr)
    return 0


def cmd_grants_revoke(args) -> int:
    # imported when the command runs, not at the CLI's start (the gate, the API: ~0.3 s more on every command)
    from ..surfaces.api.standing_grants import grant_fields

    desk = reading_desk(args)  # one conditional write: no keys needed
    store = desk.store
    person = member(store, args.email)
    if person is None:
        return 2
    ws = person.workspace_id
    try:
        grant = store.standing_grants.get_standing_grant(ws, args.grant_id)
    except (NotFound, BadInput):
        grant = None
    if grant is None or (grant.person_id != person.id and person.role not in MANAGERS):
        print(f"error: {args.email} has no grant {args.grant_id!r}; "
              f"`{command_line(args, 'grants list', '--email', args.email)}` shows theirs", file=sys.stderr)
        return 2
    if grant.state_at(desk.now()) == "revoked":
        print("# this grant was revoked already: nothing changed", file=sys.stderr)
    else:
        grant = store.standing_grants.revoke_standing_grant(ws, grant.id, f"person:{person.id}", desk.now())
        print("# revoked: the next call it would have covered waits for a person again", file=sys.stderr)
    names = {c.id: c.name for c in store.connections.list_connections(ws)}
    print(json.dumps(grant_fields(desk, grant, person.id, names), indent=2, ensure_ascii=False))
    return 0


def cmd_grants_grant(args) -> int:
    # imported when the command runs, not at the CLI's start (the gate, the API: ~0.3 s more on every command)
    from ..gate.question import Question
    from ..toolkit import ActionError, ChoiceBound

    desk = command_desk(args, files_cards=True)
    person = member(desk.store, args.email)
    if person is None:
        return 2
    try:
        action = desk.registry.agent_action(args.tool)
    except ActionError as exc:
        print(f"error: tool: {exc.message}", file=sys.stderr)
        return 2
    choices = {b.argument for b in action.grantable if isinstance(b, ChoiceBound)}
    limits: dict = {}
    for given in args.limit or []:
        name, sep, value = given.partition("=")
        if not sep or not name:
            print(f"error: --limit {given!r}: write ARGUMENT=VALUE (a list of values separated by commas for a "
                  "choice)", file=sys.stderr)
            return 2
        limits[name] = [v.strip() for v in value.split(",") if v.strip()] if name in choices else value
    arguments: dict = {"connection_id": args.connection, "tool": args.tool, "name": args.name, "limits": limits,
                       "uses": args.uses, "days": args.days}
    if args.cap is not None:
        arguments["cap"] = args.cap
    try:
        q = Question.of(desk.registry.action("create_standing_grant"),
                        arguments, desk.context(person.workspace_id, person, None, desk.now()))
    except ActionError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    card, filed = desk.file(q, "page", COMMAND_LINE)
    if filed:
        desk.notify(card)
    print(json.dumps({"confirmation_id": card.id, "title": card.title, "lines": list(card.lines),
                      "url": desk.card_url(card.id)}, indent=2, ensure_ascii=False))
    print(f"# nothing is granted until {args.email} confirms it on the page", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    group = sub.add_parser("grants", help="a member's standing grants: list, revoke, or file one to confirm"
                           ).add_subparsers(dest="action", required=True)
    listing = group.add_parser("list", help="a member's standing grants: bounds, uses left, expiry, each use")
    listing.add_argument("--all", action="store_true", help="every member's (owners and admins)")
    listing.set_defaults(func=cmd_grants_list)
    revoking = group.add_parser("revoke", help="revoke a grant: the next call it would have covered waits again")
    revoking.add_argument("grant_id", metavar="GRANT_ID", help="its id (sg_…), from `grants list`")
    revoking.set_defaults(func=cmd_grants_revoke)
    granting = group.add_parser("grant", help="file a standing grant for one of the member's own connections; it "
                                              "is made only when they confirm its card on the page")
    granting.add_argument("--connection", required=True, help="the connection (k_…) it lets act: the member's own")
    granting.add_argument("--tool", required=True, help="the one tool it covers (one that declares bounds)")
    granting.add_argument("--name", required=True, help='what the member calls it, such as "Groceries top-up"')
    granting.add_argument("--limit", action="append", metavar="ARGUMENT=VALUE",
                          help="one per bound the tool declares: amount=500.00, or category_id=cat_a,cat_b")
    granting.add_argument("--uses", type=int, required=True, help="how many calls it covers (1 to 1000)")
    granting.add_argument("--days", type=int, required=True, help="how long it lasts from the Confirm (1 to 30)")
    granting.add_argument("--cap", help="at most this much of the tool's amount over all its uses (optional)")
    granting.set_defaults(func=cmd_grants_grant)
    for parser in (listing, revoking, granting):
        parser.add_argument("--email", required=True, help="the member whose grants these are")
        store_options(parser)
