"""``countersign backup``: a consistent copy of the SQLite database while the server runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .common import command_settings, store_options


def cmd_backup(args) -> int:
    """Copy the SQLite database, recent commits in its -wal included, while the server runs."""
    from ..store.sqlite.backup import backup  # when backing up, not at the CLI's start (the SQLite store)

    s = command_settings(args)
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


def add_parser(sub) -> None:
    save = sub.add_parser("backup", help="copy the SQLite database (recent commits included) while it runs")
    save.add_argument("dest", metavar="DEST",
                      help="a new file, or a folder (existing, or ending in /) for countersign-<time>.db")
    store_options(save, "sqlite:///PATH (default: COUNTERSIGN_STORE, or the data folder's database)")
    save.set_defaults(func=cmd_backup)
