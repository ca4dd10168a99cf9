"""DynamoDB-only checks: request budget, two store instances on one table (two Lambdas), what
moto cannot show by itself (a lost response, contention), and which items carry the TTL.

moto applies each transaction atomically but is not atomic across threads, so interleavings of
two instances are driven step by step here rather than raced.
"""

from __future__ import annotations

import collections
import logging

import pytest
from botocore.awsrequest import AWSResponse

from countersign.core.card_states import CardState
from countersign.core.codes import CodeRecord
from countersign.identity.oauth.tokens import verify_access
from countersign.identity.principal import Principal
from countersign.store.callers import Owner, Owners
from countersign.store.cards import CardCommit
from countersign.store.docs import DocWrite
from countersign.store.dynamodb import CARD_RETENTION, DynamoDBStore, codec
from countersign.store.errors import Taken
from countersign.store.grants import ACCESS, IssuedToken
from countersign.store.hashes import secret_hash
from countersign.store.limits import RequestCounts
from countersign.store.sessions import Session, SignInToken
from tests.store._factories import World, audit, card, filed
from tests.support.aws import moto_dynamodb_store
from tests.support.throttle import Throttle

S = CardState


@pytest.fixture
def ddb():
    with moto_dynamodb_store() as store:
        yield store


def other_instance(store: DynamoDBStore) -> DynamoDBStore:
    """A second store on the same table, as another Lambda instance would hold."""
    return DynamoDBStore(store.table.name, client=store.client)


class Requests:
    def __init__(self, client):
        self.calls: collections.Counter[str] = collections.Counter()
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model, **_):
        self.calls[model.name] += 1


def test_filing_a_card_is_one_transaction(ddb):
    w = World(ddb)
    requests = Requests(ddb.client)
    w.file(created_at=1000)
    assert dict(requests.calls) == {"TransactWriteItems": 1}


def test_a_confirm_with_its_effect_is_one_transaction(ddb):
    w = World(ddb)
    c = w.file(created_at=1000)
    requests = Requests(ddb.client)
    ddb.cards.commit_card(CardCommit(c, S.COMPLETED, 1001, (audit(c, "completed", 1001),),
                               writes=(DocWrite("note", "n1", {"t": 1}, 0),), result={"ok": True}))
    assert dict(requests.calls) == {"TransactWriteItems": 1}


def test_a_question_rounds_look_at_its_request_is_one_request_with_its_counts(ddb):
    """A 2026 question round writes no card: with the request limits on, the look at its request's
    claim and its counts are one ``TransactWriteItems`` (the counters and a ``ConditionCheck`` on
    the claim), where they were a ``GetItem`` and a write after its work. A card holding the
    request comes back with the cancellation (``ALL_OLD``): one ``GetItem`` more, for the card."""
    w = World(ddb)
    limits = (("mcp-connection:abc", 30), ("mcp-address:203.0.113.9", 120))
    requests = Requests(ddb.client)
    mine = RequestCounts(limits, 1000, 10)
    assert ddb.cards.request_holder(w.ws.id, w.person.id, "add_transaction", "fp-free", 1000, counts=mine) is None
    assert dict(requests.calls) == {"TransactWriteItems": 1} and mine.taken
    c = w.file(created_at=1000)
    requests = Requests(ddb.client)
    held = RequestCounts(limits, 1001, 10)
    assert ddb.cards.request_holder(w.ws.id, w.person.id, c.tool, c.fingerprint, 1001, counts=held) == c
    assert dict(requests.calls) == {"TransactWriteItems": 1, "GetItem": 1} and not held.taken
    for fingerprint, expected in (("fp-free", {"GetItem": 1}), (c.fingerprint, {"GetItem": 2})):  # limits off
        requests = Requests(ddb.client)
        ddb.cards.request_holder(w.ws.id, w.person.id, c.tool, fingerprint, 1001)
        assert dict(requests.calls) == expected
    ddb.cards.transition_card(w.ws.id, c.id, S.WITHDRAWN, 1002, audit(c, "withdrawn", 1002))
    requests = Requests(ddb.client)
    assert ddb.cards.request_holder(w.ws.id, w.person.id, c.tool, c.fingerprint, 1003) is None
    assert dict(requests.calls) == {"GetItem": 1}  # a released claim: its card is not read


