"""A member an escalation adds to a quorum card, whom the quorum rule names (as they are now), may
approve it, and the card tells them so: ``youMayApprove`` and ``addedByEscalation`` in its view (the
page's quorum line then says "You were added when it went unanswered; your approval counts"). Both
stores, the clock moved by hand."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.gate import clicks, escalation, quorum, quorum_rules
from countersign.gate.escalation_sweep import escalate_due
from countersign.gate.registry import Registry
from countersign.toolsets.budget import TOOLSET as BUDGET
from tests.support.stepped_toolset import TOOLSET as STEPPED

from . import test_escalation
from .test_quorum import BIG, held, set_rules, with_quorum

RULE = {"name": "Big budgets", "when": "over:500", "needs": 2, "of": ["owner", "admin"]}
SLOW = {"name": "Slow answers", "when": "any", "after": 30, "add": ["admin"]}


@pytest.fixture
def w(world):
    w = with_quorum(world)
    registry: Registry
    tools = [quorum_rules.toolset(lambda tool: registry.agent_action(tool)),
             escalation.toolset(lambda tool: registry.agent_action(tool))]
    registry = Registry([BUDGET, STEPPED, *tools])
    w.desk.registry = registry
    return w


def test_a_member_an_escalation_adds_is_told_on_the_card_that_their_approval_counts(w):
    set_rules(w, RULE)
    test_escalation.set_rules(w, SLOW)
    filed_at = w.clock
    card = w.card(held(w, BIG)["confirmationId"])
    assert w.cy.id not in card.quorum["eligible"]  # a member when it was filed
    w.store.workspaces.update_person(w.workspace.id, w.cy.id, role="admin")
    cy = w.store.workspaces.get_person(w.workspace.id, w.cy.id)
    assert quorum.standing(w.card(card.id), cy)["youMayApprove"] is False  # not on the card yet

    w.clock = filed_at + 30 * 60
    assert escalate_due(w.desk, w.clock) == 1
    card = w.card(card.id)
    assert cy.id in card.audience
    seen = quorum.standing(card, cy)
    assert (seen["youMayApprove"], seen["addedByEscalation"], seen["yourApproval"]) == (True, True, 1)
    assert quorum.standing(card, w.ana)["addedByEscalation"] is False  # eligible from the start

    assert clicks.confirm_click(w.desk, w.workspace.id, cy, card.id).state is CardState.PENDING  # it counts
    done = clicks.confirm_click(w.desk, w.workspace.id, w.ana, card.id)
    assert done.state is CardState.COMPLETED
    assert [a["name"] for a in done.result["quorum"]["approvers"]] == [cy.name or cy.email, "Ana Costa"]


def test_one_an_escalation_adds_whom_the_rule_does_not_name_is_told_it_cannot_count(w):
    set_rules(w, {**RULE, "of": ["owner", "person:" + w.bo.id, "person:" + w.ana.id]})
    test_escalation.set_rules(w, {**SLOW, "add": ["member"]})
    filed_at = w.clock
    card = w.card(held(w, BIG)["confirmationId"])
    w.clock = filed_at + 30 * 60
    assert escalate_due(w.desk, w.clock) == 1
    card = w.card(card.id)
    assert w.cy.id in card.audience
    seen = quorum.standing(card, w.cy)
    assert (seen["youMayApprove"], seen["addedByEscalation"]) == (False, True)
