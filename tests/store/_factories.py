"""Records for the store conformance suite. Every helper takes explicit times: stores never read a clock."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import Any

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.store.cards import AuditEntry, Card, CardCommit
from countersign.store.connections import Connection
from countersign.store.hashes import secret_hash
from countersign.store.workspaces import Person, Workspace

DAY = 24 * 3600


def workspace(name: str = "Acme", created_at: int = 0) -> Workspace:
    return Workspace(id=new_id("ws_"), name=name, created_at=created_at)


def person(ws: Workspace, email: str | None = None, role: str = "member", created_at: int = 0) -> Person:
    pid = new_id("p_")
    return Person(
        id=pid, workspace_id=ws.id, email=email or f"{pid}@example.com", role=role, name="Pat", created_at=created_at
    )


def connection(ws: Workspace, who: Person, name: str = "Claude on laptop", created_at: int = 0) -> Connection:
    return Connection(
        id=new_id("c_"),
        workspace_id=ws.id,
        person_id=who.id,
        name=name,
        token_hash=secret_hash(new_id("tok_")),
        created_at=created_at,
    )


def card(
    ws: Workspace,
    who: Person,
    conn: Connection,
    created_at: int = 1000,
    ttl: int = DAY,
    tool: str = "add_transaction",
    fingerprint: str | None = None,
    arguments: dict[str, Any] | None = None,
    filed_by: str | None = "agent",
    webhooks: bool | None = False,
) -> Card:
    """A pending card filed at ``created_at`` that expires ``ttl`` seconds later, by the agent of
    ``conn`` unless ``filed_by`` names another actor (None: not recorded, as an earlier release);
    ``webhooks``: as the gate files one in a workspace without webhook endpoints (None: the store
    finds out)."""
    cid = new_id("card_")
    return Card(
        id=cid,
        workspace_id=ws.id,
        person_id=who.id,
        connection_id=conn.id,
        tool=tool,
        arguments=arguments if arguments is not None else {"amount": 1250, "payee": "Café Ünïcode"},
        subject={"changes": [{"op": "add", "amount": 1250}]},
        title="Add a transaction",
        lines=("Payee: Café Ünïcode", "Amount: 12.50"),
        fingerprint=fingerprint or new_id("fp_"),
        ticket="ticket." + cid,
        state=CardState.PENDING,
        created_at=created_at,
        expires_at=created_at + ttl,
        updated_at=created_at,
        filed_by=f"connection:{conn.id}" if filed_by == "agent" else filed_by,
        webhooks=webhooks,
    )


def audit(
    c: Card, event: str, at: int, actor: str | None = None, channel: str = "page", detail: str | None = None
) -> AuditEntry:
    return AuditEntry(
        card_id=c.id,
        workspace_id=c.workspace_id,
        at=at,
        event=event,
        actor=actor or f"person:{c.person_id}",
        channel=channel,
        connection_id=c.connection_id,
        detail=detail,
    )


def filed(c: Card) -> AuditEntry:
    """The ``filed`` entry that goes with :func:`card`."""
    return audit(c, "filed", c.created_at, actor=f"connection:{c.connection_id}", channel="mcp")


class World:
    """One workspace with one person and one connection, created in ``store``; files cards on demand."""

    def __init__(self, store, name: str = "Acme"):
        self.store = store
        self.ws = workspace(name)
        self.person = person(self.ws, role="owner")
        self.conn = connection(self.ws, self.person)
        store.workspaces.create_workspace(self.ws)
        store.workspaces.create_person(self.person)
        store.connections.create_connection(self.conn)

    def file(self, created_at: int = 1000, ttl: int = DAY, who: Person | None = None, **kwargs: Any) -> Card:
        c = card(self.ws, who or self.person, self.conn, created_at=created_at, ttl=ttl, **kwargs)
        self.store.cards.file_card(c, filed(c))
        return c

    def move(self, c: Card, target: CardState, now: int, **kwargs: Any) -> Card:
        """Transition ``c`` to ``target`` at ``now`` with a matching audit entry."""
        return self.store.cards.transition_card(self.ws.id, c.id, target, now, audit(c, target.value, now), **kwargs)

    def edit(self, c: Card, now: int, ttl: int = DAY, **kwargs: Any) -> Card:
        """Its person's edit of ``c`` (as read) at ``now``, as the gate commits one: ``c`` moves
        ``pending → edited`` naming the new card, which is filed pending (expiring ``ttl`` seconds
        later, for the same connection) in the same transaction. Returns the new card."""
        new = card(self.ws, self.person, self.conn, created_at=now, ttl=ttl, **kwargs)
        new = replace(new, edited={"from": c.id, "by": self.person.id, "byName": self.person.name,
                                   "original": c.arguments, "changes": []})
        self.store.cards.commit_card(CardCommit(
            c, CardState.EDITED, now, (audit(c, "edited", now, detail=f"edited into {new.id}"),), channel="page",
            edited={"into": new.id, "by": self.person.id, "byName": self.person.name, "changes": [],
                    **({"replaces": c.edited["from"]} if (c.edited or {}).get("from") else {})},
            successor=new, successor_audit=audit(new, "filed", now, detail=f"edited from {c.id}")))
        return new

    def add_person(self, role: str = "member", created_at: int = 0) -> Person:
        p = person(self.ws, role=role, created_at=created_at)
        self.store.workspaces.create_person(p)
        return p


def as_released_before(path: str, table: str, column: str, version: int) -> None:
    """The SQLite database at ``path`` (closed) as a release before ``column`` left it: the column
    dropped and the schema version set back to ``version``, so the next open upgrades it."""
    db = sqlite3.connect(path)
    db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()
