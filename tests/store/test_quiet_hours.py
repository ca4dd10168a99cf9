"""A person's quiet hours: stored with the person, read wherever the person is read (by id, by
email, in the member list, with a connection token), cleared with None; bad quiet hours are
refused and nothing is written (both stores)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.store.callers import Owner
from countersign.store.errors import BadInput
from countersign.store.workspaces import QuietHours
from tests.store._factories import World, person

NIGHTS = QuietHours(start="22:00", end="07:00", zone="Europe/Berlin")


def test_quiet_hours_are_kept_with_the_person_and_cleared_with_none(store):
    w = World(store)
    assert store.workspaces.get_person(w.ws.id, w.person.id).quiet_hours is None
    changed = store.workspaces.update_person(w.ws.id, w.person.id, quiet_hours=NIGHTS)
    assert changed.quiet_hours == NIGHTS
    assert store.workspaces.get_person(w.ws.id, w.person.id).quiet_hours == NIGHTS
    assert store.workspaces.get_person_by_email(w.person.email).quiet_hours == NIGHTS
    assert [p.quiet_hours for p in store.workspaces.list_persons(w.ws.id)] == [NIGHTS]
    found = store.callers.get_connection_as(w.conn.token_hash, Owner(w.ws.id, w.person.id))
    assert found is not None and found[2] == changed
    # other changes leave them as they are
    assert store.workspaces.update_person(w.ws.id, w.person.id, name="Pat Q").quiet_hours == NIGHTS
    assert store.workspaces.update_person(w.ws.id, w.person.id, quiet_hours=None).quiet_hours is None
    assert store.workspaces.get_person(w.ws.id, w.person.id).quiet_hours is None


def test_a_new_person_may_come_with_quiet_hours(store):
    w = World(store)
    lunch = QuietHours(start="12:00", end="13:30", zone="America/Argentina/Buenos_Aires")
    created = replace(person(w.ws, email="lunch@example.com"), quiet_hours=lunch)
    store.workspaces.create_person(created)
    assert store.workspaces.get_person(w.ws.id, created.id) == created


@pytest.mark.parametrize(("bad", "field"), [
    (QuietHours("22:00", "07:00", "Mars/Olympus"), "quiet_hours.zone"),
    (QuietHours("22:00", "07:00", "CEST"), "quiet_hours.zone"),
    (QuietHours("22:00", "07:00", "+02:00"), "quiet_hours.zone"),
    (QuietHours("22:00", "07:00", "../../etc/passwd"), "quiet_hours.zone"),
    (QuietHours("22:00", "07:00", ""), "quiet_hours.zone"),
    (QuietHours("24:00", "07:00", "UTC"), "quiet_hours.start"),
    (QuietHours("7:00", "07:30", "UTC"), "quiet_hours.start"),
    (QuietHours("22:00", "07:60", "UTC"), "quiet_hours.end"),
    (QuietHours("22:00", "22:00", "UTC"), "quiet_hours.end"),
    ("22:00-07:00", "quiet_hours"),
])
def test_bad_quiet_hours_are_refused_and_nothing_written(store, bad, field):
    w = World(store)
    store.workspaces.update_person(w.ws.id, w.person.id, quiet_hours=NIGHTS)
    with pytest.raises(BadInput, match=f"^{field}: "):
        store.workspaces.update_person(w.ws.id, w.person.id, quiet_hours=bad, name="Changed")
    assert store.workspaces.get_person(w.ws.id, w.person.id) == replace(w.person, quiet_hours=NIGHTS)
    if isinstance(bad, QuietHours):
        with pytest.raises(BadInput, match=f"^{field}: "):
            store.workspaces.create_person(replace(person(w.ws, email="bad@example.com"), quiet_hours=bad))
        assert store.workspaces.get_person_by_email("bad@example.com") is None
