"""The embedded store: one SQLite file in WAL mode, safe from many threads and processes.

Every thread (and every process) gets its own connection. Every write runs in a
``BEGIN IMMEDIATE`` transaction, which takes the database's write lock before the first read, so
a read-check-write (a card transition, a versioned doc batch) cannot interleave with another
writer; waiting writers queue on ``busy_timeout``.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
import weakref
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from ..core.cards import CardState, check_move, effective_state, refusal_for
from ..core.codes import CodeRecord
from . import checks
from . import sqlite_schema as rows
from .errors import BadInput, Conflict, NotFound
from .interface import Store
from .records import AuditEntry, Card, Connection, Doc, DocWrite, Person, Session, SignInToken, Workspace

# History is ordered by when a card stopped being pending: a card that lapsed without a
# transition has no updated_at for that moment, so its expiry stands in.
HISTORY_KEY = "CASE WHEN state = 'pending' THEN expires_at ELSE updated_at END"


class SQLiteStore(Store):
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
        self._path = path
        self._local = threading.local()
        # Weak: a thread that ends drops its connection; close() closes the ones still alive.
        self._opened: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._opened_lock = threading.Lock()
        rows.create_schema(self._db())

    # -- connections and transactions -----------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        """This thread's connection (a fresh one after a fork: connections must not cross processes)."""
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            local.db, local.pid = rows.connect(self._path), os.getpid()
            with self._opened_lock:
                self._opened.add(local.db)
        return local.db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        return self._db().execute(sql, args).fetchone()

    def _all(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return self._db().execute(sql, args).fetchall()

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

    # -- workspaces, persons, connections -------------------------------------------------------

    def create_workspace(self, workspace: Workspace) -> None:
        with self._write() as db, _unique(f"A workspace with id {workspace.id!r} already exists."):
            db.execute(
                "INSERT INTO workspaces (id, name, settings, created_at) VALUES (?, ?, ?, ?)",
                (workspace.id, workspace.name, rows.to_json(workspace.settings), workspace.created_at),
            )

    def get_workspace(self, workspace_id: str) -> Workspace:
        row = self._one("SELECT * FROM workspaces WHERE id = ?", workspace_id)
        if row is None:
            raise NotFound("workspace", workspace_id)
        return rows.workspace(row)

    def rename_workspace(self, workspace_id: str, name: str) -> Workspace:
        name = checks.check_workspace_name(name)
        with self._write() as db:
            found = db.execute("UPDATE workspaces SET name = ? WHERE id = ? RETURNING *", (name, workspace_id)).fetchall()
        if not found:
            raise NotFound("workspace", workspace_id)
        return rows.workspace(found[0])

    def update_workspace_settings(self, workspace_id: str, changes: dict[str, Any]) -> Workspace:
        checks.check_settings(changes)
        with self._write() as db:
            workspace = self.get_workspace(workspace_id)
            settings = {**workspace.settings, **changes}
            db.execute("UPDATE workspaces SET settings = ? WHERE id = ?", (rows.to_json(settings), workspace_id))
        return Workspace(workspace.id, workspace.name, settings, workspace.created_at)

    def create_person(self, person: Person) -> None:
        checks.check_role(person.role)
        with self._write() as db:
            if self._one("SELECT 1 FROM persons WHERE id = ?", person.id):
                raise Conflict(f"A person with id {person.id!r} already exists.")
            if self._one("SELECT 1 FROM persons WHERE email_key = ?", checks.email_key(person.email)):
                raise Conflict(f"The email {person.email!r} already belongs to a member.")
            db.execute(
                "INSERT INTO persons (id, workspace_id, email, email_key, role, name, agent_requests_email, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (person.id, person.workspace_id, person.email, checks.email_key(person.email), person.role,
                 person.name, int(person.agent_requests_email), person.created_at),
            )

    def get_person(self, workspace_id: str, person_id: str) -> Person:
        row = self._one("SELECT * FROM persons WHERE id = ? AND workspace_id = ?", person_id, workspace_id)
        if row is None:
            raise NotFound("person", person_id)
        return rows.person(row)

    def get_person_by_email(self, email: str) -> Person | None:
        row = self._one("SELECT * FROM persons WHERE email_key = ?", checks.email_key(email))
        return rows.person(row) if row else None

    def list_persons(self, workspace_id: str) -> list[Person]:
        found = self._all("SELECT * FROM persons WHERE workspace_id = ? ORDER BY created_at, id", workspace_id)
        return [rows.person(r) for r in found]

    def update_person(self, workspace_id: str, person_id: str, **changes: Any) -> Person:
        checks.check_person_changes(changes)
        with self._write() as db:
            self.get_person(workspace_id, person_id)
            if changes:
                columns = ", ".join(f"{name} = ?" for name in changes)
                db.execute(f"UPDATE persons SET {columns} WHERE id = ?", (*changes.values(), person_id))
            return self.get_person(workspace_id, person_id)

    def create_connection(self, connection: Connection) -> None:
        with self._write() as db, _unique(f"A connection with id {connection.id!r} already exists."):
            db.execute(
                "INSERT INTO connections (id, workspace_id, person_id, name, token_hash, created_at, revoked_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (connection.id, connection.workspace_id, connection.person_id, connection.name,
                 connection.token_hash, connection.created_at, connection.revoked_at),
            )

    def get_connection(self, workspace_id: str, connection_id: str) -> Connection:
        row = self._one("SELECT * FROM connections WHERE id = ? AND workspace_id = ?", connection_id, workspace_id)
        if row is None:
            raise NotFound("connection", connection_id)
        return rows.connection(row)

    def get_connection_by_token_hash(self, token_hash: str) -> Connection | None:
        row = self._one("SELECT * FROM connections WHERE token_hash = ?", token_hash)
        return rows.connection(row) if row else None

    def list_connections(self, workspace_id: str, person_id: str | None = None) -> list[Connection]:
        sql = "SELECT * FROM connections WHERE workspace_id = ? AND (? IS NULL OR person_id = ?) ORDER BY created_at, id"
        return [rows.connection(r) for r in self._all(sql, workspace_id, person_id, person_id)]

    def revoke_connection(self, workspace_id: str, connection_id: str, now: int) -> Connection:
        with self._write() as db:
            db.execute(
                "UPDATE connections SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND workspace_id = ?",
                (now, connection_id, workspace_id),
            )
            return self.get_connection(workspace_id, connection_id)

    # -- sign-in tokens and sessions ------------------------------------------------------------

    def put_signin_token(self, token: SignInToken) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO signin_tokens (token_hash, person_id, workspace_id, expires_at) VALUES (?, ?, ?, ?)",
                (token.token_hash, token.person_id, token.workspace_id, token.expires_at),
            )

    def consume_signin_token(self, token_hash: str, now: int) -> SignInToken | None:
        with self._write() as db:
            found = db.execute("DELETE FROM signin_tokens WHERE token_hash = ? RETURNING *", (token_hash,)).fetchall()
        return rows.signin_token(found[0]) if found and now < found[0]["expires_at"] else None

    def create_session(self, session: Session) -> None:
        with self._write() as db, _unique("That session already exists."):
            db.execute(
                "INSERT INTO sessions (session_hash, person_id, workspace_id, csrf_token, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session.session_hash, session.person_id, session.workspace_id, session.csrf_token,
                 session.created_at, session.expires_at),
            )

    def get_session(self, session_hash: str, now: int) -> Session | None:
        row = self._one("SELECT * FROM sessions WHERE session_hash = ? AND expires_at > ?", session_hash, now)
        return rows.session(row) if row else None

    def delete_session(self, session_hash: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM sessions WHERE session_hash = ?", (session_hash,))

    # -- cards ----------------------------------------------------------------------------------

    def file_card(self, card: Card, audit: AuditEntry) -> None:
        checks.check_arguments(card.arguments)
        row = rows.card_row(card)
        with self._write() as db:
            with _unique(f"A card with id {card.id!r} already exists."):
                db.execute(f"INSERT INTO cards ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
            self._insert_audit(db, audit)
            db.execute(
                "INSERT OR REPLACE INTO latest_cards (workspace_id, person_id, tool, fingerprint, card_id)"
                " VALUES (?, ?, ?, ?, ?)",
                (card.workspace_id, card.person_id, card.tool, card.fingerprint, card.id),
            )

    def _stored_card(self, workspace_id: str, card_id: str) -> Card:
        """The card as stored (no expiry applied)."""
        row = self._one("SELECT * FROM cards WHERE id = ? AND workspace_id = ?", card_id, workspace_id)
        if row is None:
            raise NotFound("card", card_id)
        return rows.card(row)

    def get_card(self, workspace_id: str, card_id: str, now: int) -> Card:
        return self._stored_card(workspace_id, card_id).at(now)

    def latest_card(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int) -> Card | None:
        row = self._one(
            "SELECT cards.* FROM latest_cards JOIN cards ON cards.id = latest_cards.card_id"
            " WHERE latest_cards.workspace_id = ? AND latest_cards.person_id = ? AND latest_cards.tool = ?"
            " AND latest_cards.fingerprint = ?",
            workspace_id, person_id, tool, fingerprint,
        )
        return rows.card(row).at(now) if row else None

    def list_pending_cards(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        return self._page(
            "state = 'pending' AND expires_at > ?", (now,), "created_at", "ASC",
            workspace_id, person_id, now, limit, cursor,
        )

    def list_card_history(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        return self._page(
            "(state != 'pending' OR expires_at <= ?)", (now,), HISTORY_KEY, "DESC",
            workspace_id, person_id, now, limit, cursor,
        )

    def _page(
        self, where: str, args: tuple, key: str, direction: str,
        workspace_id: str, person_id: str, now: int, limit: int, cursor: str | None,
    ) -> tuple[list[Card], str | None]:
        """One keyset page of a person's cards ordered by ``(key, id)``; a cursor only if more follow."""
        if type(limit) is not int or limit < 1:
            raise BadInput("limit", "must be a positive whole number.")
        after, after_args = "", ()
        if cursor is not None:
            position = rows.decode_cursor(cursor)
            beyond = ">" if direction == "ASC" else "<"
            after, after_args = f" AND ({key}, id) {beyond} (?, ?)", position
        found = self._all(
            f"SELECT *, {key} AS sort_key FROM cards WHERE workspace_id = ? AND person_id = ? AND {where}{after}"
            f" ORDER BY sort_key {direction}, id {direction} LIMIT ?",
            workspace_id, person_id, *args, *after_args, limit + 1,
        )
        more = len(found) > limit
        found = found[:limit]
        next_cursor = rows.encode_cursor(found[-1]["sort_key"], found[-1]["id"]) if more else None
        return [rows.card(r).at(now) for r in found], next_cursor

    def transition_card(
        self,
        workspace_id: str,
        card_id: str,
        target: CardState,
        now: int,
        audit: AuditEntry,
        *,
        result: Any = None,
        decline_reason: str | None = None,
        refusal: str | None = None,
        channel: str | None = None,
    ) -> Card:
        target = CardState(target)
        given = {"result": result, "decline_reason": decline_reason, "refusal": refusal, "channel": channel}
        changes = {"state": target.value, "updated_at": now, **{k: v for k, v in given.items() if v is not None}}
        if "result" in changes:
            changes["result"] = rows.to_json(result)
        with self._write() as db:
            card = self._stored_card(workspace_id, card_id)
            current = check_move(card.state, target, card.expires_at, now)
            condition, condition_args = "state = ?", [current.value]
            if current is CardState.PENDING and target is not CardState.EXPIRED:
                condition, condition_args = condition + " AND expires_at > ?", [*condition_args, now]
            updated = db.execute(
                f"UPDATE cards SET {', '.join(f'{k} = ?' for k in changes)} WHERE id = ? AND {condition}",
                (*changes.values(), card_id, *condition_args),
            ).rowcount
            # BEGIN IMMEDIATE already makes the read above current; the write still carries its own
            # condition (as the interface requires), and if it ever matches nothing we refuse with
            # the state the card is really in rather than writing an audit entry for a lost move.
            if updated != 1:
                lost_to = self._stored_card(workspace_id, card_id)
                raise refusal_for(effective_state(lost_to.state, lost_to.expires_at, now), target)
            self._insert_audit(db, audit)
            return self._stored_card(workspace_id, card_id)

    def append_audit(self, entry: AuditEntry) -> None:
        with self._write() as db:
            self._insert_audit(db, entry)

    @staticmethod
    def _insert_audit(db: sqlite3.Connection, entry: AuditEntry) -> None:
        db.execute(
            f"INSERT INTO audit ({', '.join(rows.AUDIT_FIELDS)}) VALUES ({', '.join('?' * len(rows.AUDIT_FIELDS))})",
            tuple(getattr(entry, k) for k in rows.AUDIT_FIELDS),
        )

    def audit_trail(self, workspace_id: str, card_id: str) -> list[AuditEntry]:
        self._stored_card(workspace_id, card_id)
        found = self._all("SELECT * FROM audit WHERE workspace_id = ? AND card_id = ? ORDER BY at, seq", workspace_id, card_id)
        return [rows.audit_entry(r) for r in found]

    # -- single-use values ----------------------------------------------------------------------

    def put_code(self, record: CodeRecord) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO codes (code_hash, workspace_id, fingerprint, expires_at, arguments_digest)"
                " VALUES (?, ?, ?, ?, ?)",
                (record.code_hash, record.workspace_id, record.fingerprint, record.expires_at, record.arguments_digest),
            )

    def take_code(self, code_hash: str, now: int) -> CodeRecord | None:
        with self._write() as db:
            found = db.execute("DELETE FROM codes WHERE code_hash = ? RETURNING *", (code_hash,)).fetchall()
        return rows.code(found[0]) if found else None

    def use_nonce(self, nonce: str, expires_at: int, now: int) -> bool:
        """Insert, or take over a record that has expired (which reads as absent)."""
        with self._write() as db:
            return db.execute(
                "INSERT INTO nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO UPDATE"
                " SET expires_at = excluded.expires_at WHERE nonces.expires_at <= ?",
                (nonce, expires_at, now),
            ).rowcount == 1

    # -- rate limits ----------------------------------------------------------------------------

    def claim_email_slot(self, person_id: str, now: int, interval: int) -> bool:
        with self._write() as db:
            return db.execute(
                "INSERT INTO email_slots (person_id, claimed_at) VALUES (?, ?) ON CONFLICT (person_id) DO UPDATE"
                " SET claimed_at = excluded.claimed_at WHERE email_slots.claimed_at + ? <= excluded.claimed_at",
                (person_id, now, interval),
            ).rowcount == 1

    def release_email_slot(self, person_id: str, claimed_at: int) -> None:
        with self._write() as db:
            db.execute("DELETE FROM email_slots WHERE person_id = ? AND claimed_at = ?", (person_id, claimed_at))

    def hit_rate_limit(self, key: str, now: int, window: int, limit: int) -> bool:
        start = now - now % window
        with self._write() as db:
            db.execute("DELETE FROM rate_hits WHERE bucket = ? AND window_start < ?", (key, start))
            (hits,) = db.execute(
                "INSERT INTO rate_hits (bucket, window_start, hits) VALUES (?, ?, 1)"
                " ON CONFLICT (bucket, window_start) DO UPDATE SET hits = hits + 1 RETURNING hits",
                (key, start),
            ).fetchall()[0]
        return hits <= limit

    # -- toolset documents ----------------------------------------------------------------------

    def get_doc(self, workspace_id: str, kind: str, doc_id: str) -> Doc | None:
        row = self._one("SELECT * FROM docs WHERE workspace_id = ? AND kind = ? AND id = ?", workspace_id, kind, doc_id)
        return rows.doc(row) if row else None

    def list_docs(self, workspace_id: str, kind: str) -> list[Doc]:
        return [rows.doc(r) for r in self._all("SELECT * FROM docs WHERE workspace_id = ? AND kind = ? ORDER BY id", workspace_id, kind)]

    def write_docs(self, workspace_id: str, writes: Iterable[DocWrite]) -> None:
        writes = list(writes)
        checks.check_doc_writes(writes)
        with self._write() as db:
            for w in writes:
                stored = self.get_doc(workspace_id, w.kind, w.id)
                if (stored.version if stored else 0) != w.expected_version:
                    raise Conflict(
                        f"The {w.kind} {w.id!r} changed since it was read (expected version {w.expected_version}).",
                        kind=w.kind, id=w.id,
                    )
            for w in writes:
                if w.data is None:
                    db.execute("DELETE FROM docs WHERE workspace_id = ? AND kind = ? AND id = ?", (workspace_id, w.kind, w.id))
                else:
                    db.execute(
                        "INSERT OR REPLACE INTO docs (workspace_id, kind, id, data, version) VALUES (?, ?, ?, ?, ?)",
                        (workspace_id, w.kind, w.id, rows.to_json(w.data), w.expected_version + 1),
                    )


@contextmanager
def _unique(message: str) -> Iterator[None]:
    """Turn a primary-key or unique violation into :class:`Conflict`."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        raise Conflict(message) from exc
