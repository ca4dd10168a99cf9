"""``countersign backup``: a consistent copy of the SQLite store, safe while servers use it.

SQLite's online backup API copies the database as one snapshot, read through the write-ahead log:
recent commits live in ``countersign.db-wal`` until a checkpoint moves them into the main file, so
copying ``countersign.db`` alone would miss them. The copy is one self-contained file (rollback
journal mode, no ``-wal`` beside it), checked, private (0600), and appears under its name only
once whole.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from urllib.parse import quote

from ..errors import StoreUnusable
from .database import unusable


def backup(source: str, dest: Path, folder: bool = False) -> Path:
    """Copy the database at ``source`` to ``dest`` (a new file, or a folder, made if ``folder`` and
    missing, to write ``countersign-<UTC time>.db`` in); the path written. Never overwrites a file."""
    if not os.path.isfile(source):
        raise StoreUnusable(f"there is no database at {source} to back up (check --data or COUNTERSIGN_STORE)")
    if folder:
        try:
            dest.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnusable(f"cannot make the folder {dest} for the backup: {exc.strerror or exc}") from None
    if dest.is_dir():
        dest = dest / time.strftime("countersign-%Y%m%dT%H%M%SZ.db", time.gmtime())
    if dest.exists():
        raise StoreUnusable(f"{dest} already exists; name a new file (a backup never overwrites one)")
    partial = dest.with_name(f".{dest.name}.partial")
    try:
        os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError as exc:
        raise StoreUnusable(f"cannot write the backup {dest}: {exc.strerror or exc}") from None
    try:
        _copy(source, partial)
        os.link(partial, dest)  # fails rather than replace a file that appeared meanwhile
    except FileExistsError:
        raise StoreUnusable(f"{dest} already exists; name a new file (a backup never overwrites one)") from None
    except OSError as exc:
        raise StoreUnusable(f"cannot write the backup {dest}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    return dest


def _copy(source: str, target: Path) -> None:
    # mode=rw: back up what is there, never create an empty database where none was.
    src = sqlite3.connect(f"file:{quote(os.path.abspath(source))}?mode=rw", uri=True)
    dst = sqlite3.connect(str(target))
    try:
        try:
            src.backup(dst)
        except sqlite3.DatabaseError as exc:
            raise StoreUnusable(unusable(source, exc)) from None
        dst.execute("PRAGMA journal_mode = DELETE")  # one file that needs no -wal beside it
        problems = [row[0] for row in dst.execute("PRAGMA quick_check(3)")]
        if problems != ["ok"]:
            raise StoreUnusable(unusable(source, sqlite3.DatabaseError("; ".join(problems)), corrupt=True))
    finally:
        dst.close()
        src.close()
