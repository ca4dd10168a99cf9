"""Escalation through the gate (both stores), with the world's clock moved by hand: the owner sets
"a card unanswered after 30 minutes is shown to the admins too" by confirming a card; a card filed
then carries its steps; the sweep's step adds the admins to its audience once due (not before, not
for a card answered meanwhile), tells them, and audits it; an added member may then answer it.
Bad rules are refused with a sentence and nothing is filed."""

from __future__ import annotations

from typing import Any

import pytest

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.gate import clicks, escalation
from countersign.gate.escalation_sweep import escalate_due
from countersign.gate.question import Question
from countersign.gate.registry import Registry
from countersign.identity import accounts
from countersign.store.outbox import audience_digest_id
from countersign.toolkit import ActionError
from countersign.toolsets.budget import TOOLSET as BUDGET
from tests.support.stepped_toolset import TOOLSET as STEPPED

from .world import GateWorld

RULE = {"name": "Slow answers", "when": "any", "after": 30, "add": ["admin"]}
MINUTE = 60


@pytest.fixture
def w(world):
    registry: Registry
    rules = escalation.toolset(lambda tool: registry.agent_action(tool))
    registry = Registry([BUDGET, STEPPED, rules])
    world.desk.registry = registry
    world.ana = accounts.add_person(world.store.workspaces, world.workspace.id, f"{new_id('a')}@example.com", "admin",
                                    "Ana Costa", now=1)
    world.cy = accounts.add_person(world.store.workspaces, world.workspace.id, f"{new_id('c')}@example.com", "member",
                                   "Cy",
                                   now=2)
    return world


def file_rules(w: GateWorld, rules: list[dict[str, Any]]):
    action = w.desk.registry.action("set_escalation_rules")
    ctx = w.desk.context(w.workspace.id, w.person, None, w.desk.now())
    card, _ = w.desk.file(Question.of(action, {"rules": rules}, ctx), "page")
    return card


def set_rules(w: GateWorld, *rules: dict[str, Any]) -> None:
    card = file_rules(w, list(rules))
    assert card.lines[0].startswith(f"{rules[0]['name']}: ") if rules else True
    assert w.click(card.id).state is CardState.COMPLETED


def waiting(w: GateWorld, person) -> list[str]:
    return [c.id for c in w.store.cards.list_pending_cards(w.workspace.id, person.id, w.clock)[0]]


def test_a_card_unanswered_long_enough_is_shown_to_more_people(w):
    set_rules(w, RULE)
    filed_at = w.clock
    card_id = w.held()["confirmationId"]
    card = w.card(card_id)
    assert card.escalate_at == filed_at + 30 * MINUTE and card.escalation["steps"][0]["add"] == ["admin"]
    assert waiting(w, w.ana) == []

    w.clock = filed_at + 30 * MINUTE - 1  # not yet
    assert escalate_due(w.desk, w.clock) == 0 and waiting(w, w.ana) == []

    w.clock = filed_at + 30 * MINUTE
    assert escalate_due(w.desk, w.clock) == 1
    card = w.card(card_id)
    assert card.audience == (w.ana.id,) and card.escalate_at is None and card.state is CardState.PENDING
    assert waiting(w, w.ana) == [card_id] and waiting(w, w.cy) == []
    last = w.store.cards.audit_trail(w.workspace.id, card_id)[-1]
    assert (last.event, last.actor, last.detail) == (
        "escalated", "system", "unanswered after 30 minutes: added Ana Costa (escalation ‘Slow answers’)")
    told = w.store.outbox.get_notification(audience_digest_id(w.ana.id, card_id))
    assert told is not None and told.due_at == w.clock
    assert escalate_due(w.desk, w.clock + MINUTE) == 0  # done: nothing more is due

    # Ana may now answer it: it runs as the request of the person it waits on
    done = clicks.confirm_click(w.desk, w.workspace.id, w.ana, card_id)
    assert done.state is CardState.COMPLETED and w.bakeries() == 1
    assert w.store.cards.audit_trail(w.workspace.id, card_id)[-1].actor == f"person:{w.ana.id}"


def test_a_card_answered_before_its_step_is_due_is_not_escalated(w):
    set_rules(w, RULE)
    filed_at = w.clock
    card_id = w.held()["confirmationId"]
    w.decline(card_id, "no")
    w.clock = filed_at + 31 * MINUTE
    assert escalate_due(w.desk, w.clock) == 0
    assert w.card(card_id).audience == () and waiting(w, w.ana) == []


def test_steps_come_one_after_another(w):
    set_rules(w, {"name": "Ana first", "when": "any", "after": 10, "add": [f"person:{w.ana.id}"]},
              {"name": "Then everyone", "when": "any", "after": 60, "add": ["member", "admin"]})
    filed_at = w.clock
    card_id = w.held()["confirmationId"]
    w.clock = filed_at + 10 * MINUTE
    assert escalate_due(w.desk, w.clock) == 1
    card = w.card(card_id)
    assert card.audience == (w.ana.id,) and card.escalate_at == filed_at + 60 * MINUTE
    w.clock = filed_at + 60 * MINUTE
    assert escalate_due(w.desk, w.clock) == 1
    assert w.card(card_id).audience == (w.ana.id, w.cy.id)  # Ana once; Cy the member now too


def test_a_rule_covers_only_what_its_when_says(w):
    set_rules(w, {**RULE, "when": "tool:set_category_budget"})
    assert w.card(w.held()["confirmationId"]).escalation is None  # create_transactions: not covered


@pytest.mark.parametrize("rule, field, words", [
    ({**RULE, "when": "tool:print_money"}, "rules[0].when", "there is no tool 'print_money' here"),
    ({**RULE, "add": ["approver"]}, "rules[0].add", "no member of the workspace is approvers"),
    ({**RULE, "add": ["person:p_gone"]}, "rules[0].add", "is neither a role"),
])
def test_a_bad_rule_is_refused_and_nothing_filed(w, rule, field, words):
    with pytest.raises(ActionError) as refused:
        file_rules(w, [rule])
    assert refused.value.field == field and words in refused.value.message
    assert w.pending() == []
