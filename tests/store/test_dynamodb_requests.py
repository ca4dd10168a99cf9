"""DynamoDB-only checks: request budget, two store instances on one table (two Lambdas), TTL items.

The conformance suite checks behaviour on both stores; this file checks what only DynamoDB has:
how many requests a step costs, that an instance's cached card never lets a stale write win,
and which items carry the TTL attribute.
"""

from __future__ import annotations

import collections

import pytest

from countersign.core.cards import CardState, Refusal, RefusalReason
from countersign.core.codes import CodeRecord
from countersign.store import dynamodb_codec as codec
from countersign.store.dynamodb import CARD_RETENTION, DynamoDBStore
from countersign.store.records import Session, SignInToken
from tests.store._factories import World, audit
from tests.support.aws import moto_dynamodb_store

S = CardState


@pytest.fixture
def ddb():
    with moto_dynamodb_store() as store:
        yield store


def other_instance(store: DynamoDBStore) -> DynamoDBStore:
    """A second store on the same table, as another Lambda instance would hold (empty cache)."""
    return DynamoDBStore(store.table, client=store.client)


class Requests:
    def __init__(self, client):
        self.calls: collections.Counter[str] = collections.Counter()
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model, **_):
        self.calls[model.name] += 1

    def reset(self) -> None:
        self.calls.clear()

    @property
    def total(self) -> int:
        return sum(self.calls.values())


def test_filing_a_card_is_one_transaction(ddb):
    w = World(ddb)
    requests = Requests(ddb.client)
    w.file(created_at=1000)
    assert dict(requests.calls) == {"TransactWriteItems": 1}


def test_a_confirm_click_is_at_most_three_requests(ddb):
    w = World(ddb)
    card = w.file(created_at=1000)
    page = other_instance(ddb)  # the confirm function did not file the card
    requests = Requests(ddb.client)
    page.get_card(w.ws.id, card.id, now=1001)
    page.transition_card(w.ws.id, card.id, S.RUNNING, 1001, audit(card, "running", 1001), channel="page")
    done = page.transition_card(w.ws.id, card.id, S.COMPLETED, 1002, audit(card, "completed", 1002), result={"ok": 1})
    assert dict(requests.calls) == {"GetItem": 1, "TransactWriteItems": 2}
    assert done == ddb.get_card(w.ws.id, card.id, now=1003)


def test_a_cold_instance_reads_once_before_its_first_move(ddb):
    w = World(ddb)
    card = w.file(created_at=1000)
    cold = other_instance(ddb)
    requests = Requests(ddb.client)
    cold.transition_card(w.ws.id, card.id, S.RUNNING, 1001, audit(card, "running", 1001))
    cold.transition_card(w.ws.id, card.id, S.COMPLETED, 1002, audit(card, "completed", 1002))
    assert dict(requests.calls) == {"GetItem": 1, "TransactWriteItems": 2}


def test_a_stale_cached_card_never_wins_and_the_refusal_needs_no_second_read(ddb):
    w = World(ddb)
    card = w.file(created_at=1000)
    a, b = other_instance(ddb), other_instance(ddb)
    a.get_card(w.ws.id, card.id, now=1001)  # a caches it as pending
    b.transition_card(w.ws.id, card.id, S.RUNNING, 1001, audit(card, "running", 1001), channel="client")
    requests = Requests(ddb.client)
    with pytest.raises(Refusal) as refused:
        a.transition_card(w.ws.id, card.id, S.DECLINED, 1002, audit(card, "declined", 1002), decline_reason="no")
    assert refused.value.reason is RefusalReason.BEING_CONFIRMED
    assert dict(requests.calls) == {"TransactWriteItems": 1}  # the failed condition returned the item
    assert [e.event for e in ddb.audit_trail(w.ws.id, card.id)] == ["filed", "running"]


def test_a_stale_cache_is_refreshed_for_a_move_from_a_later_state(ddb):
    w = World(ddb)
    card = w.file(created_at=1000)
    a, b = other_instance(ddb), other_instance(ddb)
    a.get_card(w.ws.id, card.id, now=1001)  # pending in a's cache
    b.transition_card(w.ws.id, card.id, S.RUNNING, 1001, audit(card, "running", 1001), channel="client")
    done = a.transition_card(w.ws.id, card.id, S.COMPLETED, 1002, audit(card, "completed", 1002), result={"ok": True})
    assert (done.state, done.channel, done.result) == (S.COMPLETED, "client", {"ok": True})
    assert done == ddb.get_card(w.ws.id, card.id, now=1002)


def test_a_cached_card_past_its_deadline_is_refused_from_the_stored_state(ddb):
    w = World(ddb)
    card = w.file(created_at=1000, ttl=100)
    a, b = other_instance(ddb), other_instance(ddb)
    a.get_card(w.ws.id, card.id, now=1001)
    b.transition_card(w.ws.id, card.id, S.RUNNING, 1050, audit(card, "running", 1050))
    with pytest.raises(Refusal) as refused:  # a's cache says "pending, expired"; the truth is "running"
        a.transition_card(w.ws.id, card.id, S.WITHDRAWN, 1200, audit(card, "withdrawn", 1200))
    assert refused.value.reason is RefusalReason.BEING_CONFIRMED


def test_cards_keep_their_deadline_apart_from_the_ttl(ddb):
    w = World(ddb)
    card = w.file(created_at=1000, ttl=100)
    item = ddb.client.get_item(TableName=ddb.table, Key=codec.card_key(card.id))["Item"]
    assert int(item["card_expires_at"]["N"]) == 1100
    assert int(item["expires_at"]["N"]) == 1100 + CARD_RETENTION  # purged long after it was decided
    assert item["gsi1pk"]["S"] == codec.pending_partition(w.ws.id, w.person.id)
    moved = w.move(card, S.DECLINED, 1050)
    item = ddb.client.get_item(TableName=ddb.table, Key=codec.card_key(card.id))["Item"]
    assert item["gsi1pk"]["S"] == codec.history_partition(w.ws.id, w.person.id)
    assert item["gsi1sk"]["S"] == codec.time_key(1050, card.id)
    assert codec.card_from_item(item) == moved  # also how the notifier decodes a stream NewImage


def test_single_use_items_expire_through_ttl(ddb):
    w = World(ddb)
    ddb.put_code(CodeRecord(code_hash="c" * 64, workspace_id=w.ws.id, fingerprint="fp", expires_at=600))
    ddb.put_signin_token(SignInToken(token_hash="t" * 64, person_id=w.person.id, workspace_id=w.ws.id, expires_at=700))
    ddb.create_session(Session(session_hash="s" * 64, person_id=w.person.id, workspace_id=w.ws.id, csrf_token="x",
                               created_at=0, expires_at=800))
    ddb.use_nonce("n-1", expires_at=900, now=0)
    ddb.claim_email_slot(w.person.id, now=0, interval=900)
    ddb.hit_rate_limit("k", now=0, window=60, limit=5)
    items = ddb.client.scan(TableName=ddb.table)["Items"]
    ttl = {i["pk"]["S"].split("#")[0]: int(i["expires_at"]["N"]) for i in items if "expires_at" in i}
    assert ttl == {"CODE": 600, "SIGNIN": 700, "SESSION": 800, "NONCE": 900, "RATE": 1800, "LIMIT": 120}
    never = {i["pk"]["S"].split("#")[0] for i in items if "expires_at" not in i}
    assert never == {"WS", "EMAIL", "TOKEN"}  # workspaces, persons, connections stay
