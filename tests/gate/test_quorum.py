"""Quorum through the gate (both stores): the owner sets "a budget over 500.00 needs 2 of owners and
admins" by confirming a card; a call under it is held for every eligible member (never asked in the
client, never run under a standing grant); each approval is its own audited act; one person counts
once; the action runs exactly once at the last approval, drift re-checked then; a no ends it (or, under
``majority``, enough of them). Bad rules are refused with a sentence and nothing is written."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.core.ids import new_id
from countersign.gate import ask as gate_ask, clicks, quorum_rules
from countersign.gate.question import Question
from countersign.gate.registry import Registry
from countersign.identity import accounts
from countersign.store.docs import DocWrite
from countersign.store.sqlite import SQLiteStore
from countersign.toolkit import ActionError
from countersign.toolsets.budget import TOOLSET as BUDGET
from tests.support.serial_moto import serialized_transactions
from tests.support.stepped_toolset import TOOLSET as STEPPED

from .world import GateWorld

BIG = {"category_id": "cat_groceries", "month": "current", "amount": "600.00"}
SMALL = {"category_id": "cat_groceries", "month": "current", "amount": "450.00"}
RULE = {"name": "Big budgets", "when": "over:500", "needs": 2, "of": ["owner", "admin"]}


def with_quorum(w: GateWorld) -> GateWorld:
    registry: Registry
    rules = quorum_rules.toolset(lambda tool: registry.agent_action(tool))
    registry = Registry([BUDGET, STEPPED, rules])
    w.desk.registry = registry
    w.ana = accounts.add_person(w.store.workspaces, w.workspace.id, f"{new_id('a')}@example.com", "admin", "Ana Costa",
                                now=1)
    w.bo = accounts.add_person(w.store.workspaces, w.workspace.id, f"{new_id('b')}@example.com", "admin", "Bo Li",
                               now=2)
    w.cy = accounts.add_person(w.store.workspaces, w.workspace.id, f"{new_id('c')}@example.com", "member", "Cy Park",
                               now=3)
    return w


@pytest.fixture
def w(world):
    return with_quorum(world)


def file_rules(w: GateWorld, rules: list[dict[str, Any]], person=None):
    person = person or w.person
    action = w.desk.registry.action("set_quorum_rules")
    ctx = w.desk.context(w.workspace.id, person, None, w.desk.now())
    card, _ = w.desk.file(Question.of(action, {"rules": rules}, ctx), "page")
    return card


def set_rules(w: GateWorld, *rules: dict[str, Any]) -> None:
    done = w.click(file_rules(w, list(rules)).id)
    assert done.state is CardState.COMPLETED, done


def budgeted(w: GateWorld) -> int:
    month = w.store.docs.get_doc(w.workspace.id, "budget_month", "2026-09-01")
    return month.data.get("budgeted", {}).get("cat_groceries", 0) if month else 0


def held(w: GateWorld, args=BIG) -> dict[str, Any]:
    return w.held("set_category_budget", args)


def approve(w: GateWorld, who, card_id: str):
    return clicks.confirm_click(w.desk, w.workspace.id, who, card_id)


def test_a_rule_is_a_card_the_owner_confirms(w):
    card = file_rules(w, [RULE])
    assert card.title == "Set the quorum rules: 1 rule"
    assert card.lines[0] == "Big budgets: an amount over 500 needs 2 of owners, admins; one no declines it"
    assert quorum_rules.rules_of(w.store.workspaces.get_workspace(w.workspace.id)) == []  # nothing until confirmed
    w.click(card.id)
    [rule] = quorum_rules.rules_of(w.store.workspaces.get_workspace(w.workspace.id))
    assert {k: rule[k] for k in ("name", "when", "needs", "of", "decline")} == {**RULE, "decline": "any"}


@pytest.mark.parametrize("rule, field, words", [
    ({**RULE, "when": "tool:print_money"}, "rules[0].when", "there is no tool 'print_money' here"),
    ({**RULE, "needs": 4}, "rules[0].needs", "no one in the workspace can satisfy this rule: it needs 4 approvals "
                                            "of owners, admins, and 3 members are one of them"),
    ({**RULE, "of": ["person:p_nobody"]}, "rules[0].of", "is neither a role"),
    ({**RULE, "when": "over:lots"}, "rules[0].when", "is not an amount"),
])
def test_a_bad_rule_is_refused_with_a_sentence_and_nothing_filed(w, rule, field, words):
    with pytest.raises(ActionError) as refused:
        file_rules(w, [rule])
    assert refused.value.field == field and words in refused.value.message
    assert w.pending() == []


def test_only_the_owner_sets_rules(w):
    with pytest.raises(ActionError, match="Only the workspace's owner can set its quorum rules; you are admin"):
        file_rules(w, [RULE], person=w.ana)


def test_a_call_under_the_rule_waits_for_every_eligible_member_and_says_so(w):
    set_rules(w, RULE)
    small = held(w, SMALL)  # 450.00: not covered, held for its person alone
    assert "quorum" not in small and w.card(small["confirmationId"]).audience == ()
    out = held(w)
    assert out["quorum"] == {"rule": "Big budgets", "needs": 2, "of": "owners, admins", "approved": 0,
                             "approvedBy": [], "decline": "any"}
    assert "A quorum applies: it runs only once 2 of owners, admins approved it on the confirm page (0 so far)" \
        in out["instructions"]
    card = w.card(out["confirmationId"])
    assert card.audience == (w.ana.id, w.bo.id)  # longest-standing first; its own person sees it anyway
    assert card.quorum["eligible"] == [w.ana.id, w.bo.id, w.person.id]
    for member in (w.ana, w.bo):
        assert [c.id for c in w.store.cards.list_pending_cards(w.workspace.id, member.id, w.clock)[0]] == [card.id]
    assert w.store.cards.list_pending_cards(w.workspace.id, w.cy.id, w.clock)[0] == []


def test_a_client_that_could_ask_is_not_asked_a_quorum_holds_a_card(w):
    set_rules(w, RULE)
    reply = w.call("set_category_budget", BIG, w.asking, modern=True, form_elicitation=True)
    assert isinstance(reply, gate_ask.Done) and reply.payload["status"] == "pending" and "quorum" in reply.payload


def test_each_approval_is_its_own_act_and_the_last_runs_it_once(w):
    set_rules(w, RULE)
    card_id = held(w)["confirmationId"]
    first = approve(w, w.ana, card_id)
    assert first.state is CardState.PENDING and [v["name"] for v in first.votes] == ["Ana Costa"]
    assert budgeted(w) == 400_000  # nothing ran: as seeded
    trail = w.store.cards.audit_trail(w.workspace.id, card_id)
    assert [(e.event, e.actor, e.detail) for e in trail][-1] == ("approved", f"person:{w.ana.id}", "approval 1 of 2")
    done = approve(w, w.person, card_id)
    assert done.state is CardState.COMPLETED and budgeted(w) == 600_000
    last = w.store.cards.audit_trail(w.workspace.id, card_id)[-1]
    assert (last.event, last.actor) == ("completed", f"person:{w.person.id}")
    assert last.detail.startswith("2 of 2 approvals (quorum ‘Big budgets’): Ana Costa, ")
    stored = w.card(card_id)
    assert [v["by"] for v in stored.votes] == [w.ana.id, w.person.id]
    assert [a["id"] for a in stored.result["quorum"]["approvers"]] == [w.ana.id, w.person.id]
    assert stored.result["message"].startswith("Ran after 2 of 2 approvals (quorum ‘Big budgets’): Ana Costa")


def test_one_person_counts_once_whatever_session_they_use(w):
    set_rules(w, RULE)
    card_id = held(w)["confirmationId"]
    approve(w, w.ana, card_id)
    before = w.card(card_id)
    with pytest.raises(Refusal) as again:
        approve(w, w.ana, card_id)  # a second click, from another session of hers: the same person
    assert again.value.reason is RefusalReason.ALREADY_ANSWERED
    assert again.value.message == ("You already approved this card; one person counts once, whichever session they "
                                   "use. It needs 1 more of owners, admins. Nothing was written.")
    after = w.card(card_id)
    assert (after.version, after.votes, after.state) == (before.version, before.votes, CardState.PENDING)
    assert len(w.store.cards.audit_trail(w.workspace.id, card_id)) == 2  # filed, approved


def test_an_approval_by_someone_not_in_the_audience_is_refused(w):
    set_rules(w, RULE)
    card_id = held(w)["confirmationId"]
    with pytest.raises(Refusal) as refused:
        approve(w, w.cy, card_id)
    assert refused.value.reason is RefusalReason.NOT_YOURS
    assert w.card(card_id).votes == () and len(w.store.cards.audit_trail(w.workspace.id, card_id)) == 1


def test_a_no_by_anyone_ends_it(w):
    set_rules(w, RULE)
    card_id = held(w)["confirmationId"]
    approve(w, w.ana, card_id)
    declined = clicks.decline_click(w.desk, w.workspace.id, w.bo, card_id, "Too much")
    assert declined.state is CardState.DECLINED and declined.decline_reason == "Declined by Bo Li: Too much"
    assert budgeted(w) == 400_000
    with pytest.raises(Refusal):
        approve(w, w.person, card_id)


def test_under_majority_a_no_is_a_vote_until_enough_said_it(w):
    set_rules(w, {**RULE, "decline": "majority"})
    card_id = held(w)["confirmationId"]
    once = clicks.decline_click(w.desk, w.workspace.id, w.bo, card_id, None)
    assert once.state is CardState.PENDING and [v["vote"] for v in once.votes] == ["no"]
    # 3 may approve, 2 are needed: a second no leaves too few, and ends it
    twice = clicks.decline_click(w.desk, w.workspace.id, w.ana, card_id, "No")
    assert twice.state is CardState.DECLINED and twice.decline_reason == "Declined by Bo Li, Ana Costa: No"


def test_drift_is_checked_again_at_the_last_approval(w):
    set_rules(w, RULE)
    card_id = held(w)["confirmationId"]
    approve(w, w.ana, card_id)
    month = w.store.docs.get_doc(w.workspace.id, "budget_month", "2026-09-01")
    data = json.loads(json.dumps(month.data))
    data.setdefault("budgeted", {})["cat_groceries"] = 100_000
    w.store.docs.write_docs(w.workspace.id, [DocWrite("budget_month", "2026-09-01", data, month.version)])
    with pytest.raises(Refusal) as moved:
        approve(w, w.bo, card_id)
    assert moved.value.reason is RefusalReason.CHANGED
    assert w.card(card_id).state is CardState.DECLINED and budgeted(w) == 100_000


# -- races through the whole gate --------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "dynamodb"])
def racing(request, tmp_path):
    if request.param == "sqlite":
        s = SQLiteStore(str(tmp_path / "gate-quorum-races.db"))
        yield with_quorum(GateWorld(s))
        s.close()
        return
    from tests.support.aws import moto_dynamodb_store

    with moto_dynamodb_store() as s, serialized_transactions():
        yield with_quorum(GateWorld(s))


def _at_once(w: GateWorld, card_id: str, *who) -> list[Any]:
    barrier = threading.Barrier(len(who))

    def one(person):
        barrier.wait()
        try:
            return approve(w, person, card_id)
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return exc

    with ThreadPoolExecutor(max_workers=len(who)) as pool:
        return list(pool.map(one, who))


def test_two_approvers_giving_the_last_approval_at_once_run_it_exactly_once(racing):
    w = racing
    set_rules(w, RULE)
    card_id = held(w)["confirmationId"]
    approve(w, w.person, card_id)
    outcomes = _at_once(w, card_id, w.ana, w.bo)
    won = [o for o in outcomes if not isinstance(o, Exception)]
    lost = [o for o in outcomes if isinstance(o, Exception)]
    assert len(won) == 1 and won[0].state is CardState.COMPLETED, outcomes
    assert len(lost) == 1 and isinstance(lost[0], Refusal) and lost[0].message == "This card was already confirmed."
    assert budgeted(w) == 600_000
    assert len(w.card(card_id).votes) == 2
    assert [e.event for e in w.store.cards.audit_trail(w.workspace.id, card_id)].count("completed") == 1


def test_two_first_approvals_at_once_both_count_and_run_it_once(racing):
    w = racing
    set_rules(w, RULE)
    card_id = held(w)["confirmationId"]
    outcomes = _at_once(w, card_id, w.ana, w.bo)
    assert not any(isinstance(o, Exception) for o in outcomes), outcomes
    assert sorted(o.state.value for o in outcomes) == ["completed", "pending"]
    assert budgeted(w) == 600_000
    assert {v["by"] for v in w.card(card_id).votes} == {w.ana.id, w.bo.id}
