"""What every ``countersign`` command shares: the ``--data`` and ``--store`` options, the settings
and store a command runs with, the member an ``--email`` names, and the next command a hint prints
(with the same ``--data`` and ``--store``, so that it works as printed)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .. import settings as settings_mod
from ..core import times
from ..settings import ConfigError, Settings
from ..store.errors import StoreUnusable
from ..store.opening import open_store
from ..store.workspaces import Person

if TYPE_CHECKING:  # the gate's modules load when a command runs (command_desk), not at the CLI's start
    from ..gate.desk import CardDesk

# The command-line options that stand for a variable: a value refused is named as it was given.
OPTION_FOR = {"COUNTERSIGN_DATA": ("data", "--data"), "COUNTERSIGN_STORE": ("store", "--store")}

STORE_HELP = "sqlite:///PATH or dynamodb://TABLE (default: COUNTERSIGN_STORE)"
DATA_HELP = "the data folder: the SQLite file, keys and outbox (default: COUNTERSIGN_DATA, else per user)"


def store_options(parser: argparse.ArgumentParser, store_help: str = STORE_HELP) -> None:
    """``--data`` and ``--store`` on ``parser``."""
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--store", help=store_help)


def command_settings(args) -> Settings:
    """The settings for this command. The public URL: ``COUNTERSIGN_PUBLIC_URL`` if set; for
    ``serve``, ``http://localhost:PORT``; otherwise the one the local server on this data folder
    recorded (so printed links point at the server that runs), else the default. A ``--data`` or
    ``--store`` refused (a file given as the folder; ``dynamodb://`` without the AWS libraries) is
    named as the option, not as the variable it stands for."""
    env = dict(os.environ)
    if getattr(args, "data", None):
        env["COUNTERSIGN_DATA"] = str(Path(args.data).expanduser().resolve())
    if getattr(args, "store", None):
        env["COUNTERSIGN_STORE"] = args.store
    try:
        if not env.get("COUNTERSIGN_PUBLIC_URL"):
            if getattr(args, "port", None):
                env["COUNTERSIGN_PUBLIC_URL"] = f"http://localhost:{args.port}"
            else:
                recorded = settings_mod.recorded_public_url(settings_mod.load(env).data_dir)
                if recorded:
                    env["COUNTERSIGN_PUBLIC_URL"] = recorded
        return settings_mod.load(env)
    except ConfigError as exc:
        attribute, option = OPTION_FOR.get(exc.variable, ("", ""))
        if attribute and getattr(args, attribute, None):
            raise ConfigError(option, str(exc).removeprefix(f"{exc.variable}: ")) from None
        raise


def existing_settings(args) -> Settings:
    """:func:`command_settings` for a command that works on what is there (a member, a connection,
    a key in use): a SQLite database must be there already. Without one it is refused
    (:class:`StoreUnusable`) naming where it looked, and nothing is made there."""
    s = command_settings(args)
    if s.store.startswith("sqlite:///"):
        path = Path(s.store[len("sqlite:///"):])
        if not path.exists():
            name = ("the database your server uses with --store sqlite:///PATH" if _store_named(args) else
                    "the data folder your server uses with --data FOLDER (as given to `countersign serve --data`)")
            raise StoreUnusable(f"there is no countersign database {_looked_in(args, s, path)}, and nothing was "
                                f"made there. Name {name}, or make a workspace there first with `countersign "
                                "workspace create`.")
    return s


def _store_named(args) -> bool:
    """Whether the store was named itself (``--store``, ``COUNTERSIGN_STORE``), not by its data folder."""
    return bool(getattr(args, "store", None) or os.environ.get("COUNTERSIGN_STORE"))


def _looked_in(args, s: Settings, path: Path) -> str:
    """Where a command looked for the SQLite database, and what chose it."""
    if getattr(args, "store", None):
        return f"at {path} (--store)"
    if os.environ.get("COUNTERSIGN_STORE"):
        return f"at {path} (COUNTERSIGN_STORE)"
    if getattr(args, "data", None):
        return f"in {s.data_dir} (--data)"
    if os.environ.get("COUNTERSIGN_DATA"):
        return f"in {s.data_dir} (COUNTERSIGN_DATA)"
    return f"in {s.data_dir} (the per-user data folder, used when neither --data nor COUNTERSIGN_DATA names one)"


def open_command_store(args, *, existing: bool = True):
    """This command's settings and its store, opened. ``existing``: the database must be there
    already (:func:`existing_settings`); otherwise (``workspace create``) it is made."""
    s = existing_settings(args) if existing else command_settings(args)
    if s.store.startswith("sqlite:///"):
        s.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return s, open_store(s.store)


def command_line(args, command: str, *options: str) -> str:
    """``countersign COMMAND --data … --store … OPTIONS…`` as a hint prints it: with the ``--data``
    and ``--store`` this command was given (a variable that chose them instead is still set where
    it runs next), so that it works as printed. ``command``: the command's words and positional
    arguments, as written; ``options`` are quoted for the shell. ``COUNTERSIGN_CLI`` names the
    command where it is not ``countersign`` (``scripts/countersign`` in a checkout)."""
    given: list[str] = []
    for attribute, flag in (("data", "--data"), ("store", "--store")):
        if getattr(args, attribute, None):
            given += [flag, getattr(args, attribute)]
    cli = os.environ.get("COUNTERSIGN_CLI") or "countersign"
    return " ".join([cli, command, *(shlex.quote(word) for word in (*given, *options))])


def member(store, email: str, may: Callable[[Person], bool] | None = None, refusal: str = "") -> Person | None:
    """The member with ``email``, or None once it has said there is none or, where ``may`` says
    they may not run this command, the command's ``refusal`` (the command exits 2)."""
    person = store.workspaces.get_person_by_email(email)
    if person is None:
        print(f"error: no member with email {email!r}", file=sys.stderr)
    elif may is not None and not may(person):
        print(f"error: {refusal}", file=sys.stderr)
        return None
    return person


def command_desk(args, *, files_cards: bool) -> CardDesk:
    """The gate's desk a command works with: one that files cards, with the deployment's keys
    (refused where this machine would make keys its functions refuse: ``runtime.files_cards_here``),
    or a keyless one for a command that only reads (``runtime.keyless_desk``)."""
    # When the command runs, not at the CLI's start (the gate's and the server's modules).
    from ..runtime import build, files_cards_here, keyless_desk

    s = existing_settings(args)
    if not files_cards:
        return keyless_desk(s)
    files_cards_here(s)
    return build(s).desk


def reading_desk(args) -> CardDesk:
    """A desk that reads (grants, the policy) and writes no card (no key read or made:
    ``runtime.keyless_desk``), with the deployment's toolsets, whose bounds say how an amount reads
    (``100 credits``)."""
    from dataclasses import replace

    # When the command runs, not at the CLI's start (the gate's and the server's modules).
    from ..gate.registry import Registry
    from ..runtime import keyless_desk, load_toolsets

    s = existing_settings(args)
    return replace(keyless_desk(s), registry=Registry(load_toolsets(s.packs)))


def iso(ts: int) -> str:
    """An instant as the API and the page show it."""
    return times.iso(ts)
