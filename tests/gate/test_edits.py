"""Edit, then approve, through the gate (both stores): a person changes what the action declares
editable on a card that waits on them; the values go through the agent's argument checker and
plan, a new card with a new preview, fingerprint and ticket replaces the old one in one conditional
transaction, and the confirm of the new card runs it and tells the agent exactly what changed.
Every refusal writes nothing; an edit and a confirm racing on one card: exactly one wins."""

from __future__ import annotations

import json
from typing import Any

import pytest

from countersign.core import lifetimes
from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.core.ids import new_id
from countersign.gate import edits
from countersign.gate.question import Question
from countersign.identity import accounts
from countersign.notify.webhooks import payload
from countersign.store.outbox import NOTIFY_PENDING, reminder_id
from countersign.store.webhook_deliveries import ANSWERED, EDITED, EVENTS, FILED, LAPSED, event_id
from countersign.store.webhook_endpoints import WebhookEndpoint
from countersign.surfaces.mcp import confirmations
from countersign.toolkit import ActionError

from .world import GateWorld


def budget(amount: str = "120.00") -> dict[str, Any]:
    return {"category_id": "cat_groceries", "month": "current", "amount": amount}


def budgeted(w: GateWorld) -> int:
    month = w.store.docs.get_doc(w.workspace.id, "budget_month", "2026-09-01")
    return month.data.get("budgeted", {}).get("cat_groceries", 0) if month else 0


def held(w: GateWorld, amount: str = "120.00") -> dict[str, Any]:
    return w.held("set_category_budget", budget(amount))


def edit(w: GateWorld, card_id: str, values: Any, person=None):
    return edits.edit_card(w.desk, w.workspace.id, person or w.person, card_id, values)


def nothing_written(w: GateWorld, card_id: str, trail: list[str]) -> None:
    card = w.card(card_id)
    assert card.state is CardState.PENDING and card.version == 1
    assert w.events(card_id) == trail
    assert [c.id for c in w.pending()] == [card_id]


def status(w: GateWorld, confirmation_id: str) -> dict[str, Any]:
    """The agent's get_confirmation_status of ``confirmation_id``, as the MCP tool answers it."""
    return edits.confirmation_status(w.desk, w.card(confirmation_id))


def test_an_edit_files_a_new_card_with_a_new_preview_and_ticket_and_ends_the_old_one(world):
    w = world
    asked = held(w)
    old = w.card(asked["confirmationId"])
    assert edits.editable_fields(w.desk, old) == [
        {"name": "amount", "label": "amount budgeted", "kind": "amount", "value": "120.00", "shown": "120.00"}]
    new = edit(w, old.id, {"amount": "80.00"})
    assert new.state is CardState.PENDING and new.id != old.id
    assert (new.fingerprint, new.ticket) != (old.fingerprint, old.ticket)
    assert new.title.endswith("→ 80.00?") and old.title.endswith("→ 120.00?")
    assert new.arguments == budget("80.00") and new.filed_by == old.filed_by  # still the agent's request
    changes = [{"field": "amount", "label": "amount budgeted", "from": "120.00", "to": "80.00"}]
    assert new.edited == {"from": old.id, "by": w.person.id, "byName": w.person.name or w.person.email,
                          "original": budget("120.00"), "changes": changes}
    ended = w.card(old.id)
    assert ended.state is CardState.EDITED and ended.edited is not None and ended.edited["into"] == new.id
    assert [c.id for c in w.pending()] == [new.id]
    trail = w.store.cards.audit_trail(w.workspace.id, old.id)
    assert [(e.event, e.actor, e.detail) for e in trail][-1] == (
        "edited", f"person:{w.person.id}", f"edited into {new.id}: amount budgeted 120.00 → 80.00")
    assert [(e.event, e.actor, e.detail) for e in w.store.cards.audit_trail(w.workspace.id, new.id)] == [
        ("filed", f"person:{w.person.id}", f"edited from {old.id}: amount budgeted 120.00 → 80.00")]
    assert budgeted(w) != 80_000  # nothing ran yet: the person confirms the new card
    with pytest.raises(Refusal) as late:  # the old card's ticket is spent: it can never run
        w.click(old.id)
    assert late.value.message == "This card was edited: a new card with the edited values replaced it. Nothing ran."


