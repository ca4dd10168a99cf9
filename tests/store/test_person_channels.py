"""Which channels reach a person (docs/channels.md): email is *Email me when an agent asks*; Slack
and push are on unless the person turned them off. Kept with the person, read wherever the person
is read (by id, by email, in the member list, with a connection token); bad names are refused and
nothing is written (both stores)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.store.callers import Owner
from countersign.store.errors import BadInput
from tests.store._factories import World, person


def test_every_channel_reaches_a_new_person(store):
    w = World(store)
    got = store.workspaces.get_person(w.ws.id, w.person.id)
    assert got.channels_off == ()
    assert [got.reached_by(c) for c in ("email", "slack", "push", "fax")] == [True, True, True, False]


def test_channels_turned_off_are_kept_with_the_person_and_turned_on_again(store):
    w = World(store)
    changed = store.workspaces.update_person(w.ws.id, w.person.id, channels_off=("push", "slack"))
    assert changed.channels_off == ("slack", "push")  # in the channels' own order
    assert not changed.reached_by("slack") and not changed.reached_by("push") and changed.reached_by("email")
    assert store.workspaces.get_person(w.ws.id, w.person.id) == changed
    assert store.workspaces.get_person_by_email(w.person.email) == changed
    assert store.workspaces.list_persons(w.ws.id) == [changed]
    found = store.callers.get_connection_as(w.conn.token_hash, Owner(w.ws.id, w.person.id))
    assert found is not None and found[2] == changed
    # other changes leave them as they are
    assert store.workspaces.update_person(w.ws.id, w.person.id, agent_requests_email=False).channels_off == \
        ("slack", "push")
    back = store.workspaces.update_person(w.ws.id, w.person.id, channels_off=())
    assert back.channels_off == () and back.reached_by("slack") and not back.reached_by("email")
    assert store.workspaces.get_person(w.ws.id, w.person.id).channels_off == ()


def test_a_new_person_may_come_with_channels_off(store):
    w = World(store)
    created = replace(person(w.ws, email="quiet@example.com"), channels_off=("slack",))
    store.workspaces.create_person(created)
    assert store.workspaces.get_person(w.ws.id, created.id) == created


@pytest.mark.parametrize("bad", [("email",), ("fax",), ("slack", "slack"), ["slack"], "slack", (1,)])
def test_bad_channel_names_are_refused_and_nothing_written(store, bad):
    w = World(store)
    store.workspaces.update_person(w.ws.id, w.person.id, channels_off=("push",))
    with pytest.raises(BadInput, match="^channels_off: "):
        store.workspaces.update_person(w.ws.id, w.person.id, channels_off=bad, name="Changed")
    assert store.workspaces.get_person(w.ws.id, w.person.id) == replace(w.person, channels_off=("push",))
    with pytest.raises(BadInput, match="^channels_off: "):
        store.workspaces.create_person(replace(person(w.ws, email="bad@example.com"), channels_off=bad))
    assert store.workspaces.get_person_by_email("bad@example.com") is None
