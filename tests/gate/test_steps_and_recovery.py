"""Effects of several steps, effects outside the store, and the recovery of a card whose process
died part-way (both stores). A "death" here is an exception no layer catches, raised at the step
boundary; the crash tests in tests/crash kill a real server process at the same points."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.gate import clicks, recovery
from countersign.gate.runner import idempotency_key
from tests.support.stepped_toolset import PARCEL, PAYMENTS, RECEIPT, SHIPMENT

S = CardState
RUN_LEASE = OUTSIDE_LEASE = 120  # the default COUNTERSIGN_RUN_LEASE


class Died(BaseException):
    """The process ends here: nothing above catches it."""


def die():
    raise Died()


def parcel(world, pid: str = "p1") -> dict:
    return world.store.docs.get_doc(world.workspace.id, PARCEL, pid).data


def test_each_step_commits_on_its_own_and_the_card_says_so(world):
    held = world.held("ship_parcel", {"parcel_id": "p1"})
    card = world.click(held["confirmationId"])
    assert card.state is S.COMPLETED and card.run == {"steps": ["pack parcel p1", "ship parcel p1"], "done": 2,
                                                      "outside": None}
    assert parcel(world)["state"] == "shipped"
    assert world.store.docs.get_doc(world.workspace.id, SHIPMENT, "p1") is not None
    assert world.events(card.id) == ["filed", "running", "completed"]


def test_a_process_that_dies_between_steps_leaves_a_card_that_recovery_reports_exactly(world):
    held = world.held("ship_parcel", {"parcel_id": "p1"})
    world.before_commit(2, die)  # after "pack", before "ship"
    with pytest.raises(Died):
        world.click(held["confirmationId"])
    card = world.card(held["confirmationId"])
    assert card.state is S.RUNNING and card.run["done"] == 1 and parcel(world)["state"] == "packed"
    world.clock += RUN_LEASE - 1
    opened = clicks.open_card(world.desk, world.workspace.id, world.person, card.id)
    assert opened.state is S.RUNNING  # its runner may live
    assert recovery.sweep(world.desk, world.clock) == 0
    world.clock += 1
    settled = clicks.open_card(world.desk, world.workspace.id, world.person, card.id)  # a read settles it
    assert settled.state is S.FAILED
    assert settled.result["done"] == ["pack parcel p1"] and settled.result["not_done"] == ["ship parcel p1"]
    assert "Done: pack parcel p1. Not done: ship parcel p1." in settled.result["error"]
    assert parcel(world)["state"] == "packed" and world.store.docs.get_doc(world.workspace.id, SHIPMENT, "p1") is None
    assert world.events(card.id) == ["filed", "running", "failed"]
    # the request is free again: asking anew files a new card (the parcel is packed now: a new subject)
    assert world.store.cards.running_cards(world.clock + 10_000) == []


def test_the_sweep_settles_what_nobody_reads(world):
    held = world.held("ship_parcel", {"parcel_id": "p2"})
    world.before_commit(2, die)
    with pytest.raises(Died):
        world.click(held["confirmationId"])
    world.clock += RUN_LEASE
    assert recovery.sweep(world.desk, world.clock) == 1
    assert world.card(held["confirmationId"]).state is S.FAILED
    assert recovery.sweep(world.desk, world.clock + 60) == 0


def test_two_recoveries_at_once_settle_the_card_once(world):
    held = world.held("ship_parcel", {"parcel_id": "p1"})
    world.before_commit(2, die)
    with pytest.raises(Died):
        world.click(held["confirmationId"])
    world.clock += RUN_LEASE
    stale = world.card(held["confirmationId"])
    first = recovery.recover(world.desk, stale, world.clock)
    second = recovery.recover(world.desk, stale, world.clock)  # read before the first settled it
    assert first.state is second.state is S.FAILED
    assert world.events(stale.id) == ["filed", "running", "failed"]


def test_an_outside_call_is_made_with_the_cards_key_and_the_receipt_commits_once(world):
    held = world.held("charge_card", {"order_id": "o1", "amount": 1250})
    card = world.click(held["confirmationId"])
    key = idempotency_key(card)
    assert card.state is S.COMPLETED and card.result["result"]["charge_id"] == PAYMENTS.charges[key]["charge_id"]
    assert PAYMENTS.calls.count(key) == 1
    assert world.store.docs.get_doc(world.workspace.id, RECEIPT, "o1").data == {"order": "o1", "amount": 1250}


def test_a_death_after_the_outside_call_is_resumed_with_the_same_key_and_charges_once(world):
    held = world.held("charge_card", {"order_id": "o2", "amount": 990})
    world.before_commit(2, die)  # the charge was made; its receipt not committed
    with pytest.raises(Died):
        world.click(held["confirmationId"])
    card = world.card(held["confirmationId"])
    key = idempotency_key(card)
    assert card.state is S.RUNNING and card.run["outside"] and card.run["done"] == 0
    assert PAYMENTS.calls.count(key) == 1 and world.store.docs.get_doc(world.workspace.id, RECEIPT, "o2") is None
    world.clock += OUTSIDE_LEASE
    assert recovery.sweep(world.desk, world.clock) == 1
    settled = world.card(card.id)
    assert settled.state is S.COMPLETED
    assert PAYMENTS.calls.count(key) == 2 and len([k for k in PAYMENTS.charges if k == key]) == 1  # one charge
    assert settled.result["result"]["charge_id"] == PAYMENTS.charges[key]["charge_id"]
    assert world.store.docs.get_doc(world.workspace.id, RECEIPT, "o2").data["amount"] == 990
    assert world.events(card.id) == ["filed", "running", "recovered", "completed"]
