"""The card that holds a request, looked at with the request's counts (``store.cards.request_holder``),
on both stores: when no card holds the request the counts are taken in the same write (on
DynamoDB one ``TransactWriteItems``: the counters and a ``ConditionCheck`` on the request's claim);
when one does, that card is the answer and nothing is counted. A 2026 question round writes no
card, so this is the one write it makes with the request limits on."""

from __future__ import annotations

import dataclasses

import pytest

from countersign.core.card_states import ANSWER_MEMORY_SECONDS, CardState
from countersign.core.ids import new_id
from countersign.store.limits import OverLimit, RequestCounts
from tests.store._factories import World, card, filed

S = CardState
WINDOW = 10
NOW = 1_000  # the first second of a window; cards below are filed at NOW


def counts(limits: dict[str, int], now: int = NOW) -> RequestCounts:
    return RequestCounts(tuple(limits.items()), now, WINDOW, "Too many requests. Wait {wait} s, then try again.")


def keys() -> dict[str, int]:
    return {f"mcp-connection:{new_id()}": 2, f"mcp-address:{new_id()}": 3}


def hits(store, limits: dict[str, int], now: int = NOW) -> dict[str, int]:
    seen = counts(limits, now)
    store.limits.read_counts(seen)
    assert seen.seen is not None
    return {key: seen.seen.get(key, 0) for key in limits}


def holder(store, w: World, fingerprint: str, now: int, mine: RequestCounts | None = None):
    return store.cards.request_holder(w.ws.id, w.person.id, "add_transaction", fingerprint, now, counts=mine)


def test_a_request_no_card_holds_is_counted_in_the_look(store):
    w = World(store)
    limits = keys()
    mine = counts(limits)
    assert holder(store, w, "fp-new", NOW, mine) is None
    assert mine.taken and mine.to_take() is None
    assert hits(store, limits) == dict.fromkeys(limits, 1)
    assert holder(store, w, "fp-new", NOW, mine) is None  # taken already: not counted twice
    assert hits(store, limits) == dict.fromkeys(limits, 1)
    assert holder(store, w, "fp-new", NOW) is None  # without counts: a read


def test_a_pending_card_holds_its_request_and_nothing_is_counted(store):
    w = World(store)
    c = w.file(created_at=NOW)
    limits = keys()
    mine = counts(limits, NOW + 1)
    assert holder(store, w, c.fingerprint, NOW + 1, mine) == c
    assert not mine.taken and mine.to_take() is mine  # counted after the request's work, as today
    assert hits(store, limits) == dict.fromkeys(limits, 0)
    assert holder(store, w, c.fingerprint, NOW + 1) == c
    # another person's or another tool's request with the same fingerprint is another request
    other = w.add_person()
    assert store.cards.request_holder(w.ws.id, other.id, c.tool, c.fingerprint, NOW + 1, counts=mine) is None
    assert mine.taken and hits(store, limits) == dict.fromkeys(limits, 1)
    assert store.cards.request_holder(w.ws.id, w.person.id, "other_tool", c.fingerprint, NOW + 1) is None


def test_a_running_card_holds_its_request(store):
    w = World(store)
    c = w.file(created_at=NOW)
    w.move(c, S.RUNNING, NOW + 1)
    mine = counts(keys(), NOW + 2)
    held = holder(store, w, c.fingerprint, NOW + 2, mine)
    assert held is not None and held.id == c.id and held.state is S.RUNNING and not mine.taken


@pytest.mark.parametrize("target", [S.DECLINED, S.COMPLETED])
def test_an_answered_card_holds_its_request_for_the_answer_memory(store, target):
    w = World(store)
    c = w.file(created_at=NOW)
    w.move(c, target, NOW + 1)
    early = counts(keys(), NOW + 2)
    held = holder(store, w, c.fingerprint, NOW + 2, early)
    assert held is not None and held.id == c.id and held.state is target and not early.taken
    later = counts(keys(), NOW + 1 + ANSWER_MEMORY_SECONDS)
    assert holder(store, w, c.fingerprint, NOW + 1 + ANSWER_MEMORY_SECONDS, later) is None and later.taken


@pytest.mark.parametrize("target", [S.WITHDRAWN, S.FAILED])
def test_a_card_that_ended_otherwise_holds_nothing(store, target):
    w = World(store)
    c = w.file(created_at=NOW)
    w.move(c, target, NOW + 1)
    mine = counts(keys(), NOW + 2)
    assert holder(store, w, c.fingerprint, NOW + 2, mine) is None and mine.taken
    assert store.cards.latest_card(w.ws.id, w.person.id, c.tool, c.fingerprint, NOW + 2).id == c.id  # still its latest


def test_a_lapsed_card_holds_nothing_unless_its_lapse_counts_as_declined(store):
    w = World(store)
    lapsed = w.file(created_at=NOW, ttl=100)
    assert holder(store, w, lapsed.fingerprint, NOW + 99).id == lapsed.id
    mine = counts(keys(), NOW + 100)
    assert holder(store, w, lapsed.fingerprint, NOW + 100, mine) is None and mine.taken
    declining = dataclasses.replace(card(w.ws, w.person, w.conn, created_at=NOW, ttl=100),
                                    lifetime={"wait": 100, "lapse": "declined"})
    store.cards.file_card(declining, filed(declining))
    mine = counts(keys(), NOW + 100 + ANSWER_MEMORY_SECONDS - 1)
    held = holder(store, w, declining.fingerprint, NOW + 100 + ANSWER_MEMORY_SECONDS - 1, mine)
    assert held is not None and held.id == declining.id and held.state is S.EXPIRED and not mine.taken
    assert holder(store, w, declining.fingerprint, NOW + 100 + ANSWER_MEMORY_SECONDS) is None


def test_at_a_limit_nothing_is_counted_and_the_request_is_refused(store):
    w = World(store)
    limits = keys()
    connection, address = limits
    store.limits.take_counts(counts({connection: 2}))
    store.limits.take_counts(counts({connection: 2}))  # another request took the last count
    late = counts(limits)
    with pytest.raises(OverLimit) as refused:
        holder(store, w, "fp-free", NOW, late)
    assert str(refused.value) == f"Too many requests. Wait {WINDOW} s, then try again. Nothing was written."
    assert not late.taken and hits(store, limits) == {connection: 2, address: 0}
    # a card holding the request is its answer first: nothing counted, nothing refused
    c = w.file(created_at=NOW)
    assert holder(store, w, c.fingerprint, NOW, counts(limits)) == c
    assert hits(store, limits) == {connection: 2, address: 0}


def test_on_sqlite_a_file_that_takes_no_write_lets_the_request_through_uncounted(tmp_path, caplog):
    """Never an outage from a counter (SQLite: a read-only or full file refuses the counts' write):
    the claim is read alone and the request is left to be counted after its work."""
    from countersign.store.sqlite import SQLiteStore

    store = SQLiteStore(str(tmp_path / "read-only.db"))
    try:
        w = World(store)
        c = w.file(created_at=NOW)
        store.database.connection().execute("PRAGMA query_only = ON")
        for fingerprint, expected in (("fp-free", None), (c.fingerprint, c)):
            mine = counts(keys())
            with caplog.at_level("WARNING", "countersign.store"):
                assert holder(store, w, fingerprint, NOW, mine) == expected
            assert not mine.taken and mine.to_take() is mine
        logged = [r.getMessage() for r in caplog.records if r.module == "cards"]
        assert logged == ["the request's counts could not be taken with its claim; it is counted after its work"] * 2
    finally:
        store.close()