def test_the_confirm_runs_the_edit_and_the_agent_is_told_exactly_what_changed(world):
    w = world
    asked = held(w)
    new = edit(w, asked["confirmationId"], {"amount": "80.00"})
    assert status(w, asked["confirmationId"])["status"] == "pending"
    done = w.click(new.id)
    assert done.state is CardState.COMPLETED and budgeted(w) == 80_000
    by = w.person.name or w.person.email
    message = f"Ran with 80.00 instead of 120.00 (amount budgeted), changed by {by}."
    assert done.result["message"] == message
    assert done.result["edited"] == {
        "from": asked["confirmationId"], "by": by, "original": budget("120.00"), "arguments": budget("80.00"),
        "changes": [{"field": "amount", "label": "amount budgeted", "from": "120.00", "to": "80.00"}]}
    completed = w.store.cards.audit_trail(w.workspace.id, new.id)[-1]
    assert (completed.event, completed.detail) == ("completed", message)
    for polled in (asked["confirmationId"], new.id):  # the agent's id leads to the outcome
        out = status(w, polled)
        assert (out["status"], out["confirmationId"], out["message"]) == ("completed", new.id, message)
        assert out["edited"]["original"] == budget("120.00")
    assert status(w, asked["confirmationId"])["editedFrom"] == asked["confirmationId"]


@pytest.mark.parametrize("values, field, message", [
    ({"category_id": "cat_tennis"}, "arguments.category_id",
     "arguments.category_id: not something a person may change on this card; set_category_budget lets a person "
     "change amount (amount budgeted). Nothing was changed."),
    ({}, "arguments", "arguments: give the values to change, as an object; set_category_budget lets a person "
                      "change amount (amount budgeted). Nothing was changed."),
    ({"amount": "lots"}, "amount", None),
    ({"amount": ["80"]}, "amount", None),
    ({"amount": "120"}, "arguments", "arguments: these values make the same change this card already shows; "
                                     "nothing was changed."),
])
def test_refused_edits_write_nothing(world, values, field, message):
    w = world
    asked = held(w)
    trail = w.events(asked["confirmationId"])
    with pytest.raises(ActionError) as refused:
        edit(w, asked["confirmationId"], values)
    assert refused.value.field == field
    if message is not None:
        assert refused.value.message == message
    else:  # the agent's own sentence for the same value
        action = w.desk.registry.action("set_category_budget")
        ctx = w.desk.context(w.workspace.id, w.person, None, w.desk.now())
        with pytest.raises(ActionError) as agent:
            Question.of(action, budget(values["amount"]), ctx)
        assert refused.value.message == agent.value.message
    nothing_written(w, asked["confirmationId"], trail)


def test_an_edit_of_someone_elses_or_an_answered_card_is_refused(world):
    w = world
    asked = held(w)
    other = accounts.add_person(w.store.workspaces, w.workspace.id, "other@example.com", "admin", now=w.clock)
    trail = w.events(asked["confirmationId"])
    with pytest.raises(Refusal) as theirs:
        edit(w, asked["confirmationId"], {"amount": "80.00"}, person=other)
    assert theirs.value.reason is RefusalReason.NOT_YOURS
    nothing_written(w, asked["confirmationId"], trail)
    w.decline(asked["confirmationId"])
    with pytest.raises(Refusal) as answered:
        edit(w, asked["confirmationId"], {"amount": "80.00"})
    assert (answered.value.reason, answered.value.message) == (RefusalReason.ALREADY_ANSWERED,
                                                               "This card was already declined.")
    assert w.pending() == []


