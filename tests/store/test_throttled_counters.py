"""A throttled request counter never costs a card its write (DynamoDB on moto).

With the request limits on, a request's counters ride in the transaction that files or answers its
card. DynamoDB cancels that whole transaction when one item's partition is over its throughput
(``CancellationReasons``: ``ThrottlingError`` or ``ProvisionedThroughputExceeded`` on that item).
Cancelled for that alone — a counter throttled, none of the card's own items failing — the card is
written once more without the counters, exactly once, and the request is not counted
(``counts.skipped``). moto never throttles: the cancellation is the real client's error, answered
by a handler on the store's own boto3 client in place of the first ``TransactWriteItems`` that
carries a counter (the way botocore's Stubber answers a call), so nothing of it reaches moto.
"""

from __future__ import annotations

import logging

import pytest

from countersign.core.card_states import CardState, Refusal
from countersign.store.cards import CardCommit
from countersign.store.docs import DocWrite
from countersign.store.errors import Conflict
from countersign.store.limits import RequestCounts
from tests.store._factories import World, audit, card, filed
from tests.support.throttle import Throttle

NOW = 1_000
LIMITS = {"mcp-connection:abc": 30, "mcp-address:203.0.113.9": 120}


@pytest.fixture
def dynamo():
    from tests.support.aws import moto_dynamodb_store

    with moto_dynamodb_store() as s:
        yield s


def counts() -> RequestCounts:
    return RequestCounts(tuple(LIMITS.items()), NOW, 10)


def hits(store) -> dict[str, int]:
    read = counts()
    store.limits.read_counts(read)
    return read.seen or {}


@pytest.mark.parametrize("code", ["ThrottlingError", "ProvisionedThroughputExceeded"])
def test_a_card_filed_with_a_throttled_counter_is_filed_once_without_it(dynamo, code, caplog):
    w = World(dynamo)
    throttle = Throttle(dynamo.client, code)
    mine = counts()
    c = card(w.ws, w.person, w.conn, created_at=NOW)
    with caplog.at_level(logging.WARNING, "countersign.store"):
        assert dynamo.cards.file_card(c, filed(c), counts=mine) == c
    assert len(throttle.sent) == 2 and throttle.sent[0][-2:] == ["LIMIT", "LIMIT"]
    assert "LIMIT" not in throttle.sent[1] and throttle.sent[1] == throttle.sent[0][:-2]  # the card's items, again
    assert dynamo.cards.get_card(w.ws.id, c.id, NOW).state is CardState.PENDING
    assert [e.event for e in dynamo.cards.audit_trail(w.ws.id, c.id)] == ["filed"]
    assert [x.id for x in dynamo.cards.list_pending_cards(w.ws.id, w.person.id, NOW)[0]] == [c.id]  # listed once
    assert (mine.skipped, mine.taken, mine.to_take(), hits(dynamo)) == (True, False, None, {})
    assert [r.getMessage() for r in caplog.records] == [
        f"a request counter was throttled ({code}) in a card's transaction: the card is written once more without "
        "the counters, and the request is not counted"]


def test_a_card_answered_with_a_throttled_counter_is_committed_once_with_its_effect(dynamo):
    w = World(dynamo)
    c = w.file(created_at=NOW)
    throttle = Throttle(dynamo.client)
    mine = counts()
    done = dynamo.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW + 1, (audit(c, "completed", NOW + 1),),
                                               writes=(DocWrite("note", "n1", {"text": "new"}, 0),), counts=mine))
    assert done.state is CardState.COMPLETED and len(throttle.sent) == 2 and "LIMIT" not in throttle.sent[1]
    assert dynamo.cards.get_card(w.ws.id, c.id, NOW + 2).state is CardState.COMPLETED
    assert [e.event for e in dynamo.cards.audit_trail(w.ws.id, c.id)] == ["filed", "completed"]
    assert dynamo.docs.get_doc(w.ws.id, "note", "n1").version == 1  # the effect, written once
    assert (mine.skipped, mine.taken, hits(dynamo)) == (True, False, {})
    with pytest.raises(Refusal):  # answered already: a second commit of it is refused
        dynamo.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW + 3, (audit(c, "completed", NOW + 3),)))


def test_a_card_filed_new_and_completed_with_a_throttled_counter_is_written_once(dynamo):
    """(The 2026 answer's and a standing grant's path: the card filed already decided.)"""
    w = World(dynamo)
    c = card(w.ws, w.person, w.conn, created_at=NOW)
    throttle = Throttle(dynamo.client, "ProvisionedThroughputExceeded")
    mine = counts()
    done = dynamo.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW, (audit(c, "completed", NOW),),
                                               new=True, channel="client", counts=mine))
    assert done.state is CardState.COMPLETED and len(throttle.sent) == 2
    assert [e.event for e in dynamo.cards.audit_trail(w.ws.id, c.id)] == ["completed"]
    assert dynamo.cards.latest_card(w.ws.id, w.person.id, c.tool, c.fingerprint, NOW).id == c.id
    assert mine.skipped and hits(dynamo) == {}


def test_a_throttled_counter_beside_a_write_that_lost_its_race_is_not_retried(dynamo):
    """(Cancelled by the card's own item too: the card's answer is what that item says.)"""
    w = World(dynamo)
    dynamo.docs.write_docs(w.ws.id, [DocWrite("note", "n1", {"text": "first"}, 0)])
    c = w.file(created_at=NOW)
    throttle = Throttle(dynamo.client, others={"DOC": "ConditionalCheckFailed"})
    mine = counts()
    with pytest.raises(Conflict):
        dynamo.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW + 1, (audit(c, "completed", NOW + 1),),
                                            writes=(DocWrite("note", "n1", {"text": "new"}, 0),), counts=mine))
    assert len(throttle.sent) == 1 and not mine.skipped and not mine.taken
    assert dynamo.cards.get_card(w.ws.id, c.id, NOW + 2).state is CardState.PENDING