@pytest.mark.parametrize("code", ["ThrottlingError", "ProvisionedThroughputExceeded"])
def test_a_throttled_counter_in_the_look_lets_the_request_through_uncounted(ddb, code, caplog):
    """Never an outage from a counter: cancelled by a throttled counter, the claim is read instead
    and the request is left to be counted after its work, as one that writes no card is."""
    w = World(ddb)
    c = w.file(created_at=1000)
    limits = (("mcp-connection:abc", 30), ("mcp-address:203.0.113.9", 120))
    for fingerprint, expected in (("fp-free", None), (c.fingerprint, c)):
        throttle = Throttle(ddb.client, code)
        requests = Requests(ddb.client)
        mine = RequestCounts(limits, 1001, 10)
        with caplog.at_level(logging.WARNING, "countersign.store"):
            assert ddb.cards.request_holder(w.ws.id, w.person.id, c.tool, fingerprint, 1001, counts=mine) == expected
        assert throttle.sent[0] == ["REQ", "LIMIT", "LIMIT"]
        assert requests.calls["GetItem"] == (1 if expected is None else 2)
        assert (mine.taken, mine.skipped, mine.to_take()) == (False, False, mine)
        ddb.client.meta.events.unregister("before-call.dynamodb.TransactWriteItems", throttle)
    seen = RequestCounts(limits, 1001, 10)
    ddb.limits.read_counts(seen)
    assert seen.seen == {}
    assert [r.getMessage() for r in caplog.records] == [
        f"a request's counters could not be taken with its claim ({code}): the claim is read, and the request "
        "counted after its work"] * 2


def test_a_refused_counters_write_in_the_look_lets_the_request_through_uncounted(ddb, caplog):
    """A function whose role may not ``ConditionCheckItem`` (or any other error of the request
    itself, not of an item): the claim is read instead, the request counted after its work."""
    w = World(ddb)
    refused = []

    def deny(params, **_):
        refused.append(1)
        return AWSResponse("https://dynamodb.invalid", 400, {}, None), {
            "Error": {"Code": "AccessDeniedException", "Message": "not authorized to perform ConditionCheckItem"},
            "ResponseMetadata": {"HTTPStatusCode": 400}}

    ddb.client.meta.events.register("before-call.dynamodb.TransactWriteItems", deny)
    mine = RequestCounts((("mcp-connection:abc", 30),), 1000, 10)
    with caplog.at_level(logging.WARNING, "countersign.store"):
        assert ddb.cards.request_holder(w.ws.id, w.person.id, "add_transaction", "fp", 1000, counts=mine) is None
    assert refused == [1] and not mine.taken and mine.to_take() is mine
    assert [r.getMessage() for r in caplog.records] == [
        "a request's counters could not be taken with its claim (AccessDeniedException): the claim is read, and the "
        "request counted after its work"]