def test_an_edit_and_a_confirm_racing_exactly_one_wins(world):
    w = world
    asked = held(w)
    card_id = asked["confirmationId"]
    out = w.before_commit(1, lambda: w.click(card_id))  # the confirm lands while the edit commits
    with pytest.raises(Refusal) as lost:
        edit(w, card_id, {"amount": "80.00"})
    assert lost.value.reason is RefusalReason.ALREADY_ANSWERED
    assert out[0].state is CardState.COMPLETED and budgeted(w) == 120_000
    assert w.pending() == [] and w.card(card_id).state is CardState.COMPLETED

    asked = held(w, "130.00")
    card_id = asked["confirmationId"]
    out = w.before_commit(1, lambda: edit(w, card_id, {"amount": "90.00"}))  # the edit lands while the confirm commits
    with pytest.raises(Refusal) as lost:
        w.click(card_id)
    assert lost.value.message == "This card was edited: a new card with the edited values replaced it. Nothing ran."
    assert out[0].state is CardState.PENDING and budgeted(w) == 120_000
    assert [c.id for c in w.pending()] == [out[0].id]


def test_no_mcp_tool_offers_an_edit(world):
    """An agent cannot edit: the confirmation tools and the toolsets' actions have no edit of a card."""
    names = {t.name for t in confirmations.confirmation_tools(world.desk)} | set(world.desk.registry.actions)
    assert not [n for n in names if n.startswith("edit_") or "_edit" in n]


def test_an_edit_to_a_change_another_card_already_asks_files_nothing(world):
    """The new card claims its own request in the same transaction: a card waiting for exactly the
    edited change holds it, and the whole edit is refused (both stores)."""
    w = world
    asked, twin = held(w), held(w, "80.00")
    trails = {c: w.events(c) for c in (asked["confirmationId"], twin["confirmationId"])}
    with pytest.raises(Refusal) as refused:
        edit(w, asked["confirmationId"], {"amount": "80"})
    assert refused.value.message == (f"A card for exactly this edited change is already waiting "
                                     f"({twin['confirmationId']}); nothing was changed. Confirm that one, or "
                                     "decline this one.")
    for card_id, trail in trails.items():
        assert w.card(card_id).state is CardState.PENDING and w.events(card_id) == trail
    assert sorted(c.id for c in w.pending()) == sorted(trails)


def test_an_agent_asking_the_original_again_after_an_edit_files_a_fresh_card(world):
    w = world
    asked = held(w)
    new = edit(w, asked["confirmationId"], {"amount": "80.00"})
    again = held(w)
    assert again["confirmationId"] not in (asked["confirmationId"], new.id)
    assert sorted(c.id for c in w.pending()) == sorted([new.id, again["confirmationId"]])


def test_a_card_an_edit_files_waits_reminds_and_lapses_as_the_lifetime_rules_say(world):
    """The new card an edit files is filed under the workspace's lifetime rules as the edit reads
    them, as any filed card is: a fresh wait from the edit, the reminder before its deadline (filed
    with it, due then and not before) and what its lapse means."""
    w = world
    rules = {"default": {"wait": "2h", "remind_before": "30m", "lapse": "declined"}}
    w.store.workspaces.update_workspace_settings(w.workspace.id, {"card_lifetimes": lifetimes.as_text(rules)})
    asked = held(w)
    old = w.card(asked["confirmationId"])
    assert old.lifetime == {"wait": 7200, "lapse": "declined", "remind_at": w.clock + 5400}
    w.clock += 3000  # the person edits 50 minutes later
    edited_at = w.clock
    new = edit(w, old.id, {"amount": "80.00"})
    assert new.lifetime == {"wait": 7200, "lapse": "declined", "remind_at": edited_at + 5400}
    stored = w.card(new.id)
    assert (stored.expires_at, stored.lifetime) == (edited_at + 7200, new.lifetime)
    reminder = w.store.outbox.get_notification(reminder_id(new.id))
    assert reminder is not None, "the edited card owes the reminder its lifetime gives it"
    assert (reminder.state, reminder.due_at, reminder.person_id, reminder.workspace_id) == (
        NOTIFY_PENDING, edited_at + 5400, w.person.id, w.workspace.id)
    assert reminder_id(new.id) not in {n.card_id for n in w.store.outbox.due_notifications(now=edited_at + 5399)}
    assert reminder_id(new.id) in {n.card_id for n in w.store.outbox.due_notifications(now=edited_at + 5400)}
    w.clock = edited_at + 7200  # unanswered at its deadline: it lapses as the rule says, declined
    lapsed = w.card(new.id)
    assert lapsed.state is CardState.EXPIRED and lapsed.lapses_as_declined


