"""Who filed a card (an agent's connection, a member from Settings, the command line): kept on the
card in both stores, through every move; a card stored without it reads as filed by its agent."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.core.askers import AGENT, CLI, PERSON, Asker
from countersign.core.card_states import CardState
from countersign.store.cards import CardCommit
from countersign.store.errors import BadInput, NotFound
from countersign.store.sqlite import SQLiteStore
from tests.store._factories import World, as_released_before, audit, card, filed

S = CardState


def askers(w: World) -> dict[str, tuple[str, Asker]]:
    return {
        "agent": (f"connection:{w.conn.id}", Asker(AGENT, w.conn.id)),
        "person": (f"person:{w.person.id}", Asker(PERSON, w.person.id)),
        "cli": ("cli", Asker(CLI)),
    }


@pytest.mark.parametrize("who", ["agent", "person", "cli"])
def test_who_filed_a_card_is_read_back_with_it(store, who):
    w = World(store)
    actor, asker = askers(w)[who]
    c = card(w.ws, w.person, w.conn, created_at=100, filed_by=actor)
    store.cards.file_card(c, filed(c))
    read = store.cards.get_card(w.ws.id, c.id, now=101)
    assert (read.filed_by, read.asker) == (actor, asker)
    assert read == c


def test_who_filed_it_stays_through_every_move(store):
    w = World(store)
    c = card(w.ws, w.person, w.conn, created_at=100, filed_by="cli")
    store.cards.file_card(c, filed(c))
    running = w.move(c, S.RUNNING, 101, channel="page")
    done = store.cards.commit_card(CardCommit(running, S.COMPLETED, 102, (audit(c, "completed", 102),),
                                              result={"ok": True}))
    assert done.filed_by == "cli"
    assert store.cards.get_card(w.ws.id, c.id, now=103).asker == Asker(CLI)


def test_a_card_filed_already_decided_keeps_who_filed_it(store):
    w = World(store)
    c = card(w.ws, w.person, w.conn, created_at=100, filed_by=f"person:{w.person.id}")
    store.cards.commit_card(CardCommit(c, S.DECLINED, 100, (filed(c), audit(c, "declined", 100)), new=True))
    assert store.cards.get_card(w.ws.id, c.id, now=101).asker == Asker(PERSON, w.person.id)


def test_a_card_stored_without_it_reads_as_filed_by_its_agent_connection(store):
    """As an earlier release stored every card: no ``filed_by`` at all."""
    w = World(store)
    c = card(w.ws, w.person, w.conn, created_at=100, filed_by=None)
    store.cards.file_card(c, filed(c))
    read = store.cards.get_card(w.ws.id, c.id, now=101)
    assert read.filed_by is None
    assert read.asker == Asker(AGENT, w.conn.id)


def test_listings_leave_it_out_and_the_whole_card_has_it(store):
    """DynamoDB's index does not project it; both stores list cards alike (``listed``)."""
    w = World(store)
    waiting = card(w.ws, w.person, w.conn, created_at=100, filed_by="cli")
    store.cards.file_card(waiting, filed(waiting))
    answered = card(w.ws, w.person, w.conn, created_at=110, filed_by=f"person:{w.person.id}")
    store.cards.file_card(answered, filed(answered))
    w.move(answered, S.DECLINED, 111)
    [pending], _ = store.cards.list_pending_cards(w.ws.id, w.person.id, now=200)
    [history], _ = store.cards.list_card_history(w.ws.id, w.person.id, now=200)
    assert (pending.id, pending.filed_by) == (waiting.id, None)
    assert (history.id, history.filed_by) == (answered.id, None)
    assert store.cards.get_card(w.ws.id, waiting.id, now=200).filed_by == "cli"
    assert store.cards.get_card(w.ws.id, answered.id, now=200).filed_by == f"person:{w.person.id}"


@pytest.mark.parametrize("actor", ["", "connection:", "person:", "system", "an agent", "CLI", 7])
def test_anything_else_is_refused_and_nothing_is_written(store, actor):
    w = World(store)
    c = replace(card(w.ws, w.person, w.conn, created_at=100), filed_by=actor)
    with pytest.raises(BadInput) as bad:
        store.cards.file_card(c, filed(c))
    assert bad.value.field == "filed_by"
    with pytest.raises(NotFound):
        store.cards.get_card(w.ws.id, c.id, now=101)
    with pytest.raises(BadInput):
        store.cards.commit_card(CardCommit(c, S.DECLINED, 100, (filed(c),), new=True))
    with pytest.raises(NotFound):
        store.cards.get_card(w.ws.id, c.id, now=101)


def test_a_database_of_the_release_before_opens_and_its_cards_read_as_their_agents(tmp_path):
    """SQLite: a database made before cards kept who filed them gains the column on open."""
    path = str(tmp_path / "countersign.db")
    first = SQLiteStore(path)
    w = World(first)
    old = card(w.ws, w.person, w.conn, created_at=100, filed_by=None)
    first.cards.file_card(old, filed(old))
    first.close()
    as_released_before(path, "cards", "filed_by", 3)

    reopened = SQLiteStore(path)
    try:
        assert reopened.cards.get_card(w.ws.id, old.id, now=101).asker == Asker(AGENT, w.conn.id)
        new = card(w.ws, w.person, w.conn, created_at=102, filed_by="cli")
        reopened.cards.file_card(new, filed(new))
        assert reopened.cards.get_card(w.ws.id, new.id, now=103).asker == Asker(CLI)
    finally:
        reopened.close()
