"""A database that cannot be used stops start-up with one line naming the file and the fix, never
a traceback and never a silently new store: a corrupt file (its header, or a page inside), an empty
file this process did not create, a read-only file (docs/operations.md, "When the database cannot
be used")."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.read_only import run_on_read_only

REPO = Path(__file__).resolve().parents[2]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")}
    env.update(extra)
    return env


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "countersign.cli", *args], cwd=REPO, env=clean_env(),
                          capture_output=True, text=True, timeout=60)


def made_database(tmp_path) -> Path:
    data = tmp_path / "data"
    created = cli("workspace", "create", "--data", str(data), "--name", "X", "--owner-email", "a@example.com")
    assert created.returncode == 0, created.stderr
    return data / "countersign.db"


def refused(done: subprocess.CompletedProcess, database: Path, *words: str) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert str(database) in line, line
    for word in words:
        assert word in line, (word, line)
    return line


def test_a_corrupt_database_stops_start_up_with_one_line(tmp_path):
    database = made_database(tmp_path)
    with database.open("r+b") as fh:  # the header: no longer a database at all
        fh.write(b"this is not a database" * 8)
    line = refused(cli("serve", "--data", str(database.parent)), database, "backup")
    assert line.startswith("error: the database")


def test_a_database_damaged_inside_stops_start_up_with_one_line(tmp_path):
    database = made_database(tmp_path)
    with sqlite3.connect(database) as db:  # settle everything into the main file first
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = db.execute("PRAGMA page_size").fetchone()[0]
    with database.open("r+b") as fh:  # a page of the tables, past the header
        fh.seek(page * 2)
        fh.write(os.urandom(page))
    refused(cli("signin-link", "--data", str(database.parent), "--email", "a@example.com"), database, "backup")


def test_an_empty_database_file_is_not_taken_for_a_new_store(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)  # private, as countersign makes it: the one line is the database's
    database = data / "countersign.db"
    database.touch()
    refused(cli("serve", "--data", str(data)), database, "empty", "backup")
    assert database.stat().st_size == 0, "nothing was written over it"


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("unshare") is None,
                    reason="as root a read-only file is still writable; a read-only mount needs unshare")
def test_a_read_only_database_stops_start_up_with_one_line(tmp_path):
    database = made_database(tmp_path)
    data = database.parent
    command = [sys.executable, "-m", "countersign.cli", "serve", "--data", str(data)]
    done = run_on_read_only(command, data, cwd=REPO, env=clean_env())
    refused(done, database, "writable")