def test_a_card_an_edit_files_owes_the_webhook_events_a_filed_card_owes(world):
    """A workspace with a webhook endpoint is told of the card an edit files as of any filed card:
    ``card.filed`` now, and ``card.lapsed`` due at its deadline (moot if it is answered by then);
    the edited card owes ``card.edited`` now, and no answer (its own ``card.lapsed`` is moot: it was
    not left to lapse)."""
    w = world
    w.store.webhook_endpoints.add_endpoint(WebhookEndpoint(
        id=new_id("wh_"), workspace_id=w.workspace.id, url="https://hooks.example.com/countersign",
        events=tuple(EVENTS), secret_sealed="sealed", created_at=w.clock, created_by=w.person.id))
    asked = held(w)
    old = w.card(asked["confirmationId"])
    w.clock += 60
    new = edit(w, old.id, {"amount": "80.00"})
    filed_event = w.store.webhook_deliveries.get_event(event_id(new.id, FILED))
    assert filed_event is not None, "the edited card's successor owes card.filed"
    assert (filed_event.workspace_id, filed_event.card_id, filed_event.state, filed_event.at) == (
        w.workspace.id, new.id, "pending", w.clock)
    lapse = w.store.webhook_deliveries.get_event(event_id(new.id, LAPSED))
    assert lapse is not None and lapse.due_at == w.card(new.id).expires_at
    assert w.store.webhook_deliveries.get_event(event_id(old.id, ANSWERED)) is None  # an edit is not an answer
    edited_event = w.store.webhook_deliveries.get_event(event_id(old.id, EDITED))
    assert edited_event is not None, "the edited card owes card.edited"
    assert (edited_event.card_id, edited_event.state, edited_event.at, edited_event.due_at) == (
        old.id, "edited", w.clock, w.clock)
    assert w.card(old.id).edited["into"] == new.id  # what its payload's replaced_by names


def test_a_card_edited_twice_still_names_the_card_it_replaced_when_its_events_go_out_later(world):
    """Events fan out after the commit (on AWS, from the table's stream): the middle card of two
    edits may be sent its ``card.filed`` after it was edited in turn. Read as it is then, its
    payload still names the card it replaced (``replaces``), and its ``card.edited`` names both."""
    w = world
    w.store.webhook_endpoints.add_endpoint(WebhookEndpoint(
        id=new_id("wh_"), workspace_id=w.workspace.id, url="https://hooks.example.com/countersign",
        events=tuple(EVENTS), secret_sealed="sealed", created_at=w.clock, created_by=w.person.id))
    first = w.card(held(w)["confirmationId"])
    w.clock += 60
    middle = edit(w, first.id, {"amount": "80.00"})
    w.clock += 60
    last = edit(w, middle.id, {"amount": "70.00"})
    middle_now = w.card(middle.id)
    assert middle_now.state is CardState.EDITED

    def sent(card_id: str, kind: str) -> dict[str, Any]:
        event = w.store.webhook_deliveries.get_event(event_id(card_id, kind))
        assert event is not None
        return json.loads(payload(event, w.card(card_id), None))["data"]

    filed, edited = sent(middle.id, FILED), sent(middle.id, EDITED)
    assert (filed["replaces"], filed["replaced_by"]) == (first.id, None)
    assert (edited["replaces"], edited["replaced_by"]) == (first.id, last.id)
    assert (sent(last.id, FILED)["replaces"], sent(first.id, EDITED)["replaces"]) == (middle.id, None)
    # the agent's status of the middle card still follows the edits to the last one
    assert status(w, middle.id)["confirmationId"] == last.id
