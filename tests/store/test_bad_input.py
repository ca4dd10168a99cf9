"""Bad input raises BadInput naming the culprit, and writes nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.core.canonical import canonical_bytes
from countersign.core.ids import new_id
from countersign.store.cards import MAX_ARGUMENTS_BYTES
from countersign.store.docs import MAX_DOC_WRITES, DocWrite
from countersign.store.errors import BadInput, Conflict, NotFound
from tests.store._factories import World, card, filed, person


def arguments_of_size(size: int) -> dict:
    """Arguments whose canonical JSON is exactly ``size`` bytes (multi-byte characters included)."""
    base = {"memo": "é" * 100 + "x"}
    padding = size - len(canonical_bytes(base)) - len(b'"pad":"",')
    args = {"memo": base["memo"], "pad": "p" * padding}
    assert len(canonical_bytes(args)) == size
    return args


def test_arguments_over_64_kib_are_refused_and_nothing_is_written(store):
    w = World(store)
    c = card(
        w.ws,
        w.person,
        w.conn,
        created_at=100,
        fingerprint="fp-big",
        arguments=arguments_of_size(MAX_ARGUMENTS_BYTES + 1),
    )
    with pytest.raises(BadInput) as bad:
        store.cards.file_card(c, filed(c))
    assert bad.value.field == "arguments"
    assert "arguments" in bad.value.message
    with pytest.raises(NotFound):
        store.cards.get_card(w.ws.id, c.id, now=101)
    with pytest.raises(NotFound):
        store.cards.audit_trail(w.ws.id, c.id)
    assert store.cards.list_pending_cards(w.ws.id, w.person.id, now=101) == ([], None)
    assert store.cards.latest_card(w.ws.id, w.person.id, c.tool, "fp-big", now=101) is None


def test_arguments_of_exactly_64_kib_are_accepted(store):
    w = World(store)
    c = w.file(created_at=100, arguments=arguments_of_size(MAX_ARGUMENTS_BYTES))
    assert store.cards.get_card(w.ws.id, c.id, now=101).arguments == c.arguments


def test_duplicate_card_id_conflicts_and_keeps_the_first(store):
    w = World(store)
    first = w.file(created_at=100)
    with pytest.raises(Conflict):
        store.cards.file_card(replace(first, title="Another", fingerprint="another request"), filed(first))
    assert store.cards.get_card(w.ws.id, first.id, now=101) == first
    assert store.cards.audit_trail(w.ws.id, first.id) == [filed(first)]


def test_unknown_role_on_create_is_refused(store):
    w = World(store)
    p = person(w.ws, role="boss")
    with pytest.raises(BadInput) as bad:
        store.workspaces.create_person(p)
    assert bad.value.field == "role"
    assert store.workspaces.get_person_by_email(p.email) is None


def test_unknown_role_on_update_is_refused(store):
    w = World(store)
    with pytest.raises(BadInput) as bad:
        store.workspaces.update_person(w.ws.id, w.person.id, role="superuser")
    assert bad.value.field == "role"
    assert store.workspaces.get_person(w.ws.id, w.person.id) == w.person


def test_unknown_person_field_is_refused(store):
    w = World(store)
    with pytest.raises(BadInput) as bad:
        store.workspaces.update_person(w.ws.id, w.person.id, email="steal@example.com")
    assert bad.value.field == "email"
    assert store.workspaces.get_person(w.ws.id, w.person.id) == w.person


@pytest.mark.parametrize(
    "changes, field",
    [({"no_such_setting": True}, "no_such_setting"), ({"ask_before_drafting": "yes"}, "ask_before_drafting")],
)
def test_bad_workspace_settings_are_refused(store, changes, field):
    w = World(store)
    with pytest.raises(BadInput) as bad:
        store.workspaces.update_workspace_settings(w.ws.id, {"confirm_in_client": False, **changes})
    assert bad.value.field == field
    assert store.workspaces.get_workspace(w.ws.id) == w.ws


def test_too_many_doc_writes_are_refused(store):
    w = World(store)
    writes = [DocWrite("account", f"acc_{i:03d}", {"i": i}, 0) for i in range(MAX_DOC_WRITES + 1)]
    with pytest.raises(BadInput) as bad:
        store.docs.write_docs(w.ws.id, writes)
    assert bad.value.field == "writes"
    assert store.docs.list_docs(w.ws.id, "account") == []


def test_a_batch_naming_one_doc_twice_is_refused(store):
    w = World(store)
    with pytest.raises(BadInput) as bad:
        store.docs.write_docs(w.ws.id, [DocWrite("account", "a", {"v": 1}, 0), DocWrite("account", "a", {"v": 2}, 1)])
    assert bad.value.field == "writes"
    assert store.docs.get_doc(w.ws.id, "account", "a") is None


def test_max_doc_writes_are_accepted(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [DocWrite("account", f"acc_{i:03d}", {"i": i}, 0) for i in range(MAX_DOC_WRITES)])
    assert len(store.docs.list_docs(w.ws.id, "account")) == MAX_DOC_WRITES


@pytest.mark.parametrize("listing", ["list_pending_cards", "list_card_history"])
def test_a_forged_cursor_is_refused(store, listing):
    w = World(store)
    with pytest.raises(BadInput) as bad:
        getattr(store.cards, listing)(w.ws.id, w.person.id, now=0, cursor="not-a-cursor" + new_id())
    assert bad.value.field == "cursor"


@pytest.mark.parametrize("listing", ["list_pending_cards", "list_card_history"])
@pytest.mark.parametrize("position", [[2**63, "c_x"], [-(2**63) - 1, "c_x"], [10**30, "c_x"], [1.5, "c_x"],
                                      [1, 2], [True, "c_x"]])
def test_a_cursor_forged_around_a_number_too_large_for_the_store_is_refused(store, listing, position):
    import base64
    import json

    w = World(store)
    forged = base64.urlsafe_b64encode(json.dumps(position).encode()).decode()
    with pytest.raises(BadInput) as bad:
        getattr(store.cards, listing)(w.ws.id, w.person.id, now=0, cursor=forged)
    assert bad.value.field == "cursor"



@pytest.mark.parametrize(("kind", "doc_id"), [("account", ""), ("", "a"), ("account", "é" * 501),
                                              ("account", "x" * 1001), ("k" * 101, "a")])
def test_a_doc_key_neither_store_can_hold_is_refused_on_write_and_found_nowhere_on_read(store, kind, doc_id):
    w = World(store)
    with pytest.raises(BadInput) as bad:
        store.docs.write_docs(w.ws.id, [DocWrite(kind, doc_id, {"v": 1}, 0)])
    assert bad.value.field == "writes"
    assert store.docs.get_doc(w.ws.id, kind, doc_id) is None
    assert store.docs.get_docs(w.ws.id, [(kind, doc_id), ("account", "real")]) == {}


def test_the_longest_doc_id_both_stores_hold_round_trips(store):
    w = World(store)
    longest = "é" * 500  # 1,000 UTF-8 bytes
    store.docs.write_docs(w.ws.id, [DocWrite("account", longest, {"v": 1}, 0)])
    assert store.docs.get_doc(w.ws.id, "account", longest).data == {"v": 1}
