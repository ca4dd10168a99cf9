"""A workspace with the demo-sized budget, the gate's desk and two agent connections, driven in
process through :func:`countersign.gate.ask.ask` exactly as the MCP surface drives it."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.core.tickets import Keyring, new_secret
from countersign.gate import ask as gate_ask, clicks
from countersign.gate.desk import CardDesk
from countersign.gate.registry import Registry
from countersign.identity import accounts
from countersign.identity.principal import Principal
from countersign.settings import Settings
from countersign.store.cards import Card
from countersign.toolsets.budget import TOOLSET as BUDGET
from tests.budget.ledger import NOW, seed_small
from tests.support.stepped_toolset import TOOLSET as STEPPED, seed_parcels

BAKERY = {"account_id": "acc_checking",
          "transactions": [{"date": "2026-09-18", "payee": "Bakery", "amount": "-5.00"}]}


class GateWorld:
    def __init__(self, store, **settings: Any):
        self.store = store
        self.workspace, self.person = accounts.create_workspace(store.workspaces, "Acme", f"{new_id('u')}@example.com",
                                                                now=NOW)
        seed_small(store, self.workspace.id)
        self.parcels = seed_parcels(store, self.workspace.id)
        self.clock = NOW
        self.desk = CardDesk(store, Keyring.from_secrets([new_secret()]), Settings(**settings),
                             Registry([BUDGET, STEPPED]), clock=lambda: self.clock)
        self.plain = self._principal("Agent without elicitation")
        self.asking = self._principal("Agent that asks")

    def _principal(self, name: str) -> Principal:
        conn = accounts.create_connection(self.store.workspaces, self.store.connections, self.workspace.id,
                                          self.person.id, name).connection
        return Principal(self.store.workspaces.get_workspace(self.workspace.id), self.person, conn)

    def configure(self, **changes: Any) -> None:
        self.desk.settings = dataclasses.replace(self.desk.settings, **changes)

    # -- the calls an agent makes ------------------------------------------------------------------

    def call(self, tool: str, args: dict, principal: Principal | None = None, **how: Any) -> gate_ask.Reply:
        principal = principal or self.plain
        principal = dataclasses.replace(principal, workspace=self.store.workspaces.get_workspace(self.workspace.id))
        return asyncio.run(gate_ask.ask(self.desk, gate_ask.Call(principal, tool, args, **how)))

    def held(self, tool: str = "create_transactions", args: dict = BAKERY) -> dict:
        """A call from a client that cannot ask: the held reply (a card)."""
        reply = self.call(tool, args)
        assert isinstance(reply, gate_ask.Done) and reply.payload["status"] == "pending", reply
        return reply.payload

    def question(self, tool: str = "create_transactions", args: dict = BAKERY) -> gate_ask.AskForm:
        """A 2026-07-28 client with form elicitation is asked."""
        reply = self.call(tool, args, self.asking, modern=True, form_elicitation=True)
        assert isinstance(reply, gate_ask.AskForm), reply
        return reply

    def answer(self, form: gate_ask.AskForm, answer: str = gate_ask.ACCEPT, tool: str = "create_transactions",
               args: dict = BAKERY) -> dict:
        """That client's retry with the person's answer and the sealed state."""
        reply = self.call(tool, args, self.asking, modern=True, form_elicitation=True, answer=answer, state=form.state)
        assert isinstance(reply, gate_ask.Done), reply
        return reply.payload

    def asked_during_the_call(self, answer: Callable[[], str], tool: str = "create_transactions",
                              args: dict = BAKERY) -> dict:
        """A 2025 client on a stateful session, asked during the call; ``answer`` runs while it waits."""

        async def elicit_form(message: str) -> str:
            return await asyncio.to_thread(answer)

        reply = self.call(tool, args, self.asking, form_elicitation=True, elicit_form=elicit_form)
        assert isinstance(reply, gate_ask.Done), reply
        return reply.payload

    # -- the person on the page --------------------------------------------------------------------

    def click(self, card_id: str) -> Card:
        return clicks.confirm_click(self.desk, self.workspace.id, self.person, card_id)

    def decline(self, card_id: str, reason: str | None = None) -> Card:
        return clicks.decline_click(self.desk, self.workspace.id, self.person, card_id, reason)

    # -- what happened -----------------------------------------------------------------------------

    def card(self, card_id: str) -> Card:
        return self.store.cards.get_card(self.workspace.id, card_id, self.clock)

    def events(self, card_id: str) -> list[str]:
        return [e.event for e in self.store.cards.audit_trail(self.workspace.id, card_id)]

    def bakeries(self) -> int:
        """How many times the Bakery purchase was entered: the effect count."""
        return sum(1 for d in self.store.docs.list_docs(self.workspace.id, "budget_txns")
                   for t in d.data["transactions"] if t["payee"] == "Bakery")

    def pending(self) -> list[Card]:
        listed = self.store.cards.list_pending_cards(self.workspace.id, self.person.id, self.clock)[0]
        return [self.card(c.id) for c in listed]  # whole: a listing carries no ticket or fingerprint

    def before_commit(self, n: int, meanwhile: Callable[[], Any]) -> list[Any]:
        """Run ``meanwhile`` just before the desk's ``n``-th commit from now (another answer lands in
        between); returns a list that receives what it returned or raised."""
        real, count, out = self.desk.commit, {"n": 0}, []

        def commit(c, answer=None):
            count["n"] += 1
            if count["n"] == n:
                self.desk.commit = real  # what runs meanwhile commits normally
                try:
                    out.append(meanwhile())
                except Exception as exc:  # noqa: BLE001 - the outcome is what the test checks
                    out.append(exc)
            return real(c, answer)

        self.desk.commit = commit
        return out

    def completed(self, card_id: str) -> bool:
        return self.card(card_id).state is CardState.COMPLETED
