"""Passkeys and WebAuthn challenges on SQLite."""

from __future__ import annotations

import json

from ..errors import NotFound
from ..passkeys import (
    Passkey,
    PasskeyChallenge,
    PasskeyStore,
    challenge_fields,
    challenge_from,
    check_passkey_name,
    passkey_fields,
    passkey_from,
)
from . import schema
from .database import Database, unique

COLUMNS = ("credential_id", "workspace_id", "person_id", "user_handle", "public_key", "name", "created_at",
           "sign_count", "last_used_at", "transports")


def _row_to_passkey(row) -> Passkey:
    values = {k: row[k] for k in COLUMNS}
    values["transports"] = json.loads(row["transports"])
    return passkey_from(values)


class SQLitePasskeys(PasskeyStore):
    def __init__(self, db: Database):
        self.db = db

    def put_passkey(self, passkey: Passkey) -> None:
        name = check_passkey_name(passkey.name)
        values = dict(passkey_fields(passkey), name=name)
        values["transports"] = schema.to_json(values["transports"])
        with self.db.write() as db, unique("This passkey is registered already."):
            db.execute(f"INSERT INTO passkeys ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                       tuple(values[k] for k in COLUMNS))

    def get_passkey(self, credential_id: str) -> Passkey | None:
        row = self.db.one("SELECT * FROM passkeys WHERE credential_id = ?", credential_id)
        return _row_to_passkey(row) if row else None

    def list_passkeys(self, workspace_id: str, person_id: str) -> list[Passkey]:
        rows = self.db.all("SELECT * FROM passkeys WHERE workspace_id = ? AND person_id = ?"
                           " ORDER BY created_at, credential_id", workspace_id, person_id)
        return [_row_to_passkey(r) for r in rows]

    def rename_passkey(self, workspace_id: str, person_id: str, credential_id: str, name: str) -> Passkey:
        name = check_passkey_name(name)
        with self.db.write() as db:
            found = db.execute("UPDATE passkeys SET name = ? WHERE credential_id = ? AND workspace_id = ?"
                               " AND person_id = ? RETURNING *", (name, credential_id, workspace_id, person_id))
            rows = found.fetchall()
        if not rows:
            raise NotFound("passkey", credential_id)
        return _row_to_passkey(rows[0])

    def remove_passkey(self, workspace_id: str, person_id: str, credential_id: str) -> None:
        with self.db.write() as db:
            gone = db.execute("DELETE FROM passkeys WHERE credential_id = ? AND workspace_id = ? AND person_id = ?",
                              (credential_id, workspace_id, person_id)).rowcount
        if not gone:
            raise NotFound("passkey", credential_id)

    def note_passkey_use(self, credential_id: str, sign_count: int, now: int) -> None:
        with self.db.write() as db:
            db.execute("UPDATE passkeys SET sign_count = MAX(sign_count, ?), last_used_at = ? WHERE credential_id = ?",
                       (sign_count, now, credential_id))

    def put_passkey_challenge(self, challenge: PasskeyChallenge) -> None:
        with self.db.write() as db:
            db.execute("DELETE FROM passkey_challenges WHERE expires_at <= ?", (challenge.expires_at - 86400,))
            db.execute("INSERT INTO passkey_challenges (challenge_hash, record, expires_at) VALUES (?, ?, ?)",
                       (challenge.challenge_hash, schema.to_json(challenge_fields(challenge)), challenge.expires_at))

    def take_passkey_challenge(self, challenge_hash: str, now: int) -> PasskeyChallenge | None:
        with self.db.write() as db:
            rows = db.execute("DELETE FROM passkey_challenges WHERE challenge_hash = ? RETURNING record, expires_at",
                              (challenge_hash,)).fetchall()
        if not rows or rows[0]["expires_at"] <= now:
            return None
        return challenge_from(json.loads(rows[0]["record"]))
