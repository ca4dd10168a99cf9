"""``countersign``: serve | keys | workspace | member (list, add, remove) | connection (create, list, revoke) |
signin-link | backup | suppression | budget import | budget upgrade | upstream | verify-receipt."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import sys
import time
from pathlib import Path

from .. import accounts, settings as settings_mod
from ..core.tickets import Keyring, new_secret
from ..settings import ConfigError, Settings
from ..store.errors import BadInput, Conflict, StoreUnusable
from . import connections as cli_connections, members as cli_members, receipts as cli_receipts, upstream as cli_upstream
from .common import store_options


def _settings(args) -> Settings:
    """The settings for this command. The public URL: ``COUNTERSIGN_PUBLIC_URL`` if set; for
    ``serve``, ``http://localhost:PORT``; otherwise the one the local server on this data folder
    recorded (so printed links point at the server that runs), else the default."""
    env = dict(os.environ)
    if getattr(args, "data", None):
        env["COUNTERSIGN_DATA"] = str(Path(args.data).expanduser().resolve())
    if getattr(args, "store", None):
        env["COUNTERSIGN_STORE"] = args.store
    if not env.get("COUNTERSIGN_PUBLIC_URL"):
        if getattr(args, "port", None):
            env["COUNTERSIGN_PUBLIC_URL"] = f"http://localhost:{args.port}"
        else:
            recorded = settings_mod.recorded_public_url(settings_mod.load(env).data_dir)
            if recorded:
                env["COUNTERSIGN_PUBLIC_URL"] = recorded
    return settings_mod.load(env)


def member(store, email: str):
    """The member with ``email``, or None once it has said there is none (the command exits 2)."""
    person = store.get_person_by_email(email)
    if person is None:
        print(f"error: no member with email {email!r}", file=sys.stderr)
    return person


def cmd_keys(args) -> int:
    """Print a fresh signing key and request-state key, in the form the environment takes; or
    (``keys in-use``) list the keys that signed cards still answerable; or (``keys forget ID``)
    drop a lost key from that record, so a server without it may start."""
    if args.action == "in-use":
        _, store = _store(args)
        for key_id, until in sorted(store.signing_keys_in_use(int(time.time())).items()):
            print(f"{key_id}  cards answerable until {_iso(until)}")
        return 0
    if args.action == "forget":
        if not args.key_id:
            print("error: name the key: countersign keys forget KEY_ID", file=sys.stderr)
            return 2
        _, store = _store(args)
        if args.key_id not in store.signing_keys_in_use(int(time.time())):
            print(f"error: no card that can still be answered was signed by key {args.key_id!r}", file=sys.stderr)
            return 2
        store.forget_signing_key(args.key_id)
        print(f"# forgot key {args.key_id}: the cards it signed will be refused as tampered if clicked",
              file=sys.stderr)
        return 0
    secret = new_secret()
    key_id = Keyring.from_secrets([secret]).key_id
    print(f"COUNTERSIGN_SIGNING_KEY={secret}")
    print(f"COUNTERSIGN_STATE_KEYS={secrets.token_urlsafe(48)}")
    print(f"# signing key id: {key_id}. To rotate, list the new key first: NEW,OLD", file=sys.stderr)
    return 0


def _iso(ts: int) -> str:
    from ..gate.replies import iso

    return iso(ts)


def _store(args):
    from ..store import open_store

    s = _settings(args)
    if s.store.startswith("sqlite:///"):
        s.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return s, open_store(s.store)


def cmd_workspace_create(args) -> int:
    s, store = _store(args)
    workspace, owner = accounts.create_workspace(store, args.name, args.owner_email, args.owner_name or "")
    print(json.dumps({"workspace_id": workspace.id, "owner_id": owner.id, "owner_email": owner.email}, indent=2))
    return 0


def cmd_connection_create(args) -> int:
    s, store = _store(args)
    person = member(store, args.email)
    if person is None:
        return 2
    new = accounts.create_connection(store, person.workspace_id, person.id, args.name)
    print(
        json.dumps({"connection_id": new.connection.id, "mcp_url": f"{s.public_url}/mcp", "token": new.token}, indent=2)
    )
    print("# the token is shown once: put it in your MCP client as 'Authorization: Bearer <token>'", file=sys.stderr)
    return 0


def cmd_signin_link(args) -> int:
    s, store = _store(args)
    person = member(store, args.email)
    if person is None:
        return 2
    token = accounts.mint_signin_token(store, person)
    print(f"{s.public_url}/signin#token={token}")
    return 0


def cmd_suppression(args) -> int:
    """Show or lift the suppression of an address that bounced or complained (docs/alarms.md)."""
    from ..accounts import email_address
    from ..gate.replies import iso

    email = email_address(args.email).lower()  # (an address that is none is refused before the store is opened)
    s, store = _store(args)
    current = store.address_suppression(email)
    if args.action == "lift" and current is not None:
        store.lift_suppression(email)
    view = {"email": email, "suppressed": current is not None and args.action == "show"}
    if current is not None:
        view.update(reason=current.reason, since=iso(current.at), detail=current.detail)
    if args.action == "lift":
        view["lifted"] = current is not None
    print(json.dumps(view, indent=2))
    if args.action == "lift" and current is not None:
        print("# card emails go to this address again. On AWS, SES's account-level suppression list may still hold "
              f"it: aws sesv2 delete-suppressed-destination --email-address {email}", file=sys.stderr)
    elif args.action == "lift":
        print("# this address was not suppressed: nothing changed", file=sys.stderr)
    return 0


def cmd_serve(args) -> int:
    from ..surfaces.local import build_local, serve

    settings = _settings(args)
    app, demo = build_local(settings, demo=args.demo)

    def listening() -> None:
        print(next_steps(settings, demo, args.data), flush=True)

    return serve(app, args.host, args.port, on_listening=listening)


def next_steps(settings: Settings, demo: dict | None, data: str | None) -> str:
    """What ``serve`` prints once it listens: where it is, and what a person does next."""
    url, mcp = settings.public_url, f"{settings.public_url}/mcp"
    cli = os.environ.get("COUNTERSIGN_CLI") or "countersign"
    at = f" --data {shlex.quote(data)}" if data else ""
    lines = [f"countersign is listening on {url}  (MCP endpoint: {mcp})", ""]
    if demo:
        email, token = demo["person_email"], demo["agent_token"]
        lines += [
            f"1. Sign in to the confirm page as {email} (the link works once, within 15 minutes):",
            f"     {demo['signin_url']}",
            "   A new link when that one is spent or expired:",
            f"     {cli} signin-link{at} --email {email}",
            "",
            f"2. Connect an agent with the demo token (also in {settings.data_dir / 'demo.json'}):",
        ]
    else:
        token = "cs_…"
        lines += [
            "1. No demo data (start with --demo for some). Make a workspace, an agent token and a sign-in link:",
            f"     {cli} workspace create{at} --name \"My team\" --owner-email you@example.com",
            f"     {cli} connection create{at} --email you@example.com --name \"Claude on laptop\"",
            f"     {cli} signin-link{at} --email you@example.com",
            "",
            "2. Connect an agent with that token:",
        ]
    header = {"Authorization": f"Bearer {token}"}
    lines += [
        "   Claude Code:",
        f"     claude mcp add --transport http countersign {mcp} --header \"Authorization: Bearer {token}\"",
        "   Cursor (~/.cursor/mcp.json):",
        "     " + json.dumps({"mcpServers": {"countersign": {"url": mcp, "headers": header}}}, ensure_ascii=False),
        "   VS Code (.vscode/mcp.json):",
        "     " + json.dumps({"servers": {"countersign": {"type": "http", "url": mcp, "headers": header}}},
                             ensure_ascii=False),
    ]
    if demo:
        lines += ["   Another token:",
                  f"     {cli} connection create{at} --email {demo['person_email']} --name \"Claude on laptop\""]
    lines += ["", "Stop with Ctrl+C. Starting again keeps everything" + (" and prints a fresh sign-in link." if demo
                                                                        else ".")]
    return "\n".join(lines)


def cmd_backup(args) -> int:
    """Copy the SQLite database, recent commits in its -wal included, while the server runs."""
    from ..store.sqlite.backup import backup

    s = _settings(args)
    if not s.store.startswith("sqlite:///"):
        print("error: countersign backup copies a SQLite store; DynamoDB keeps its own point-in-time recovery",
              file=sys.stderr)
        return 2
    written = backup(s.store[len("sqlite:///"):], Path(args.dest).expanduser(), folder=args.dest.endswith(os.sep))
    print(written)
    where = [name for name, given in (("COUNTERSIGN_SIGNING_KEY", s.signing_key),
                                      ("COUNTERSIGN_STATE_KEYS", s.state_keys)) if given]
    if len(where) < 2 or (s.data_dir / "keys").is_dir():
        where.append(str(s.data_dir / "keys"))
    print(f"# the keys are not in the database: keep a copy of {' and '.join(where)} too (they change only when "
          "you rotate a key)", file=sys.stderr)
    return 0


def cmd_budget_import(args) -> int:
    """Import a YNAB register export into the budget of the member's workspace; nothing on a bad row."""
    import time

    from ..gate.context import ActionContext
    from ..toolsets.budget.importer import RegisterError, import_register

    s, store = _store(args)
    email = args.email
    if not email:
        demo = s.data_dir / "demo.json"
        email = json.loads(demo.read_text()).get("person_email") if demo.exists() else None
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
    ctx = ActionContext(store, store.get_workspace(person.workspace_id), person, None, int(time.time()))
    try:
        result = import_register(store, ctx, text, source=path.name)
    except RegisterError as exc:
        print(f"error: {path.name}: {exc}; nothing was imported", file=sys.stderr)
        return 2
    print(json.dumps({"workspace_id": person.workspace_id, **result.to_dict()}, indent=2))
    return 0


