"""``countersign``: serve | keys | workspace | member (list, add, remove) | connection (create, list, revoke) |
signin-link | backup | suppression | budget import | budget upgrade | upstream | verify-receipt.

One module per command family; :mod:`.common` holds what they share. The commands import the
server's modules when they run, not here, so that ``--help`` and the small commands start quickly."""

from __future__ import annotations

import argparse
import sys

from ..settings import ConfigError
from ..store.errors import BadInput, Conflict, StoreUnusable
from . import backup, budget, connections, keys, members, receipts, serve, signin, suppression, upstream, workspaces


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="countersign", description="A hosted MCP server whose writes wait for a person.")
    sub = p.add_subparsers(dest="command", required=True)
    for family in (serve, keys, workspaces, members, connections, backup, signin, receipts, suppression, budget,
                   upstream):
        family.add_parser(sub)
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
