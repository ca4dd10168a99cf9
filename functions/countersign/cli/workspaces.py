"""``countersign workspace create``: a workspace and its first owner."""

from __future__ import annotations

import json

from ..identity import accounts
from .common import open_command_store, store_options


def cmd_workspace_create(args) -> int:
    _, store = open_command_store(args, existing=False)  # a new workspace may be the first thing there
    workspace, owner = accounts.create_workspace(store.workspaces, args.name, args.owner_email, args.owner_name or "")
    print(json.dumps({"workspace_id": workspace.id, "owner_id": owner.id, "owner_email": owner.email}, indent=2))
    return 0


def add_parser(sub) -> None:
    group = sub.add_parser("workspace", help="manage workspaces").add_subparsers(dest="action", required=True)
    create = group.add_parser("create", help="a workspace and its owner")
    store_options(create)
    create.add_argument("--name", required=True)
    create.add_argument("--owner-email", required=True)
    create.add_argument("--owner-name")
    create.set_defaults(func=cmd_workspace_create)
