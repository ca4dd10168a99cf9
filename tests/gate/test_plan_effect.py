"""A plan that carries its effect (``Plan(subject, preview, effect=...)``, docs/writing-a-toolset.md)
is what a yes commits, on every path, without the action's ``apply`` being called again: a click on
the page, a 2026-07-28 answer in the client, a call that runs at once, and the re-plan after a write
raced it (both stores). The actions here stage their writes in ``plan`` and fail loudly in
``apply``: a yes that called ``apply`` would end the card ``failed``."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.core.preview import Preview
from countersign.core.tickets import Keyring, new_secret
from countersign.gate import ask as gate_ask, clicks
from countersign.gate.desk import CardDesk
from countersign.gate.registry import Registry
from countersign.identity import accounts
from countersign.identity.principal import Principal
from countersign.settings import Settings
from countersign.store.docs import DocWrite
from countersign.toolkit import ALWAYS, CLIENT, NEVER, Action, ActionContext, Effect, Plan, Toolset
from tests.budget.ledger import NOW
from tests.support.sample_toolset import KIND, NoteText, _note, seed_notes
from tests.support.stores import store  # noqa: F401  (the both-stores fixture)

PLANS: list[str] = []  # the note's version each plan read, in order


class _Staging(Action):
    arguments = NoteText
    drift_message = "The notes changed between the preview and the answer; nothing was written."

    def plan(self, args: NoteText, ctx: ActionContext) -> Plan:
        doc = _note(ctx, args.note_id)
        PLANS.append(f"v{doc.version}")
        subject = {"note": doc.id, "after": args.text}
        effect = Effect.writes({"note": doc.id, "text": args.text, "staged_at_version": doc.version},
                               [DocWrite(KIND, doc.id, dict(doc.data, text=args.text), doc.version)])
        return Plan(subject, Preview(f"Change note ‘{doc.data['title']}’?", (args.text,)), effect=effect)

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        raise AssertionError("apply was called although the plan carried its effect")


class StageInClient(_Staging):
    name = "stage_in_client"
    gate = CLIENT


class StageOnPage(_Staging):
    name = "stage_on_page"
    gate = ALWAYS


class StageAtOnce(_Staging):
    name = "stage_at_once"
    gate = NEVER


STAGING = Toolset(name="staging", actions=[StageInClient(), StageOnPage(), StageAtOnce()], reads=[])


class World:
    def __init__(self, store):  # noqa: F811
        self.store = store
        workspace, self.person = accounts.create_workspace(store.workspaces, "Acme", f"{new_id('u')}@example.com",
                                                           now=NOW)
        self.workspace_id = workspace.id
        [self.note] = seed_notes(store, workspace.id, count=1)
        self.desk = CardDesk(store, Keyring.from_secrets([new_secret()]), Settings(), Registry([STAGING]),
                             clock=lambda: NOW)
        conn = accounts.create_connection(store.workspaces, store.connections, workspace.id, self.person.id,
                                          "agent").connection
        self.principal = Principal(workspace, self.person, conn)

    def call(self, tool: str, text: str, **how) -> gate_ask.Reply:
        principal = dataclasses.replace(self.principal,
                                        workspace=self.store.workspaces.get_workspace(self.workspace_id))
        return asyncio.run(gate_ask.ask(self.desk, gate_ask.Call(principal, tool, {"note_id": self.note,
                                                                                   "text": text}, **how)))

    def text(self) -> str:
        return self.store.docs.get_doc(self.workspace_id, KIND, self.note).data["text"]


@pytest.fixture
def world(store):  # noqa: F811
    PLANS.clear()
    return World(store)


def test_a_click_commits_the_effect_its_re_plan_staged(world):
    held = world.call("stage_on_page", "from the page")
    card = clicks.confirm_click(world.desk, world.workspace_id, world.person, held.payload["confirmationId"])
    assert card.state is CardState.COMPLETED, card.result
    assert card.result["result"] == {"note": world.note, "text": "from the page", "staged_at_version": 1}
    assert world.text() == "from the page" and PLANS == ["v1", "v1"]  # the call, and the re-plan at the click


def test_an_answer_in_the_client_commits_the_effect_its_plan_staged(world):
    form = world.call("stage_in_client", "from the client", modern=True, form_elicitation=True)
    assert isinstance(form, gate_ask.AskForm)
    done = world.call("stage_in_client", "from the client", modern=True, form_elicitation=True,
                      answer=gate_ask.ACCEPT, state=form.state)
    assert done.payload["status"] == "completed" and done.payload["result"]["text"] == "from the client"
    assert world.text() == "from the client" and PLANS == ["v1", "v1"]  # the question, and the answer's plan


def test_a_call_that_runs_at_once_commits_the_effect_its_plan_staged(world):
    done = world.call("stage_at_once", "at once")
    assert done.payload["status"] == "completed" and done.payload["result"]["text"] == "at once"
    assert world.text() == "at once" and PLANS == ["v1"]


def test_a_write_that_raced_the_click_is_staged_again_from_the_new_plan(world):
    """The note moves between the click's plan and its commit (a field neither the subject nor the
    preview shows, so the fingerprint stays): the commit is refused, the gate plans again and commits the
    effect that plan staged, on the version it read."""
    held = world.call("stage_on_page", "after the race")
    real = world.store.cards.commit_card
    raced: list[bool] = []

    def commit_card(commit):
        if not raced:
            raced.append(True)
            doc = world.store.docs.get_doc(world.workspace_id, KIND, world.note)
            world.store.docs.write_docs(world.workspace_id, [DocWrite(KIND, doc.id, dict(doc.data, touched=True),
                                                                 doc.version)])
        return real(commit)

    world.store.cards.commit_card = commit_card
    card = clicks.confirm_click(world.desk, world.workspace_id, world.person, held.payload["confirmationId"])
    assert card.state is CardState.COMPLETED, card.result
    assert card.result["result"]["staged_at_version"] == 2 and PLANS == ["v1", "v1", "v2"]
    doc = world.store.docs.get_doc(world.workspace_id, KIND, world.note)
    assert (doc.data["text"], doc.data["touched"], doc.version) == ("after the race", True, 3)
