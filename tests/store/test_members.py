"""A workspace made with its owner in one transaction, and the checks on a new member (both stores)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.core.ids import new_id
from countersign.store.callers import Owner
from countersign.store.errors import BadInput, Conflict, NotFound
from countersign.store.hashes import secret_hash
from countersign.store.sessions import Session
from tests.store._factories import World, person, workspace


def test_workspace_with_its_owner_is_written_together(store):
    ws = workspace("Acme")
    owner = person(ws, email="Owner@Example.com", role="owner")
    store.workspaces.create_workspace(ws, owner)
    assert store.workspaces.get_member(ws.id, owner.id) == (ws, owner)
    assert store.workspaces.get_person_by_email("owner@example.com") == owner
    assert store.workspaces.list_persons(ws.id) == [owner]


def test_an_owner_whose_email_is_taken_leaves_no_workspace_behind(store):
    taken = World(store, "First")
    ws = workspace("Second")
    with pytest.raises(Conflict, match="already belongs to a member"):
        store.workspaces.create_workspace(ws, person(ws, email=taken.person.email.upper(), role="owner"))
    with pytest.raises(NotFound):
        store.workspaces.get_workspace(ws.id)
    assert store.workspaces.list_persons(ws.id) == []
    assert store.workspaces.get_person_by_email(taken.person.email) == taken.person  # the first one's, untouched


def test_a_workspace_id_taken_leaves_the_new_owner_unwritten(store):
    ws = workspace("One")
    store.workspaces.create_workspace(ws)
    owner = person(ws, email="new-owner@example.com", role="owner")
    with pytest.raises(Conflict, match="workspace"):
        store.workspaces.create_workspace(replace(ws, name="Two"), owner)
    assert store.workspaces.get_workspace(ws.id).name == "One"
    assert store.workspaces.get_person_by_email("new-owner@example.com") is None


def test_an_owner_of_another_workspace_is_refused(store):
    ws, elsewhere = workspace("Acme"), workspace("Elsewhere")
    with pytest.raises(BadInput, match="owner"):
        store.workspaces.create_workspace(ws, person(elsewhere, role="owner"))
    with pytest.raises(NotFound):
        store.workspaces.get_workspace(ws.id)


def test_a_person_needs_an_existing_workspace(store):
    lost = person(workspace("Never made"), email="lost@example.com")
    with pytest.raises(NotFound):
        store.workspaces.create_person(lost)
    assert store.workspaces.get_person_by_email("lost@example.com") is None


@pytest.mark.parametrize("bad", ["Two\nlines", "Tab\there", "Bell\x07", "Sep\u2028line", " Padded", "n" * 101,
                                 "Bob \u202enimda\u202c", "Zero\u200bwidth"])
def test_a_member_name_is_one_line_of_at_most_100_characters(store, bad):
    w = World(store)
    new = replace(person(w.ws, email="named@example.com"), name=bad)
    with pytest.raises(BadInput, match="^name: "):
        store.workspaces.create_person(new)
    assert store.workspaces.get_person_by_email("named@example.com") is None
    ws = workspace("Fresh")
    with pytest.raises(BadInput, match="^name: "):
        store.workspaces.create_workspace(ws, replace(person(ws, role="owner"), name=bad))
    with pytest.raises(NotFound):
        store.workspaces.get_workspace(ws.id)
    with pytest.raises(BadInput, match="^name: "):
        store.workspaces.update_person(w.ws.id, w.person.id, name=bad)
    assert store.workspaces.get_person(w.ws.id, w.person.id).name == w.person.name


def test_a_member_name_may_be_empty_or_100_characters(store):
    w = World(store)
    for name in ("", "n" * 100, "Zoë O'Brien-Łukasiewicz", "Bea \U0001F469\u200d\U0001F4BB"):
        created = replace(person(w.ws), name=name)
        store.workspaces.create_person(created)
        assert store.workspaces.get_person(w.ws.id, created.id).name == name
        assert store.workspaces.update_person(w.ws.id, w.person.id, name=name).name == name


def test_an_unknown_role_is_refused_before_anything_is_written(store):
    ws = workspace("Acme")
    with pytest.raises(BadInput, match="^role: "):
        store.workspaces.create_workspace(ws, person(ws, role="superuser"))
    with pytest.raises(NotFound):
        store.workspaces.get_workspace(ws.id)


# -- removing a person --------------------------------------------------------------------------


def test_a_removed_person_is_gone_and_their_email_free(store):
    w = World(store)
    bea = w.add_person("approver")
    assert store.workspaces.remove_person(w.ws.id, bea.id, "approver") == bea
    with pytest.raises(NotFound):
        store.workspaces.get_person(w.ws.id, bea.id)
    with pytest.raises(NotFound):
        store.workspaces.get_member(w.ws.id, bea.id)
    assert store.workspaces.get_person_by_email(bea.email) is None
    assert store.workspaces.list_persons(w.ws.id) == [w.person]
    elsewhere = World(store, "Elsewhere")
    again = person(elsewhere.ws, email=bea.email.upper())  # the address may join any workspace again
    store.workspaces.create_person(again)
    assert store.workspaces.get_person_by_email(bea.email) == again


def test_no_credential_of_a_removed_person_resolves(store):
    w = World(store)
    session = Session(session_hash=secret_hash(new_id("s_")), person_id=w.person.id, workspace_id=w.ws.id,
                      csrf_token="csrf", created_at=0, expires_at=3600)
    store.sessions.create_session(session)
    owner = Owner(w.ws.id, w.person.id)
    assert store.callers.get_connection_as(w.conn.token_hash, owner) is not None
    assert store.callers.get_session_as(session.session_hash, owner, 10) is not None
    store.workspaces.remove_person(w.ws.id, w.person.id, "owner")
    assert store.callers.get_connection_as(w.conn.token_hash, owner) is None
    assert store.callers.get_session_as(session.session_hash, owner, 10) is None


def test_removing_someone_whose_role_moved_conflicts_and_removes_nobody(store):
    w = World(store)
    bea = w.add_person("admin")
    store.workspaces.update_person(w.ws.id, bea.id, role="owner")
    with pytest.raises(Conflict, match="is owner now, not admin"):
        store.workspaces.remove_person(w.ws.id, bea.id, "admin")
    assert store.workspaces.get_person(w.ws.id, bea.id).role == "owner"
    assert store.workspaces.get_person_by_email(bea.email).id == bea.id


def test_removing_an_unknown_person_or_another_workspaces_is_not_found(store):
    w, other = World(store), World(store, "Other")
    for workspace_id, person_id in ((w.ws.id, new_id("p_")), (w.ws.id, other.person.id)):
        with pytest.raises(NotFound):
            store.workspaces.remove_person(workspace_id, person_id, "owner")
    assert store.workspaces.get_person(other.ws.id, other.person.id) == other.person