def test_a_credential_read_with_its_member_by_owner_is_one_request(ddb):
    """What a warm instance does for each call of a token, access token or session it has seen
    (countersign.store.callers): the credential, the workspace and the person in one read (a
    session with the card a click names, too)."""
    w = World(ddb)
    owner, oauth_owner = Owner(w.ws.id, w.person.id), Owner(w.ws.id, w.person.id, w.conn.id)
    session = Session(session_hash=secret_hash("s"), person_id=w.person.id, workspace_id=w.ws.id, csrf_token="x",
                      created_at=0, expires_at=5000)
    ddb.sessions.create_session(session)
    card = w.file(created_at=1000)  # a click's card is read with its session
    token = IssuedToken(token_hash=secret_hash("a"), kind=ACCESS, connection_id=w.conn.id, workspace_id=w.ws.id,
                        person_id=w.person.id, client_id="c1", resource="https://cs.example/mcp", created_at=0,
                        expires_at=5000)
    ddb.grants.put_issued_tokens([token])
    for read in (lambda: ddb.callers.get_connection_as(w.conn.token_hash, owner),
                 lambda: ddb.callers.get_session_as(session.session_hash, owner, 1000),
                 lambda: ddb.callers.get_session_and_card(session.session_hash, owner, 1000, card.id),
                 lambda: ddb.callers.get_access_as(token.token_hash, oauth_owner, 1000)):
        requests = Requests(ddb.client)
        assert read() is not None
        assert dict(requests.calls) == {"BatchGetItem": 1}
    _, _, _, read_with_it = ddb.callers.get_session_and_card(session.session_hash, owner, 1000, card.id)
    assert read_with_it == ddb.cards.get_card(w.ws.id, card.id, 1000)


def test_an_access_token_costs_two_requests_the_first_time_and_one_after(ddb):
    w = World(ddb)
    token = IssuedToken(token_hash=secret_hash("csa_t"), kind=ACCESS, connection_id=w.conn.id, workspace_id=w.ws.id,
                        person_id=w.person.id, client_id="c1", resource="https://cs.example/mcp", created_at=0,
                        expires_at=5000)
    ddb.grants.put_issued_tokens([token])
    owners = Owners()
    for expected in ({"GetItem": 1, "BatchGetItem": 1}, {"BatchGetItem": 1}):
        requests = Requests(ddb.client)
        principal = verify_access(ddb.callers, ddb.grants, "csa_t", "https://cs.example/mcp", 1000, owners)
        assert isinstance(principal, Principal) and principal.connection == w.conn
        assert dict(requests.calls) == expected
    ddb.connections.revoke_connection(w.ws.id, w.conn.id, 1001)
    assert verify_access(ddb.callers, ddb.grants, "csa_t", "https://cs.example/mcp", 1002,
                         owners) == "This connection was revoked."


def test_two_instances_that_both_found_no_card_file_one(ddb):
    w = World(ddb)
    a, b = other_instance(ddb), other_instance(ddb)
    first = card(w.ws, w.person, w.conn, created_at=1000, fingerprint="fp-same")
    second = card(w.ws, w.person, w.conn, created_at=1000, fingerprint="fp-same")
    assert a.cards.latest_card(w.ws.id, w.person.id, first.tool, "fp-same", 1000) is None
    assert b.cards.latest_card(w.ws.id, w.person.id, first.tool, "fp-same", 1000) is None
    assert a.cards.file_card(first, filed(first)) == first
    requests = Requests(ddb.client)
    assert b.cards.file_card(second, filed(second)) == first  # the winner, read from the failed condition
    assert dict(requests.calls) == {"TransactWriteItems": 1, "GetItem": 1}
    assert [c.id for c in ddb.cards.list_pending_cards(w.ws.id, w.person.id, 1001)[0]] == [first.id]
    assert ddb.outbox.get_notification(second.id) is None


def test_two_instances_answering_one_card_one_wins_and_the_other_learns_why(ddb):
    w = World(ddb)
    c = w.file(created_at=1000)
    a, b = other_instance(ddb), other_instance(ddb)
    seen_a, seen_b = a.cards.get_card(w.ws.id, c.id, 1001), b.cards.get_card(w.ws.id, c.id, 1001)
    a.cards.commit_card(CardCommit(seen_a, S.COMPLETED, 1002, (audit(c, "completed", 1002),),
                             writes=(DocWrite("note", "n1", {"by": "a"}, 0),), result={"by": "a"}))
    with pytest.raises(Exception) as lost:
        b.cards.commit_card(CardCommit(seen_b, S.COMPLETED, 1002, (audit(c, "completed", 1002),),
                                 writes=(DocWrite("note", "n2", {"by": "b"}, 0),), result={"by": "b"}))
    assert getattr(lost.value, "message", "") == "This card was already confirmed."
    assert ddb.docs.get_doc(w.ws.id, "note", "n2") is None and ddb.docs.get_doc(w.ws.id, "note",
                                                                                "n1").data == {"by": "a"}


