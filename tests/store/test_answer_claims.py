"""What a commit claims and spends in its own transaction (both stores): an answer's card filed
decided claims its request only if no card was decided since the question was put
(``asked_at``); an answer's single-use value (``nonce``) is spent with the commit or not at all;
a filing notes the key that signed its ticket. Nothing is read first, and a claim that loses
names the card that won."""

from __future__ import annotations

import pytest

from countersign.store.cards import CardCommit
from countersign.store.docs import DocWrite
from countersign.store.errors import Replayed, Taken
from tests.store._factories import World, audit, card, filed
from tests.store.test_requests import S, twin


def answered(c, now: int, asked_at: int | None = None, nonce: tuple[str, int] | None = None,
             target: S = S.COMPLETED) -> CardCommit:
    """``c`` filed already decided, as an answer given in the client at ``now`` commits it."""
    return CardCommit(c, target, now, (filed(c), audit(c, target.value, now)),
                      writes=(DocWrite("note", c.id, {"t": "x"}, 0),), result={"ok": True}, channel="client",
                      new=True, asked_at=asked_at, nonce=nonce)


def test_an_answer_to_a_request_with_no_card_files_its_card_decided(store):
    w = World(store)
    c = card(w.ws, w.person, w.conn, created_at=1000)
    done = store.cards.commit_card(answered(c, 1005, asked_at=1000))
    assert store.cards.latest_card(w.ws.id, w.person.id, c.tool, c.fingerprint, 1006) == done
    assert store.docs.get_doc(w.ws.id, "note", c.id).data == {"t": "x"}


@pytest.mark.parametrize("target", [S.WITHDRAWN, S.FAILED])
def test_a_card_decided_before_the_question_leaves_the_request_to_the_answer(store, target):
    w = World(store)
    first = w.file(created_at=1000)
    w.move(first, target, 1001)
    c = twin(w, first, 1010)
    assert store.cards.commit_card(answered(c, 1020, asked_at=1002)).id == c.id


@pytest.mark.parametrize("target", [S.WITHDRAWN, S.FAILED, S.DECLINED, S.COMPLETED])
def test_a_card_decided_at_or_after_the_question_holds_the_request_and_nothing_is_written(store, target):
    w = World(store)
    first = w.file(created_at=1000)
    decided = w.move(first, target, 1005)
    c = twin(w, first, 1010)
    with pytest.raises(Taken) as taken:
        store.cards.commit_card(answered(c, 1010, asked_at=1005))
    assert taken.value.card == decided.at(1010)
    assert store.docs.get_doc(w.ws.id, "note", c.id) is None
    assert store.cards.latest_card(w.ws.id, w.person.id, c.tool, c.fingerprint, 1011).id == first.id


def test_a_waiting_card_holds_the_request_whenever_the_question_was_put(store):
    w = World(store)
    first = w.file(created_at=1000)
    c = twin(w, first, 1010)
    with pytest.raises(Taken) as taken:
        store.cards.commit_card(answered(c, 1010, asked_at=1009))
    assert taken.value.card == first


def test_a_card_that_lapsed_untouched_was_decided_at_its_deadline(store):
    w = World(store)
    first = w.file(created_at=1000, ttl=100)  # lapses at 1100
    c = twin(w, first, 1200)
    with pytest.raises(Taken):
        store.cards.commit_card(answered(c, 1200, asked_at=1100))
    assert store.cards.commit_card(answered(c, 1200, asked_at=1101)).id == c.id


def test_a_lapsed_card_marked_expired_later_was_decided_then(store):
    w = World(store)
    first = w.file(created_at=1000, ttl=100)
    store.cards.commit_card(CardCommit(first, S.EXPIRED, 1150, (audit(first, "expired", 1150),)))  # a late click
    c = twin(w, first, 1200)
    with pytest.raises(Taken):
        store.cards.commit_card(answered(c, 1200, asked_at=1150))
    assert store.cards.commit_card(answered(c, 1200, asked_at=1151)).id == c.id


def test_without_asked_at_an_answer_claims_as_any_filing(store):
    w = World(store)
    first = w.file(created_at=1000)
    w.move(first, S.WITHDRAWN, 1005)
    c = twin(w, first, 1010)
    assert store.cards.commit_card(answered(c, 1010)).id == c.id


def test_a_nonce_is_spent_with_the_commit(store):
    w = World(store)
    c = card(w.ws, w.person, w.conn, created_at=1000)
    store.cards.commit_card(answered(c, 1000, nonce=("ask:n1", 4600)))
    assert store.limits.use_nonce("ask:n1", 4600, 1001) is False


def test_a_spent_nonce_refuses_the_commit_before_anything_else_and_writes_nothing(store):
    w = World(store)
    first = w.file(created_at=1000)
    assert store.limits.use_nonce("ask:n1", 4600, 1000)
    c = twin(w, first, 1010)  # its request is held too: the nonce is what is reported
    with pytest.raises(Replayed):
        store.cards.commit_card(answered(c, 1010, asked_at=1005, nonce=("ask:n1", 4610)))
    assert store.docs.get_doc(w.ws.id, "note", c.id) is None
    with pytest.raises(Replayed):
        store.cards.commit_card(CardCommit(first, S.DECLINED, 1010, (audit(first, "declined", 1010),),
                                     nonce=("ask:n1", 4610)))
    assert store.cards.get_card(w.ws.id, first.id, 1011).state is S.PENDING


def test_a_commit_that_fails_leaves_its_nonce_unspent(store):
    w = World(store)
    first = w.file(created_at=1000)
    c = twin(w, first, 1010)
    with pytest.raises(Taken):
        store.cards.commit_card(answered(c, 1010, nonce=("ask:n2", 4610)))
    assert store.limits.use_nonce("ask:n2", 4610, 1011) is True


def test_an_expired_nonce_can_be_spent_again(store):
    w = World(store)
    assert store.limits.use_nonce("ask:n3", 1005, 1000)
    c = card(w.ws, w.person, w.conn, created_at=1000)
    assert store.cards.commit_card(answered(c, 1005, nonce=("ask:n3", 4605))).id == c.id


def test_a_filing_notes_its_signing_key_and_a_lost_filing_notes_nothing(store):
    w = World(store)
    c = card(w.ws, w.person, w.conn, created_at=1000)
    assert store.cards.file_card(c, filed(c), signing_key=("k1", 90000)) == c
    assert store.signing_keys.signing_keys_in_use(now=1000) == {"k1": 90000}
    lost = twin(w, c, 1001)
    assert store.cards.file_card(lost, filed(lost), signing_key=("k2", 95000)).id == c.id
    assert store.signing_keys.signing_keys_in_use(now=1000) == {"k1": 90000}


def test_notes_with_filings_never_lower_the_time_and_a_forgotten_key_is_gone(store):
    w = World(store)
    store.signing_keys.note_signing_key("k1", until=95000)
    for i, until in enumerate((90000, 99000, 92000)):
        c = card(w.ws, w.person, w.conn, created_at=1000 + i, tool=f"tool_{i}")
        store.cards.file_card(c, filed(c), signing_key=("k1", until))
    assert store.signing_keys.signing_keys_in_use(now=1000) == {"k1": 99000}
    assert store.signing_keys.signing_keys_in_use(now=99000) == {}
    store.signing_keys.forget_signing_key("k1")
    assert store.signing_keys.signing_keys_in_use(now=1000) == {}
