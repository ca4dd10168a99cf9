"""One workspace's ids are not found from another: the error is the one an unknown id gets."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.store.errors import NotFound
from tests.store._factories import World, audit, filed


@pytest.fixture
def two(store):
    return World(store, "A"), World(store, "B")


def not_found(call, ident: str) -> str:
    """The message of the NotFound ``call`` raises, with ``ident`` masked so two ids compare."""
    with pytest.raises(NotFound) as err:
        call()
    return err.value.message.replace(ident, "<id>")


def same_as_unknown(call_with, ident: str, unknown_prefix: str) -> None:
    unknown = new_id(unknown_prefix)
    assert not_found(lambda: call_with(ident), ident) == not_found(lambda: call_with(unknown), unknown)


def test_get_card_of_another_workspace(store, two):
    a, b = two
    card = a.file()
    same_as_unknown(lambda i: store.cards.get_card(b.ws.id, i, now=1001), card.id, "card_")


def test_audit_trail_of_another_workspace(store, two):
    a, b = two
    card = a.file()
    same_as_unknown(lambda i: store.cards.audit_trail(b.ws.id, i), card.id, "card_")


@pytest.mark.parametrize("target", [CardState.RUNNING, CardState.WITHDRAWN, CardState.DECLINED, CardState.EXPIRED])
def test_transition_of_another_workspaces_card_is_not_found_and_writes_nothing(store, two, target):
    a, b = two
    card = a.file(created_at=1000)
    entry = audit(card, target.value, 1001)
    same_as_unknown(lambda i: store.cards.transition_card(b.ws.id, i, target, 1001, entry), card.id, "card_")
    assert store.cards.get_card(a.ws.id, card.id, now=1001) == card
    assert store.cards.audit_trail(a.ws.id, card.id) == [filed(card)]


def test_get_person_of_another_workspace(store, two):
    a, b = two
    same_as_unknown(lambda i: store.workspaces.get_person(b.ws.id, i), a.person.id, "p_")


def test_update_person_of_another_workspace(store, two):
    a, b = two
    same_as_unknown(lambda i: store.workspaces.update_person(b.ws.id, i, role="member"), a.person.id, "p_")
    assert store.workspaces.get_person(a.ws.id, a.person.id) == a.person


def test_get_connection_of_another_workspace(store, two):
    a, b = two
    same_as_unknown(lambda i: store.connections.get_connection(b.ws.id, i), a.conn.id, "c_")


def test_revoke_connection_of_another_workspace(store, two):
    a, b = two
    same_as_unknown(lambda i: store.connections.revoke_connection(b.ws.id, i, now=5), a.conn.id, "c_")
    assert not store.connections.get_connection(a.ws.id, a.conn.id).revoked


def test_listings_never_show_another_workspaces_records(store, two):
    a, b = two
    a.file(created_at=100)
    a.move(a.file(created_at=110), CardState.DECLINED, 120)
    assert store.cards.list_pending_cards(b.ws.id, b.person.id, now=200) == ([], None)
    assert store.cards.list_pending_cards(b.ws.id, a.person.id, now=200) == ([], None)
    assert store.cards.list_card_history(b.ws.id, b.person.id, now=200) == ([], None)
    assert store.cards.list_card_history(b.ws.id, a.person.id, now=200) == ([], None)
    assert [p.id for p in store.workspaces.list_persons(b.ws.id)] == [b.person.id]
    assert [c.id for c in store.connections.list_connections(b.ws.id)] == [b.conn.id]
    assert store.connections.list_connections(b.ws.id, a.person.id) == []


def test_latest_card_is_per_workspace(store, two):
    a, b = two
    card = a.file(created_at=100, fingerprint="fp-shared")
    assert store.cards.latest_card(b.ws.id, a.person.id, card.tool, "fp-shared", now=150) is None
