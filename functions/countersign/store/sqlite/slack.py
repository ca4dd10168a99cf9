"""Slack apps, links, link codes and posts on SQLite."""

from __future__ import annotations

import sqlite3

from ..errors import Conflict, NotFound
from ..slack import (
    POSTED,
    POSTING,
    SlackApp,
    SlackLink,
    SlackLinkCode,
    SlackPost,
    SlackStore,
    check_app,
    check_channel,
    check_link,
)
from . import schema
from .database import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS slack_apps (
    workspace_id TEXT PRIMARY KEY, team_id TEXT NOT NULL UNIQUE, team_name TEXT NOT NULL, bot_user_id TEXT NOT NULL,
    token_sealed TEXT NOT NULL, secret_sealed TEXT NOT NULL, connected_by TEXT NOT NULL, connected_at INTEGER NOT NULL,
    channel TEXT);
CREATE TABLE IF NOT EXISTS slack_links (
    workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, team_id TEXT NOT NULL, user_id TEXT NOT NULL,
    linked_at INTEGER NOT NULL, user_name TEXT, PRIMARY KEY (workspace_id, person_id), UNIQUE (team_id, user_id));
CREATE TABLE IF NOT EXISTS slack_link_codes (
    code_hash TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, person_id TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS slack_posts (
    card_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, state TEXT NOT NULL, claimed_at INTEGER NOT NULL,
    channel TEXT, ts TEXT);
"""

APP_FIELDS = ("workspace_id", "team_id", "team_name", "bot_user_id", "token_sealed", "secret_sealed", "connected_by",
              "connected_at", "channel")
LINK_FIELDS = ("workspace_id", "person_id", "team_id", "user_id", "linked_at", "user_name")
CODE_FIELDS = ("code_hash", "workspace_id", "person_id", "expires_at")
POST_FIELDS = ("card_id", "workspace_id", "state", "claimed_at", "channel", "ts")


def _app(row: sqlite3.Row | None) -> SlackApp | None:
    return None if row is None else SlackApp(**{k: row[k] for k in APP_FIELDS})


def _link(row: sqlite3.Row | None) -> SlackLink | None:
    return None if row is None else SlackLink(**{k: row[k] for k in LINK_FIELDS})


class SQLiteSlack(SlackStore):
    def __init__(self, db: Database):
        self.db = db
        with self.db.write() as conn:
            schema.create_tables(conn, SCHEMA)

    # -- the workspace's app ----------------------------------------------------------------------

    def connect_app(self, app: SlackApp) -> SlackApp:
        check_app(app)
        with self.db.write() as db:
            other = db.execute("SELECT workspace_id FROM slack_apps WHERE team_id = ? AND workspace_id != ?",
                               (app.team_id, app.workspace_id)).fetchone()
            if other is not None:
                raise Conflict("This Slack workspace is connected to another countersign workspace; disconnect it "
                               "there first.")
            db.execute(f"INSERT OR REPLACE INTO slack_apps ({', '.join(APP_FIELDS)}) "
                       f"VALUES ({', '.join('?' * len(APP_FIELDS))})", tuple(getattr(app, k) for k in APP_FIELDS))
        return app

    def get_app(self, workspace_id: str) -> SlackApp | None:
        return _app(self.db.one("SELECT * FROM slack_apps WHERE workspace_id = ?", workspace_id))

    def app_for_team(self, team_id: str) -> SlackApp | None:
        return _app(self.db.one("SELECT * FROM slack_apps WHERE team_id = ?", team_id))

    def set_channel(self, workspace_id: str, channel: str | None) -> SlackApp:
        check_channel(channel)
        with self.db.write() as db:
            found = db.execute("UPDATE slack_apps SET channel = ? WHERE workspace_id = ? RETURNING *",
                               (channel, workspace_id)).fetchone()
        app = _app(found)
        if app is None:
            raise NotFound("slack app", workspace_id)
        return app

    def disconnect_app(self, workspace_id: str) -> bool:
        with self.db.write() as db:
            return db.execute("DELETE FROM slack_apps WHERE workspace_id = ?", (workspace_id,)).rowcount == 1

    # -- links ------------------------------------------------------------------------------------

    def put_link_code(self, code: SlackLinkCode) -> None:
        with self.db.write() as db:
            db.execute(f"INSERT OR REPLACE INTO slack_link_codes ({', '.join(CODE_FIELDS)}) VALUES (?, ?, ?, ?)",
                       tuple(getattr(code, k) for k in CODE_FIELDS))

    def take_link_code(self, code_hash: str, now: int) -> SlackLinkCode | None:
        with self.db.write() as db:
            db.execute("DELETE FROM slack_link_codes WHERE expires_at <= ?", (now,))
            row = db.execute("DELETE FROM slack_link_codes WHERE code_hash = ? RETURNING *", (code_hash,)).fetchone()
        return None if row is None else SlackLinkCode(**{k: row[k] for k in CODE_FIELDS})

    def link(self, link: SlackLink) -> SlackLink:
        check_link(link)
        with self.db.write() as db:
            other = db.execute(
                "SELECT 1 FROM slack_links WHERE team_id = ? AND user_id = ?"
                " AND NOT (workspace_id = ? AND person_id = ?)",
                (link.team_id, link.user_id, link.workspace_id, link.person_id)).fetchone()
            if other is not None:
                raise Conflict("This Slack user is linked to another member; they can unlink it in their Settings.")
            db.execute(f"INSERT OR REPLACE INTO slack_links ({', '.join(LINK_FIELDS)})"
                       f" VALUES ({', '.join('?' * len(LINK_FIELDS))})",
                       tuple(getattr(link, k) for k in LINK_FIELDS))
        return link

    def get_link(self, workspace_id: str, person_id: str) -> SlackLink | None:
        return _link(self.db.one("SELECT * FROM slack_links WHERE workspace_id = ? AND person_id = ?",
                                 workspace_id, person_id))

    def link_of_user(self, team_id: str, user_id: str) -> SlackLink | None:
        return _link(self.db.one("SELECT * FROM slack_links WHERE team_id = ? AND user_id = ?", team_id, user_id))

    def unlink(self, workspace_id: str, person_id: str) -> bool:
        with self.db.write() as db:
            return db.execute("DELETE FROM slack_links WHERE workspace_id = ? AND person_id = ?",
                              (workspace_id, person_id)).rowcount == 1

    # -- posts ------------------------------------------------------------------------------------

    def claim_post(self, card_id: str, workspace_id: str, now: int, lease: int) -> bool:
        with self.db.write() as db:
            return db.execute(
                "INSERT INTO slack_posts (card_id, workspace_id, state, claimed_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (card_id) DO UPDATE SET claimed_at = excluded.claimed_at"
                " WHERE slack_posts.state = ? AND slack_posts.claimed_at + ? <= excluded.claimed_at",
                (card_id, workspace_id, POSTING, now, POSTING, lease)).rowcount == 1

    def finish_post(self, card_id: str, channel: str, ts: str) -> None:
        with self.db.write() as db:
            db.execute("UPDATE slack_posts SET state = ?, channel = ?, ts = ? WHERE card_id = ?",
                       (POSTED, channel, ts, card_id))

    def release_post(self, card_id: str) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM slack_posts WHERE card_id = ? AND state = ?", (card_id, POSTING))

    def get_post(self, card_id: str) -> SlackPost | None:
        row = self.db.one("SELECT * FROM slack_posts WHERE card_id = ?", card_id)
        return None if row is None else SlackPost(**{k: row[k] for k in POST_FIELDS})

