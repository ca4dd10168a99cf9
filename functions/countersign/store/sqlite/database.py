"""One SQLite file in WAL mode, safe from many threads and processes.

Every thread (and every process) gets its own connection. Every write runs in a
``BEGIN IMMEDIATE`` transaction, which takes the database's write lock before the first read, so
a read-check-write (a card's move, a versioned batch) cannot interleave with another writer;
waiting writers queue on ``busy_timeout``. Readers are never blocked.

The file (and the ``-wal`` and ``-shm`` files SQLite makes beside it, which copy its mode) is
created readable by its owner only: it holds the workspace's data and every card's ticket.

Opening checks the file before anything is served: a corrupt, read-only or unopenable database,
or an empty file this process did not just create, raises :class:`StoreUnusable` with one line
naming the file and the fix, instead of a traceback or a silently new store.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import tempfile
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import Conflict, StoreUnavailable, StoreUnusable
from . import schema

log = logging.getLogger("countersign.store")

# The errors of a file that cannot take a write right now (what the caller is told, and when a retry
# will work); any other error is a bug and is raised.
UNAVAILABLE = {
    "SQLITE_FULL": ("the server's disk is full", "once space is freed"),
    "SQLITE_READONLY": ("the server's database file is read-only", "once it is writable again"),
    "SQLITE_IOERR": ("the server's disk reported an I/O error", "once the disk is healthy again"),
    "SQLITE_BUSY": ("the server's database is busy", "in a few seconds"),
    "SQLITE_LOCKED": ("the server's database is busy", "in a few seconds"),
    "SQLITE_CANTOPEN": ("the server cannot open its database file", "once it can be opened again"),
}


class Database:
    def __init__(self, path: str):
        """Open (and create if needed) the database at ``path``.

        ``:memory:`` gets a private temporary file instead, removed on :meth:`close`: an
        in-memory database would be a different database on every thread's connection.
        """
        self._temp = None
        if path == ":memory:":
            fd, path = tempfile.mkstemp(prefix="countersign-", suffix=".db")
            os.close(fd)
            self._temp = path
        else:
            _refuse_empty(path, created=_create_private(path))
        self.path = path
        self._local = threading.local()
        # Weak: a thread that ends drops its connection; close() closes the ones still alive.
        self._opened: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._opened_lock = threading.Lock()
        try:
            db = self.connection()
            schema.create_schema(db)
            problems = [row[0] for row in db.execute("PRAGMA quick_check(3)")]
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreUnusable(unusable(path, exc)) from None
        if problems != ["ok"]:
            self.close()
            raise StoreUnusable(unusable(path, sqlite3.DatabaseError("; ".join(problems)), corrupt=True))

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (a fresh one after a fork: connections must not cross processes)."""
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            local.db, local.pid = schema.connect(self.path), os.getpid()
            with self._opened_lock:
                self._opened.add(local.db)
        return local.db

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: everything inside commits together or not at all.

        A write the file cannot take (disk full, read-only file, I/O error) raises
        :class:`StoreUnavailable`, with everything rolled back.
        """
        db = self.connection()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            name = str(getattr(exc, "sqlite_errorname", ""))
            known = next((v for k, v in UNAVAILABLE.items() if name.startswith(k)), None)
            if known is None:
                raise
            cause, when = known
            log.warning("a write to %s was refused: %s (%s)", self.path, exc, name)
            raise StoreUnavailable(
                f"This was not saved because {cause}: nothing was written, so calling again with the same "
                f"arguments is safe {when}."
            ) from exc

    def write_lock_free(self) -> bool:
        """Whether another connection holds the write lock right now: ``BEGIN IMMEDIATE`` tried
        without waiting, and rolled back (no I/O: in WAL mode it only takes a lock in shared
        memory). True when it was free at that moment; a writer may take it the next."""
        db = self.connection()
        if db.in_transaction:
            return False
        db.execute("PRAGMA busy_timeout = 0")
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:  # SQLITE_BUSY (or a file that cannot be written: not free either)
            return False
        else:
            db.execute("ROLLBACK")
            return True
        finally:
            db.execute(f"PRAGMA busy_timeout = {schema.BUSY_TIMEOUT_MS}")

    def one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        return self.connection().execute(sql, args).fetchone()

    def all(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return self.connection().execute(sql, args).fetchall()

    def close(self) -> None:
        with self._opened_lock:
            opened, self._opened = list(self._opened), weakref.WeakSet()
        for db in opened:
            db.close()
        self._local = threading.local()
        if self._temp:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(self._temp + suffix):
                    os.remove(self._temp + suffix)


def _create_private(path: str) -> bool:
    """Create an empty database file with mode 0600 if there is none yet; whether it was created."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    except OSError as exc:
        raise StoreUnusable(
            f"cannot create the database {path}: {exc.strerror or exc}. Make its folder writable by this user "
            "(or choose another data folder with --data or COUNTERSIGN_STORE)."
        ) from None
    return True


def _refuse_empty(path: str, created: bool) -> None:
    """An empty file this process did not just make is not a new store: it is a copy that failed or
    a file that lost its contents, and starting on it would hide that every record is gone."""
    try:
        empty = os.stat(path).st_size == 0
    except OSError:
        return  # opening it names the problem
    if empty and not created:
        raise StoreUnusable(
            f"the database {path} is an empty file (0 bytes), so it holds none of your data; refusing to start a "
            f"new store over it. Restore it from a backup (countersign backup makes one), or delete it (and any "
            f"{os.path.basename(path)}-wal and -shm beside it) to start with an empty store."
        )


def unusable(path: str, exc: sqlite3.DatabaseError, corrupt: bool = False) -> str:
    """One line for a database that cannot be opened: what is wrong with ``path`` and what to do."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    said = " ".join(str(exc).split())  # one line, whatever SQLite said
    files = f"{path} (and its -wal and -shm files)"
    if corrupt or name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        return (f"the database {path} is damaged or not a database ({said}). Stop every server using it, move {files} "
                "aside and restore your latest backup in its place (docs/operations.md, Backups); or move them aside "
                "to start with an empty store.")
    folder = os.path.dirname(os.path.abspath(path))
    read_only = not (os.access(path, os.W_OK) and os.access(folder, os.W_OK))
    if name.startswith("SQLITE_READONLY") or (name.startswith("SQLITE_CANTOPEN") and read_only):
        return (f"the database {path} is read-only ({said}). Make {files} and its folder {folder} writable by "
                "the user running countersign (chmod u+w; a read-only mount: remount it read-write), or choose "
                "another data folder with --data.")
    if name.startswith("SQLITE_CANTOPEN"):
        return (f"cannot open the database {path} ({said}). Check that its folder exists and that {files} and the "
                "folder are readable and writable by the user running countersign.")
    if name.startswith("SQLITE_FULL"):
        return f"the disk holding the database {path} is full ({said}). Free some space, then start again."
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return (f"the database {path} is locked by another process ({said}). Wait for it, or stop it, then start "
                "again.")
    return (f"cannot use the database {path} ({name or 'error'}: {said}). Check the disk; if the file is damaged, "
            "restore your latest backup in its place.")


@contextmanager
def unique(message: str) -> Iterator[None]:
    """Turn a primary-key or unique violation into :class:`Conflict`."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        raise Conflict(message) from exc
