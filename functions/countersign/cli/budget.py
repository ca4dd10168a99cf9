"""``countersign budget import`` and ``upgrade``: the budget toolset's register import, and moving a
budget an older version wrote into the current layout."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .common import member, open_command_store, store_options


def _demo_email(data_dir: Path) -> str | None:
    """The member ``demo.json`` in the data folder names (``serve --demo`` writes it), if any."""
    demo = data_dir / "demo.json"
    return json.loads(demo.read_text()).get("person_email") if demo.exists() else None


def cmd_budget_import(args) -> int:
    """Import a YNAB register export into the budget of the member's workspace; nothing on a bad row."""
    # When importing, not at the CLI's start (the gate's and the budget toolset's modules).
    from ..toolkit import ActionContext
    from ..toolsets.budget.importer import RegisterError, import_register

    s, store = open_command_store(args)
    email = args.email or _demo_email(s.data_dir)
    if not email:
        print("error: --email is required (no demo.json in the data folder names a member)", file=sys.stderr)
        return 2
    person = member(store, email)
    if person is None:
        return 2
    path = Path(args.file).expanduser()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    ctx = ActionContext(store.docs, store.workspaces.get_workspace(person.workspace_id), person, None, int(time.time()))
    try:
        result = import_register(store.docs, ctx, text, source=path.name)
    except RegisterError as exc:
        print(f"error: {path.name}: {exc}; nothing was imported", file=sys.stderr)
        return 2
    print(json.dumps({"workspace_id": person.workspace_id, **result.to_dict()}, indent=2))
    return 0


def cmd_budget_upgrade(args) -> int:
    """Move a budget written before the chunked layout into it, and build (or rebuild, where they
    disagree with the months) its roll-ups and its months' needs-attention docs (once per
    workspace after a deploy; safe to repeat)."""
    from ..toolsets.budget.layout import upgrade  # when upgrading, not at the CLI's start (the budget toolset)

    s, store = open_command_store(args)
    email = args.email or _demo_email(s.data_dir)
    person = store.workspaces.get_person_by_email(email) if email else None
    if person is None:
        print("error: --email must name a member of the workspace to upgrade", file=sys.stderr)
        return 2
    print(json.dumps({"workspace_id": person.workspace_id, "moved": upgrade(store.docs, person.workspace_id)}))
    return 0


def add_parser(sub) -> None:
    budget = sub.add_parser("budget", help="the budget toolset").add_subparsers(dest="action", required=True)
    budget_import = budget.add_parser("import", help="import a YNAB register export (CSV); a bad row imports nothing")
    budget_import.add_argument("file", metavar="FILE.csv")
    budget_import.add_argument("--email", help="a member of the workspace to import into (default: the demo person)")
    store_options(budget_import)
    budget_import.set_defaults(func=cmd_budget_import)
    budget_upgrade = budget.add_parser("upgrade", help="move a budget written by an older version into the "
                                                       "chunked layout and build or repair its roll-ups "
                                                       "(after a deploy; safe to repeat)")
    budget_upgrade.add_argument("--email", help="a member of the workspace (default: the demo person)")
    store_options(budget_upgrade)
    budget_upgrade.set_defaults(func=cmd_budget_upgrade)
