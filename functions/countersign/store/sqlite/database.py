"""One SQLite file in WAL mode, safe from many threads and processes.

Every thread (and every process) gets its own connection. Every write runs in a
``BEGIN IMMEDIATE`` transaction, which takes the database's write lock before the first read, so
a read-check-write (a card's move, a versioned batch) cannot interleave with another writer;
waiting writers queue on ``busy_timeout``. Readers are never blocked.

The file (and the ``-wal`` and ``-shm`` files SQLite makes beside it, which copy its mode) is
created readable by its owner only: it holds the workspace's data and every card's ticket.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import Conflict, StoreUnavailable
from . import schema

# The errors of a file that cannot take a write right now; any other error is a bug and is raised.
UNAVAILABLE = ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN")


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
            _create_private(path)
        self.path = path
        self._local = threading.local()
        # Weak: a thread that ends drops its connection; close() closes the ones still alive.
        self._opened: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._opened_lock = threading.Lock()
        schema.create_schema(self.connection())

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
            if not str(getattr(exc, "sqlite_errorname", "")).startswith(UNAVAILABLE):
                raise
            raise StoreUnavailable(
                f"The database {os.path.basename(self.path)} could not record this ({exc}); nothing was written. "
                "Try again once the cause is fixed."
            ) from exc

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


def _create_private(path: str) -> None:
    """Create an empty database file with mode 0600 if there is none yet."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass


@contextmanager
def unique(message: str) -> Iterator[None]:
    """Turn a primary-key or unique violation into :class:`Conflict`."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        raise Conflict(message) from exc
