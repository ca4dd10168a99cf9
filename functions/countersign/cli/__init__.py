"""``countersign``: serve | keys | workspace | member (list, add, remove) | connection (create, list, revoke) |
grants (list, revoke, grant) | signin-link | backup | suppression | budget import | budget upgrade | upstream |
webhook (add, list, remove, enable, log) | quorum (list, set) | escalation (list, set) | policy (show, export,
import, test) | verify-receipt | smoke.

One module per command family; :mod:`.common` holds what they share. The commands import the
server's modules when they run, not here, so that ``--help`` and the small commands start quickly."""

from __future__ import annotations

import argparse
import os
import sys

from ..settings import ConfigError
from ..store.errors import BadInput, Conflict, StoreUnusable
from . import (
    backup,
    budget,
    connections,
    grants,
    keys,
    members,
    policy,
    quorum,
    receipts,
    serve,
    signin,
    smoke,
    suppression,
    upstream,
    webhooks,
    workspaces,
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="countersign", description="A hosted MCP server whose writes wait for a person.")
    sub = p.add_subparsers(dest="command", required=True)
    for family in (serve, keys, workspaces, members, connections, grants, backup, signin, receipts, suppression, budget,
                   upstream, smoke, webhooks, quorum, policy):
        family.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        try:
            return _run(parser().parse_args(argv))
        finally:
            sys.stdout.flush()  # so that a reader gone is found here, not while the interpreter exits
    except BrokenPipeError:
        # Whoever read stdout has stopped (`countersign member list | head`): end quietly, as the
        # Python documentation's note on SIGPIPE does it: what is left for stdout goes nowhere
        # (else the interpreter's own flush at exit would complain), and the exit status is 1.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _run(args) -> int:
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    except (StoreUnusable, BadInput, Conflict) as exc:  # a name or an email refused: nothing written
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # stdout closed: not the data folder (main)
        raise
    except OSError as exc:  # the data folder or a key file cannot be made or read
        where = exc.filename or "the data folder"
        print(f"error: cannot use {where}: {exc.strerror or exc}. Check that the user running countersign may read "
              "and write it, or choose another data folder with --data.", file=sys.stderr)
        return 2
