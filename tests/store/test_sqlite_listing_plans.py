"""A person's listings on SQLite are served by the partial indexes, whatever piles up behind them.

The pending list and its count seek past every card left past its deadline (``cards_waiting``; the
cards others' requests let the person answer too, by ``card_audience_waiting``);
the history pages in index order (``cards_history``), first page and next. Asserted on the plan
SQLite chooses for the very statements the store runs (captured with a trace callback): no scan
of the cards table, no sort of what it read. Times are for ``bench/store.py``, not for tests.
SQLite only (the name carries ``sqlite``); DynamoDB lists from its index by construction.
"""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.store.sqlite import SQLiteStore
from tests.store._factories import DAY, World

NOW = 10 * DAY


@pytest.fixture
def piled_up(tmp_path):
    """A person with 30 cards past their deadline, 30 decided, and 5 still waiting at NOW."""
    store = SQLiteStore(str(tmp_path / "plans.db"))
    w = World(store)
    for i in range(30):
        w.file(created_at=1000 + i)  # lapsed a day later, long before NOW
    for i in range(30):
        w.move(w.file(created_at=2000 + i), CardState.DECLINED, 3000 + i)
    waiting = [w.file(created_at=NOW - 100 + i) for i in range(5)]
    yield store, w, waiting
    store.close()


def _statements(store: SQLiteStore, listing) -> tuple[object, list[str]]:
    seen: list[str] = []
    db = store.database.connection()
    db.set_trace_callback(seen.append)
    try:
        result = listing()
    finally:
        db.set_trace_callback(None)
    selects = [s for s in seen if s.lstrip().upper().startswith("SELECT")]
    assert selects, "the listing ran no SELECT"
    return result, selects


def _plan(store: SQLiteStore, sql: str) -> list[str]:
    db = store.database.connection()
    return [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql).fetchall()]


def _assert_served_by(store: SQLiteStore, statements: list[str], index: str) -> None:
    for sql in statements:
        plan = _plan(store, sql)
        if "FROM card_audience" in sql:  # the cards others' requests let this person answer too:
            index_here = "card_audience_waiting"  # served in deadline order by their own index
        else:
            index_here = index
        assert any(f"USING INDEX {index_here}" in step or f"USING COVERING INDEX {index_here}" in step
                   for step in plan), (sql, plan)
        assert not any(step.startswith("SCAN cards") for step in plan), (sql, plan)
        assert not any("TEMP B-TREE" in step for step in plan), (sql, plan)


def test_sqlite_pending_list_seeks_past_lapsed_cards(piled_up):
    store, w, waiting = piled_up
    (cards, cursor), statements = _statements(store, lambda: store.cards.list_pending_cards(w.ws.id, w.person.id, NOW))
    assert [c.id for c in cards] == [c.id for c in waiting] and cursor is None
    _assert_served_by(store, statements, "cards_waiting")

    count, statements = _statements(store, lambda: store.cards.count_pending_cards(w.ws.id, w.person.id, NOW))
    assert count == 5
    _assert_served_by(store, statements, "cards_waiting")


def test_sqlite_pending_list_next_page_is_served_by_the_index(piled_up):
    store, w, waiting = piled_up
    first, cursor = store.cards.list_pending_cards(w.ws.id, w.person.id, NOW, limit=2)
    assert cursor is not None
    (rest, end), statements = _statements(
        store, lambda: store.cards.list_pending_cards(w.ws.id, w.person.id, NOW, limit=2, cursor=cursor))
    assert [c.id for c in first + rest] == [c.id for c in waiting[:4]] and end is not None
    _assert_served_by(store, statements, "cards_waiting")


def test_sqlite_history_pages_in_index_order(piled_up):
    store, w, _ = piled_up
    (first, cursor), statements = _statements(
        store, lambda: store.cards.list_card_history(w.ws.id, w.person.id, NOW, limit=40))
    _assert_served_by(store, statements, "cards_history")
    assert cursor is not None
    (rest, end), statements = _statements(
        store, lambda: store.cards.list_card_history(w.ws.id, w.person.id, NOW, limit=40, cursor=cursor))
    _assert_served_by(store, statements, "cards_history")
    shown = first + rest
    assert end is None and len(shown) == 60  # the 30 lapsed and the 30 declined, none still waiting
    assert {c.state for c in shown} == {CardState.EXPIRED, CardState.DECLINED}


def test_sqlite_plan_check_fails_on_a_table_scan(tmp_path):
    """The check above can fail: a listing by a column no index leads with scans the table."""
    store = SQLiteStore(str(tmp_path / "scan.db"))
    try:
        World(store)
        with pytest.raises(AssertionError):
            _assert_served_by(store, ["SELECT * FROM cards WHERE title = 'x' ORDER BY created_at"], "cards_waiting")
    finally:
        store.close()
