"""``countersign upstream``: the gateway's upstream MCP servers (docs/gateway.md). ``list`` shows
them; every other command files a held request that a person confirms on the page."""

from __future__ import annotations

import argparse
import json
import sys

from .common import command_desk, member, store_options


def cmd_upstream(args) -> int:
    """Upstream MCP servers (docs/gateway.md): list them, or file a held request to change them."""
    # When the command runs, not at the CLI's start (the gate's and the gateway toolset's modules).
    from ..core.askers import COMMAND_LINE
    from ..store.workspaces import MANAGERS
    from ..surfaces import upstream_requests as requests
    from ..toolkit import ActionError
    from ..toolsets.gateway.requests import parse_headers

    desk = command_desk(args, files_cards=args.action != "list")  # list reads only
    person = member(desk.store, args.email, may=lambda p: p.role in MANAGERS,
                    refusal="only a workspace's owners and admins manage its upstream servers")
    if person is None:
        return 2
    ws = person.workspace_id
    if args.action == "list":
        print(json.dumps(requests.views(desk, ws, person), indent=2))
        return 0
    try:
        if args.action == "add":
            headers = parse_headers(args.header or [])
            arguments = requests.add_arguments(desk, ws, args.name, args.url, args.command, headers)
            tool = "upstream_add"
        elif args.action == "policy":
            arguments = {"name": args.name, "tool": args.tool}
            if args.cls:
                arguments["cls"] = args.cls
            if args.witness is not None:
                arguments["witness"] = [_witness(w) for w in args.witness]
            tool = "upstream_policy"
        else:
            arguments, tool = {"name": args.name}, f"upstream_{args.action}"
        card = requests.file_change(desk, ws, person, tool, arguments, asker=COMMAND_LINE)
    except (ActionError, ValueError) as exc:
        print(f"error: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 2
    print(json.dumps({"confirmation_id": card.id, "title": card.title, "url": desk.card_url(card.id)}, indent=2))
    print("# nothing changes until a person confirms it on the page", file=sys.stderr)
    return 0


def _witness(text: str) -> dict:
    """``read_file:path=$path`` -> the read and its arguments."""
    tool, _, rest = text.partition(":")
    pairs = [p.partition("=") for p in rest.split(",") if p]
    return {"tool": tool, "arguments": {k: v for k, _, v in pairs}}


def add_parser(sub) -> None:
    upstream = sub.add_parser("upstream", help="put upstream MCP servers behind the gate (each change is held)")
    ups = upstream.add_subparsers(dest="action", required=True)
    for action, helptext in (("list", "the workspace's upstreams and how each tool is gated"),
                             ("add", "file a request to add an upstream (its tools are listed on the card)"),
                             ("refresh", "file a request to approve an upstream's tools as they are now"),
                             ("remove", "file a request to remove an upstream"),
                             ("policy", "file a request to change how one tool is gated")):
        one = ups.add_parser(action, help=helptext)
        one.add_argument("--email", required=True, help="the member the request waits on (an owner or admin)")
        store_options(one)
        one.set_defaults(func=cmd_upstream)
        if action == "list":
            continue
        one.add_argument("name", help="the upstream's name: its tools appear as NAME__tool")
        if action == "add":
            where = one.add_mutually_exclusive_group(required=True)
            where.add_argument("--url", help="a Streamable HTTP URL (https)")
            where.add_argument("--command", nargs=argparse.REMAINDER, help="locally: a stdio server's command")
            one.add_argument("--header", action="append", help="'Name: value' sent to the upstream (stored sealed)")
        if action == "policy":
            one.add_argument("tool", help="the tool, without the prefix")
            one.add_argument("--class", dest="cls", choices=("read", "held", "client"))
            one.add_argument("--witness", action="append",
                             help="a read shown on the card and re-run at the click: TOOL:arg=$write_arg,...")
