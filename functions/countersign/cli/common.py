"""What every ``countersign`` command shares: the ``--data`` and ``--store`` options, the settings
and store a command runs with, and the member an ``--email`` names."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import settings as settings_mod
from ..settings import Settings
from ..store import open_store

STORE_HELP = "sqlite:///PATH or dynamodb://TABLE (default: COUNTERSIGN_STORE)"
DATA_HELP = "the data folder: the SQLite file, keys and outbox (default: COUNTERSIGN_DATA, else per user)"


def store_options(parser: argparse.ArgumentParser, store_help: str = STORE_HELP) -> None:
    """``--data`` and ``--store`` on ``parser``."""
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--store", help=store_help)


def command_settings(args) -> Settings:
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


def open_command_store(args):
    """This command's settings and its store, opened."""
    s = command_settings(args)
    if s.store.startswith("sqlite:///"):
        s.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return s, open_store(s.store)


def member(store, email: str):
    """The member with ``email``, or None once it has said there is none (the command exits 2)."""
    person = store.get_person_by_email(email)
    if person is None:
        print(f"error: no member with email {email!r}", file=sys.stderr)
    return person


def iso(ts: int) -> str:
    """An instant as the API and the page show it."""
    from ..gate.replies import iso  # when a command prints one, not at the CLI's start (the gate's modules)

    return iso(ts)
