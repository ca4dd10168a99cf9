"""A workspace made with its owner in one transaction, and the checks on a new member (both stores)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.store.errors import BadInput, Conflict, NotFound
from tests.store._factories import World, person, workspace


def test_workspace_with_its_owner_is_written_together(store):
    ws = workspace("Acme")
    owner = person(ws, email="Owner@Example.com", role="owner")
    store.create_workspace(ws, owner)
    assert store.get_member(ws.id, owner.id) == (ws, owner)
    assert store.get_person_by_email("owner@example.com") == owner
    assert store.list_persons(ws.id) == [owner]


def test_an_owner_whose_email_is_taken_leaves_no_workspace_behind(store):
    taken = World(store, "First")
    ws = workspace("Second")
    with pytest.raises(Conflict, match="already belongs to a member"):
        store.create_workspace(ws, person(ws, email=taken.person.email.upper(), role="owner"))
    with pytest.raises(NotFound):
        store.get_workspace(ws.id)
    assert store.list_persons(ws.id) == []
    assert store.get_person_by_email(taken.person.email) == taken.person  # the first one's, untouched


def test_a_workspace_id_taken_leaves_the_new_owner_unwritten(store):
    ws = workspace("One")
    store.create_workspace(ws)
    owner = person(ws, email="new-owner@example.com", role="owner")
    with pytest.raises(Conflict, match="workspace"):
        store.create_workspace(replace(ws, name="Two"), owner)
    assert store.get_workspace(ws.id).name == "One"
    assert store.get_person_by_email("new-owner@example.com") is None


def test_an_owner_of_another_workspace_is_refused(store):
    ws, elsewhere = workspace("Acme"), workspace("Elsewhere")
    with pytest.raises(BadInput, match="owner"):
        store.create_workspace(ws, person(elsewhere, role="owner"))
    with pytest.raises(NotFound):
        store.get_workspace(ws.id)


def test_a_person_needs_an_existing_workspace(store):
    lost = person(workspace("Never made"), email="lost@example.com")
    with pytest.raises(NotFound):
        store.create_person(lost)
    assert store.get_person_by_email("lost@example.com") is None


@pytest.mark.parametrize("bad", ["Two\nlines", "Tab\there", "Bell\x07", "Sep\u2028line", " Padded", "n" * 101])
def test_a_member_name_is_one_line_of_at_most_100_characters(store, bad):
    w = World(store)
    new = replace(person(w.ws, email="named@example.com"), name=bad)
    with pytest.raises(BadInput, match="^name: "):
        store.create_person(new)
    assert store.get_person_by_email("named@example.com") is None
    ws = workspace("Fresh")
    with pytest.raises(BadInput, match="^name: "):
        store.create_workspace(ws, replace(person(ws, role="owner"), name=bad))
    with pytest.raises(NotFound):
        store.get_workspace(ws.id)
    with pytest.raises(BadInput, match="^name: "):
        store.update_person(w.ws.id, w.person.id, name=bad)
    assert store.get_person(w.ws.id, w.person.id).name == w.person.name


def test_a_member_name_may_be_empty_or_100_characters(store):
    w = World(store)
    for name in ("", "n" * 100, "Zoë O'Brien-Łukasiewicz"):
        created = replace(person(w.ws), name=name)
        store.create_person(created)
        assert store.get_person(w.ws.id, created.id).name == name
        assert store.update_person(w.ws.id, w.person.id, name=name).name == name


def test_an_unknown_role_is_refused_before_anything_is_written(store):
    ws = workspace("Acme")
    with pytest.raises(BadInput, match="^role: "):
        store.create_workspace(ws, person(ws, role="superuser"))
    with pytest.raises(NotFound):
        store.get_workspace(ws.id)
