"""Kill -9 a real server at each named point; after a restart every card is either completed with
its effect present once, or not run with no effect — and then still waiting, or closed with a
truthful reason — and no retry produces a second effect."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.store.outbox import NOTIFY_DONE

S = CardState
BAKERY = {"account_id": "acc_checking", "transactions": [{"date": "2026-09-18", "payee": "Bakery", "amount": "-5.00"}]}
FAST = {"countersign_run_lease": "1", "countersign_sweep_interval": "1"}  # recovery within a second or two


def file_bakery(crash) -> str:
    held = crash.call("create_transactions", BAKERY)
    assert held["status"] == "pending", held
    return held["confirmationId"]


def click_and_die(crash, card_id: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - the connection drops with the process, however the client says so
        crash.click(card_id)
    assert crash.server.killed(), crash.server.output()


def test_killed_after_filing_the_email_is_still_sent_and_a_retry_files_nothing_new(crash):
    crash.start(countersign_fault="filed")
    with pytest.raises(Exception):  # noqa: B017 - the connection drops with the process
        crash.call("create_transactions", BAKERY)
    assert crash.server.killed()
    [card] = crash.store.cards.list_pending_cards(crash.workspace.id, crash.person.id, crash.now())[0]
    assert crash.emails() == []  # it died before sending
    crash.start()  # the start-up sweep delivers what is owed
    crash.wait_for(lambda: crash.store.outbox.get_notification(card.id).state == NOTIFY_DONE, what="the card's email")
    assert len(crash.emails()) == 1
    again = crash.call("create_transactions", BAKERY)  # the agent retries the call that died
    assert again["confirmationId"] == card.id
    assert len(crash.store.cards.list_pending_cards(crash.workspace.id, crash.person.id, crash.now())[0]) == 1
    assert len(crash.emails()) == 1


@pytest.mark.parametrize("point", ["before_commit", "mid_commit"])
def test_killed_before_the_commit_nothing_ran_and_the_card_still_waits(crash, point):
    crash.start()
    card_id = file_bakery(crash)
    crash.start(countersign_fault=point)
    click_and_die(crash, card_id)
    crash.start()
    assert crash.card(card_id).state is S.PENDING and crash.payees("Bakery") == 0
    assert crash.events(card_id) == ["filed"]
    assert crash.click(card_id).status_code == 200  # the person clicks again
    assert crash.card(card_id).state is S.COMPLETED and crash.payees("Bakery") == 1


def test_killed_after_the_commit_it_ran_once_and_a_retry_is_refused(crash):
    crash.start()
    card_id = file_bakery(crash)
    crash.start(countersign_fault="after_commit")
    click_and_die(crash, card_id)
    crash.start()
    assert crash.card(card_id).state is S.COMPLETED and crash.payees("Bakery") == 1
    assert crash.events(card_id) == ["filed", "completed"]
    retry = crash.click(card_id)
    assert retry.status_code == 409 and retry.json()["error"]["code"] == "already_answered"
    status = crash.call("get_confirmation_status", {"confirmation_id": card_id})
    assert status["status"] == "completed" and crash.payees("Bakery") == 1


def test_killed_between_two_steps_the_card_says_exactly_what_ran(crash):
    crash.start()
    card_id = crash.call("ship_parcel", {"parcel_id": "p1"})["confirmationId"]
    crash.start(countersign_fault="after_step", **FAST)
    click_and_die(crash, card_id)
    assert crash.card(card_id).state is S.RUNNING  # until recovery looks
    crash.start(**FAST)
    crash.wait_for(lambda: crash.card(card_id).state is S.FAILED, what="recovery")
    card = crash.card(card_id)
    assert card.result["done"] == ["pack parcel p1"] and card.result["not_done"] == ["ship parcel p1"]
    assert crash.store.docs.get_doc(crash.workspace.id, "parcel", "p1").data["state"] == "packed"
    assert crash.store.docs.get_doc(crash.workspace.id, "shipment", "p1") is None
    status = crash.call("get_confirmation_status", {"confirmation_id": card_id})
    assert status["status"] == "failed" and "Not done: ship parcel p1." in status["error"]


def test_killed_after_the_outside_call_it_is_resumed_with_the_same_key_and_charged_once(crash, payments):
    service = {"countersign_test_payments": payments.url}
    crash.start(**service)
    card_id = crash.call("charge_card", {"order_id": "o1", "amount": 1250})["confirmationId"]
    crash.start(countersign_fault="after_outside", **service, **FAST)
    click_and_die(crash, card_id)
    assert len(payments.calls) == 1 and crash.store.docs.get_doc(crash.workspace.id, "receipt", "o1") is None
    crash.start(**service, **FAST)
    crash.wait_for(lambda: crash.card(card_id).state is S.COMPLETED, what="the resumed charge")
    assert payments.calls == [payments.calls[0]] * 2 and len(payments.charges) == 1  # one key, one charge
    card = crash.card(card_id)
    assert card.result["result"]["charge_id"] == "ch_1"
    assert crash.store.docs.get_doc(crash.workspace.id, "receipt", "o1").data == {"order": "o1", "amount": 1250}


def test_killed_after_handing_over_the_email_it_is_delivered_again_not_lost(crash):
    crash.start(countersign_fault="after_send", **FAST)
    with pytest.raises(Exception):  # noqa: B017 - the connection drops with the process
        crash.call("create_transactions", BAKERY)
    assert crash.server.killed()
    [card] = crash.store.cards.list_pending_cards(crash.workspace.id, crash.person.id, crash.now())[0]
    assert len(crash.emails()) == 1 and crash.store.outbox.get_notification(card.id).state != NOTIFY_DONE
    crash.start(**FAST)
    crash.wait_for(lambda: crash.store.outbox.get_notification(card.id).state == NOTIFY_DONE, what="the notification")
    assert 1 <= len(crash.emails()) <= 2  # at least once: the one window where it can go twice
