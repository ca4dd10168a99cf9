"""A request's counts against the request limits (``countersign.store.limits.RequestCounts``), on
both stores: read with the caller, taken once — alone, or in the transaction of the card the
request files or answers, where a counter at its limit cancels everything."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.store.callers import Owner
from countersign.store.cards import CardCommit
from countersign.store.docs import DocWrite
from countersign.store.errors import NotFound
from countersign.store.limits import OverLimit, RequestCounts
from tests.store._factories import World, audit, card, filed

WINDOW = 10
NOW = 1_000  # the first second of a window


def counts(limits: dict[str, int], now: int = NOW) -> RequestCounts:
    return RequestCounts(tuple(limits.items()), now, WINDOW, "Too many requests. Wait {wait} s, then try again.")


def hits(store, limits: dict[str, int], now: int = NOW) -> dict[str, int]:
    seen = counts(limits, now)
    store.limits.read_counts(seen)
    assert seen.seen is not None
    return {key: seen.seen.get(key, 0) for key in limits}


def keys() -> dict[str, int]:
    return {f"mcp-connection:{new_id()}": 2, f"mcp-address:{new_id()}": 3}


def test_counts_are_taken_together_until_one_is_at_its_limit(store):
    limits = keys()
    connection, address = limits
    taken = [store.limits.take_counts(counts(limits, NOW + i)) for i in range(3)]
    assert taken == [True, True, False]
    # the refused request counted nowhere: its address has room for another connection's
    assert hits(store, limits) == {connection: 2, address: 2}
    assert store.limits.take_counts(counts({address: 3})) is True
    assert store.limits.take_counts(counts({address: 3})) is False
    assert hits(store, limits) == {connection: 2, address: 3}


def test_a_new_window_starts_from_nothing(store):
    limits = keys()
    assert store.limits.take_counts(counts(limits)) and store.limits.take_counts(counts(limits))
    assert not store.limits.take_counts(counts(limits, NOW + WINDOW - 1))
    later = counts(limits, NOW + WINDOW)
    assert later.wait == WINDOW and store.limits.take_counts(later) and later.taken
    assert hits(store, limits, NOW + WINDOW) == dict.fromkeys(limits, 1)


def test_a_single_counter_is_taken_alone(store):
    limit = {f"page-address:{new_id()}": 1}
    first, second = counts(limit), counts(limit)
    assert store.limits.take_counts(first) is True and first.taken
    assert store.limits.take_counts(second) is False and not second.taken
    assert second.wait == WINDOW and second.over() is False  # nothing was read into it


def test_the_counters_are_read_with_the_caller_only_when_it_is_found(store):
    w = World(store)
    limits = keys()
    store.limits.take_counts(counts(limits))
    mine = counts(limits)
    assert store.callers.get_connection_as(w.conn.token_hash, Owner(w.ws.id, w.person.id), mine) is not None
    assert mine.seen == dict.fromkeys(limits, 1) and not mine.over()
    store.limits.take_counts(counts(limits))
    full = counts(limits)
    store.callers.get_connection_as(w.conn.token_hash, Owner(w.ws.id, w.person.id), full)
    assert full.over()  # the connection's 2 are used: refused before any work
    stranger = counts(limits)
    assert store.callers.get_connection_as(w.conn.token_hash, Owner(w.ws.id, new_id("p_")), stranger) is None
    assert stranger.seen is None  # not the caller's: nothing was read for this request


def test_filing_a_card_takes_the_counts_in_its_transaction(store):
    w = World(store)
    limits = keys()
    mine = counts(limits)
    c = card(w.ws, w.person, w.conn)
    assert store.cards.file_card(c, filed(c), counts=mine) == c
    assert mine.taken and hits(store, limits) == dict.fromkeys(limits, 1)
    again = card(w.ws, w.person, w.conn)  # the same counts, taken already: not taken twice
    store.cards.file_card(again, filed(again), counts=mine)
    assert hits(store, limits) == dict.fromkeys(limits, 1)


def test_filing_at_a_limit_writes_nothing(store):
    w = World(store)
    limits = keys()
    connection, _ = limits
    store.limits.take_counts(counts({connection: 2}))
    store.limits.take_counts(counts({connection: 2}))  # another request took the last count
    late = counts(limits)
    c = card(w.ws, w.person, w.conn)
    with pytest.raises(OverLimit) as refused:
        store.cards.file_card(c, filed(c), counts=late)
    assert str(refused.value) == f"Too many requests. Wait {WINDOW} s, then try again. Nothing was written."
    assert not late.taken
    with pytest.raises(NotFound):
        store.cards.get_card(w.ws.id, c.id, NOW)
    assert store.cards.latest_card(w.ws.id, w.person.id, c.tool, c.fingerprint, NOW) is None
    assert hits(store, limits) == {connection: 2, list(limits)[1]: 0}


def test_a_filing_the_request_already_has_takes_no_counts(store):
    w = World(store)
    first = w.file(created_at=NOW)
    limits = keys()
    mine = counts(limits)
    duplicate = card(w.ws, w.person, w.conn, fingerprint=first.fingerprint)
    assert store.cards.file_card(duplicate, filed(duplicate), counts=mine).id == first.id
    assert not mine.taken and hits(store, limits) == dict.fromkeys(limits, 0)


def test_a_commit_takes_the_counts_with_the_card_and_its_effect(store):
    w = World(store)
    c = w.file(created_at=NOW)
    limits = keys()
    mine = counts(limits, NOW + 1)
    done = store.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW + 1, (audit(c, "completed", NOW + 1),),
                                              writes=(DocWrite("note", "n1", {"text": "new"}, 0),), counts=mine))
    assert done.state is CardState.COMPLETED and mine.taken
    assert hits(store, limits) == dict.fromkeys(limits, 1)


def test_a_commit_at_a_limit_writes_nothing_and_the_card_stays_pending(store):
    w = World(store)
    c = w.file(created_at=NOW)
    limits = keys()
    _, address = limits
    for _ in range(3):
        store.limits.take_counts(counts({address: 3}))
    late = counts(limits, NOW + 1)
    with pytest.raises(OverLimit):
        store.cards.commit_card(CardCommit(c, CardState.COMPLETED, NOW + 1, (audit(c, "completed", NOW + 1),),
                                           writes=(DocWrite("note", "n1", {"text": "new"}, 0),), counts=late))
    assert store.cards.get_card(w.ws.id, c.id, NOW + 1) == c
    assert store.docs.get_doc(w.ws.id, "note", "n1") is None
    assert [e.event for e in store.cards.audit_trail(w.ws.id, c.id)] == ["filed"]
    assert not late.taken and hits(store, limits)[address] == 3
    # the card can still be answered once the window turns
    later = counts(limits, NOW + WINDOW)
    store.cards.commit_card(CardCommit(c, CardState.DECLINED, NOW + WINDOW, (audit(c, "declined", NOW + WINDOW),),
                                       counts=later))
    assert later.taken and store.cards.get_card(w.ws.id, c.id, NOW + WINDOW).state is CardState.DECLINED