def cmd_budget_upgrade(args) -> int:
    """Move a budget written before the chunked layout into it, and build (or rebuild, where they
    disagree with the months) its roll-ups and its months' needs-attention docs (once per
    workspace after a deploy; safe to repeat)."""
    from ..toolsets.budget.layout import upgrade

    s, store = _store(args)
    email = args.email
    if not email:
        demo = s.data_dir / "demo.json"
        email = json.loads(demo.read_text()).get("person_email") if demo.exists() else None
    person = store.get_person_by_email(email) if email else None
    if person is None:
        print("error: --email must name a member of the workspace to upgrade", file=sys.stderr)
        return 2
    print(json.dumps({"workspace_id": person.workspace_id, "moved": upgrade(store, person.workspace_id)}))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="countersign", description="A hosted MCP server whose writes wait for a person.")
    sub = p.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the local server (MCP at /mcp, confirm page at /)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--data", help="folder for the SQLite file, keys and outbox (default: per-user data folder)")
    serve.add_argument(
        "--demo", action="store_true", help="create a demo workspace, person, data, agent token and sign-in link"
    )
    serve.set_defaults(func=cmd_serve)

    keys = sub.add_parser("keys", help="print a new signing key and request-state key (or: in-use, forget KEY_ID)")
    keys.add_argument("action", nargs="?", choices=("new", "in-use", "forget"), default="new",
                      help="new (default): print new keys; in-use: the keys live cards need; forget: drop a lost key")
    keys.add_argument("key_id", nargs="?", help="with forget: the key id the start-up error named")
    store_options(keys)
    keys.set_defaults(func=cmd_keys)

    for name, helptext in (("workspace", "manage workspaces"), ("connection", "manage agent connections")):
        group = sub.add_parser(name, help=helptext).add_subparsers(dest="action", required=True)
        create = group.add_parser("create", help="a workspace and its owner" if name == "workspace"
                                  else "an agent connection for a member; prints its token once")
        store_options(create)
        if name == "workspace":
            create.add_argument("--name", required=True)
            create.add_argument("--owner-email", required=True)
            create.add_argument("--owner-name")
            create.set_defaults(func=cmd_workspace_create)
        else:
            create.add_argument("--email", required=True, help="the member who authorises this agent")
            create.add_argument("--name", required=True, help='a name such as "Claude on laptop"')
            create.set_defaults(func=cmd_connection_create)
            cli_connections.add_parsers(group)
        if name == "workspace":
            cli_members.add_parser(sub)

    save = sub.add_parser("backup", help="copy the SQLite database (recent commits included) while it runs")
    save.add_argument("dest", metavar="DEST",
                      help="a new file, or a folder (existing, or ending in /) for countersign-<time>.db")
    store_options(save, "sqlite:///PATH (default: COUNTERSIGN_STORE, or the data folder's database)")
    save.set_defaults(func=cmd_backup)

    link = sub.add_parser("signin-link", help="print a one-time sign-in link for a member (15 minutes)")
    link.add_argument("--email", required=True)
    store_options(link)
    link.set_defaults(func=cmd_signin_link)

    cli_receipts.add_parser(sub)

    suppression = sub.add_parser("suppression", help="show or lift the suppression of an address that bounced")
    suppression.add_argument("action", choices=("show", "lift"),
                             help="show: whether card emails to it are suppressed, and why; lift: send to it again")
    suppression.add_argument("--email", required=True)
    store_options(suppression)
    suppression.set_defaults(func=cmd_suppression)

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

    cli_upstream.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    except (StoreUnusable, BadInput, Conflict) as exc:  # a name or an email refused: nothing written
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:  # the data folder or a key file cannot be made or read
        where = exc.filename or "the data folder"
        print(f"error: cannot use {where}: {exc.strerror or exc}. Check that the user running countersign may read "
              "and write it, or choose another data folder with --data.", file=sys.stderr)
        return 2


