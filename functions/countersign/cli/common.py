"""The options of every ``countersign`` command that opens the store: which data folder, which store."""

from __future__ import annotations

import argparse

STORE_HELP = "sqlite:///PATH or dynamodb://TABLE (default: COUNTERSIGN_STORE)"
DATA_HELP = "the data folder: the SQLite file, keys and outbox (default: COUNTERSIGN_DATA, else per user)"


def store_options(parser: argparse.ArgumentParser, store_help: str = STORE_HELP) -> None:
    """``--data`` and ``--store`` on ``parser``."""
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--store", help=store_help)
