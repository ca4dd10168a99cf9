"""An in-process mail workspace: a store, the mail toolset, a card desk and the demo data."""

from __future__ import annotations

import asyncio
from typing import Any

from countersign.core.ids import new_id
from countersign.core.tickets import Keyring, new_secret
from countersign.gate import clicks
from countersign.gate.ask import request_card
from countersign.gate.desk import CardDesk
from countersign.gate.question import Question
from countersign.gate.registry import Registry
from countersign.gate.runner import run_unheld
from countersign.identity import accounts
from countersign.identity.principal import Principal
from countersign.settings import Settings
from countersign.store.docs import DocWrite
from countersign.store.workspaces import Person
from countersign.toolkit import ActionContext
from countersign.toolsets.mail import TOOLSET
from countersign.toolsets.mail.demo import seed
from countersign.toolsets.mail.kinds import KIND_CAMPAIGN, KIND_DESIGN, KIND_JOB, KIND_LEDGER, LEDGER_ID, pieces_kind


class World:
    def __init__(self, store, credits: int = 100, contacts=None):
        self.store = store
        self.workspace, self.owner = accounts.create_workspace(
            store.workspaces, "Acme", f"{new_id('u')}@example.com", "Olive Owner"
        )
        self.registry = Registry([TOOLSET])
        self.desk = CardDesk(store, Keyring.from_secrets([new_secret()]), Settings(), self.registry)
        kwargs = {} if contacts is None else {"contacts": contacts}
        self.ids = seed(store.docs, self.ctx(), credits=credits, **kwargs)
        self._connections: dict[str, Any] = {}

    @property
    def ws(self) -> str:
        return self.workspace.id

    def ctx(self, person: Person | None = None) -> ActionContext:
        return ActionContext.reading(
            self.store.docs, self.store.workspaces, self.store.workspaces.get_workspace(self.ws), person or self.owner,
            None, self.desk.now(),
        )

    def add_person(self, role: str) -> Person:
        return accounts.add_person(self.store.workspaces, self.ws, f"{new_id('u')}@example.com", role, name=f"A {role}")

    def action(self, name: str):
        return self.registry.action(name)

    def plan(self, name: str, args: dict, person: Person | None = None):
        action = self.action(name)
        return action.plan(action.parse(args), self.ctx(person))

    def run(self, name: str, args: dict, person: Person | None = None) -> dict:
        """Plan, apply and commit at once (the gate's path for a call that is not held): the result."""
        q = Question.of(self.action(name), args, self.ctx(person))
        return run_unheld(self.desk, q)["result"]

    def gate(self, name: str, args: dict, person: Person | None = None) -> str:
        action = self.action(name)
        ctx = self.ctx(person)
        parsed = action.parse(args)
        cls = action.gate_class(parsed, ctx)
        return f"{cls.name}:{'held' if cls.holds(parsed, ctx) else 'runs'}"

    def principal(self, person: Person | None = None) -> Principal:
        person = person or self.owner
        if person.id not in self._connections:
            new = accounts.create_connection(self.store.workspaces, self.store.connections, self.ws, person.id,
                                             "Test agent")
            self._connections[person.id] = new.connection
        person = self.store.workspaces.get_person(self.ws, person.id)
        return Principal(self.store.workspaces.get_workspace(self.ws), person, self._connections[person.id])

    def request(self, name: str, args: dict, person: Person | None = None) -> dict:
        """File a card (request_confirmation) and return the held reply."""
        return asyncio.run(request_card(self.desk, self.principal(person), name, args))

    def click(self, card_id: str, person: Person | None = None):
        person = self.store.workspaces.get_person(self.ws, (person or self.owner).id)
        return clicks.confirm_click(self.desk, self.ws, person, card_id)

    # -- reading and poking the model ----------------------------------------------------------

    def doc(self, kind: str, doc_id: str):
        return self.store.docs.get_doc(self.ws, kind, doc_id)

    def data(self, kind: str, doc_id: str) -> dict:
        return self.doc(kind, doc_id).data

    def patch(self, kind: str, doc_id: str, **changes) -> None:
        doc = self.doc(kind, doc_id)
        self.store.docs.write_docs(self.ws, [DocWrite(kind, doc_id, {**doc.data, **changes}, doc.version)])

    def balance(self) -> int:
        return self.data(KIND_LEDGER, LEDGER_ID)["balance"]

    def campaign(self) -> dict:
        return self.data(KIND_CAMPAIGN, self.ids["campaign_id"])

    def design(self) -> dict:
        return self.data(KIND_DESIGN, self.ids["design_id"])

    def pieces(self, owner: str | None = None) -> list[dict]:
        owner = owner or self.ids["campaign_id"]
        return [p for d in self.store.docs.list_docs(self.ws, pieces_kind(owner)) for p in d.data["pieces"]]

    def jobs(self) -> list[dict]:
        return [d.data for d in self.store.docs.list_docs(self.ws, KIND_JOB)]

    def set(self, **settings) -> None:
        self.store.workspaces.update_workspace_settings(self.ws, settings)

    def launch(self, person: Person | None = None) -> dict:
        return self.run("launch_campaign", {"campaign_id": self.ids["campaign_id"]}, person)
