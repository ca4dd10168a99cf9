"""``countersign serve``: the local server (MCP at /mcp, the confirm page at /), and what it prints
once it listens."""

from __future__ import annotations

import json
import os
import shlex

from ..settings import Settings
from .common import command_settings


def cmd_serve(args) -> int:
    # Imported when serving, not at the CLI's start: uvicorn, Starlette and the whole server
    # would make every other command (and --help) take seconds to begin.
    from ..surfaces.local.app import build_local
    from ..surfaces.local.run import serve

    settings = command_settings(args)
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


def add_parser(sub) -> None:
    serve = sub.add_parser("serve", help="run the local server (MCP at /mcp, confirm page at /)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--data", help="folder for the SQLite file, keys and outbox (default: per-user data folder)")
    serve.add_argument(
        "--demo", action="store_true", help="create a demo workspace, person, data, agent token and sign-in link"
    )
    serve.set_defaults(func=cmd_serve)