def _lose_first_response(client):
    """The first transaction commits but its answer is lost: botocore sends it again (same token),
    which AWS answers with success and moto with a failed condition on our own write."""
    real = client.transact_write_items
    state = {"lost": False}

    def transact(**kwargs):
        if not state["lost"]:
            state["lost"] = True
            real(**kwargs)
        return real(**kwargs)

    client.transact_write_items = transact
    return state


def test_a_commit_whose_response_was_lost_is_still_a_success(ddb):
    w = World(ddb)
    c = w.file(created_at=1000)
    state = _lose_first_response(ddb.client)
    done = ddb.cards.commit_card(CardCommit(c, S.COMPLETED, 1001, (audit(c, "completed", 1001),),
                                      writes=(DocWrite("note", "n1", {"t": 1}, 0),), result={"ok": True}))
    assert state["lost"] and done.state is S.COMPLETED
    assert ddb.cards.get_card(w.ws.id, c.id, 1002) == done


def test_a_filing_whose_response_was_lost_is_still_a_success(ddb):
    w = World(ddb)
    c = card(w.ws, w.person, w.conn, created_at=1000)
    _lose_first_response(ddb.client)
    assert ddb.cards.file_card(c, filed(c)) == c


def test_contention_is_retried_not_reported(ddb):
    w = World(ddb)
    c = w.file(created_at=1000)
    real = ddb.client.transact_write_items
    calls = []

    def transact(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise ddb.client.exceptions.TransactionCanceledException(
                {"Error": {"Code": "TransactionCanceledException", "Message": "conflict"},
                 "CancellationReasons": [{"Code": "TransactionConflict"}]
                 + [{"Code": "None"}] * (len(kwargs["TransactItems"]) - 1)},
                "TransactWriteItems")
        return real(**kwargs)

    ddb.client.transact_write_items = transact
    done = ddb.cards.commit_card(CardCommit(c, S.COMPLETED, 1001, (audit(c, "completed", 1001),), result={"ok": True}))
    assert len(calls) == 2 and done.state is S.COMPLETED


def test_cards_keep_their_deadline_apart_from_the_ttl_and_move_between_index_partitions(ddb):
    w = World(ddb)
    c = w.file(created_at=1000, ttl=100)

    def stored():
        return codec.plain(ddb.client.get_item(TableName=ddb.table.name, Key=codec.card_key(c.id))["Item"])

    item = stored()
    assert (item["card_expires_at"], item["expires_at"]) == (1100, 1100 + CARD_RETENTION)
    assert item["gsi1pk"] == codec.pending_partition(w.ws.id, w.person.id)
    running = ddb.cards.commit_card(
        CardCommit(c, S.RUNNING, 1050, (), run={"steps": ["a", "b"], "done": 1}, lease_until=1110)
    )
    assert (stored()["gsi1pk"], stored()["gsi1sk"]) == (codec.RUNNING_PARTITION, codec.time_key(1110, c.id))
    done = ddb.cards.commit_card(CardCommit(running, S.COMPLETED, 1060, (), result={"ok": True}))
    item = stored()
    assert (item["gsi1pk"], item["gsi1sk"]) == (
        codec.history_partition(w.ws.id, w.person.id), codec.time_key(1060, c.id))
    assert "lease_until" not in item
    assert codec.card_from(item) == done  # also how a stream NewImage is decoded


def test_records_tied_to_a_card_or_a_moment_expire_through_ttl(ddb):
    w = World(ddb)
    c = w.file(created_at=0, ttl=100)
    ddb.cards.commit_card(CardCommit(c, S.DECLINED, 10, (), decline_reason="no"))
    ddb.signing_keys.note_signing_key("k1", until=5000)
    ddb.limits.put_code(CodeRecord(code_hash="c" * 64, workspace_id=w.ws.id, fingerprint="fp", expires_at=600))
    ddb.sessions.put_signin_token(SignInToken(token_hash="t" * 64, person_id=w.person.id, workspace_id=w.ws.id,
                                              expires_at=700))
    ddb.sessions.create_session(Session(session_hash="s" * 64, person_id=w.person.id, workspace_id=w.ws.id,
                                        csrf_token="x",
                               created_at=0, expires_at=800))
    ddb.limits.use_nonce("n-1", expires_at=900, now=0)
    ddb.limits.claim_email_slot(w.person.id, now=0, interval=900)
    ddb.limits.hit_rate_limit("k", now=0, window=60, limit=5)
    items = [codec.plain(i) for i in ddb.client.scan(TableName=ddb.table.name)["Items"]]
    ttl = {i["pk"].split("#")[0]: i["expires_at"] for i in items if "expires_at" in i}
    purge = 100 + CARD_RETENTION
    assert ttl == {"CODE": 600, "SIGNIN": 700, "SESSION": 800, "NONCE": 900, "RATE": 1800, "LIMIT": 120,
                   "CARD": purge, "REQ": purge, "SPENT": purge, "OUTBOX": 7 * 24 * 3600}
    never = {i["pk"].split("#")[0] for i in items if "expires_at" not in i}
    assert never == {"WS", "EMAIL", "TOKEN", "KEYS"}  # workspaces, persons, connections, keys in use stay


def test_an_answer_with_its_nonce_is_one_transaction_and_a_filing_with_its_key_note_too(ddb):
    w = World(ddb)
    requests = Requests(ddb.client)
    c = card(w.ws, w.person, w.conn, created_at=1000)
    ddb.cards.commit_card(CardCommit(c, S.COMPLETED, 1000, (filed(c),), result={"ok": True}, new=True, asked_at=990,
                               nonce=("ask:n", 4600)))
    other = card(w.ws, w.person, w.conn, created_at=1000, tool="other_tool")
    ddb.cards.file_card(other, filed(other), signing_key=("k1", 90000))
    assert dict(requests.calls) == {"TransactWriteItems": 2}
    keys = [codec.plain(i) for i in ddb.client.scan(TableName=ddb.table.name)["Items"] if i["pk"]["S"] == "KEYS"]
    assert [(k["sk"], k["until"], k["expires_at"]) for k in keys] == [("k1#000000090000", 90000, 90000)]


def test_a_request_recorded_before_settled_at_existed_is_decided_from_its_card(ddb):
    """A request item written by an earlier release has no ``settled_at``: the answer's claim fails
    and names the card, so the gate decides from the card itself (and claims as any filing)."""
    w = World(ddb)
    first = w.file(created_at=1000)
    withdrawn = w.move(first, S.WITHDRAWN, 1001)
    ddb.client.update_item(TableName=ddb.table.name, Key=codec.request_key_item(first.request_key),
                           UpdateExpression="REMOVE settled_at")
    c = card(w.ws, w.person, w.conn, created_at=1010, tool=first.tool, fingerprint=first.fingerprint)
    with pytest.raises(Taken) as taken:
        ddb.cards.commit_card(CardCommit(c, S.COMPLETED, 1010, (filed(c),), result={"ok": True}, new=True,
                                         asked_at=1005))
    assert taken.value.card == withdrawn.at(1010)  # decided before the question: the answer may claim
    done = ddb.cards.commit_card(CardCommit(c, S.COMPLETED, 1010, (filed(c),), result={"ok": True}, new=True))
    assert ddb.cards.latest_card(w.ws.id, w.person.id, c.tool, c.fingerprint, 1011) == done
