"""Sign-in tokens and sessions on SQLite."""

from __future__ import annotations

from ..sessions import Session, SessionStore, SignInToken
from . import schema
from .database import Database, unique


class SQLiteSessions(SessionStore):
    def __init__(self, db: Database):
        self.db = db

    def put_signin_token(self, token: SignInToken) -> None:
        with self.db.write() as db:
            db.execute(
                "INSERT OR REPLACE INTO signin_tokens (token_hash, person_id, workspace_id, expires_at) "
                "VALUES (?, ?, ?, ?)",
                (token.token_hash, token.person_id, token.workspace_id, token.expires_at),
            )

    def consume_signin_token(self, token_hash: str, now: int) -> SignInToken | None:
        with self.db.write() as db:
            found = db.execute("DELETE FROM signin_tokens WHERE token_hash = ? RETURNING *", (token_hash,)).fetchall()
        return schema.signin_token(found[0]) if found and now < found[0]["expires_at"] else None

    def create_session(self, session: Session) -> None:
        with self.db.write() as db, unique("That session already exists."):
            db.execute(
                "INSERT INTO sessions (session_hash, person_id, workspace_id, csrf_token, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session.session_hash, session.person_id, session.workspace_id, session.csrf_token,
                 session.created_at, session.expires_at),
            )

    def get_session(self, session_hash: str, now: int) -> Session | None:
        row = self.db.one("SELECT * FROM sessions WHERE session_hash = ? AND expires_at > ?", session_hash, now)
        return schema.session(row) if row else None

    def delete_session(self, session_hash: str) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM sessions WHERE session_hash = ?", (session_hash,))
