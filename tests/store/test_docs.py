"""Toolset documents: versioned, all-or-nothing batches, per workspace."""

from __future__ import annotations

import pytest

from countersign.store.docs import Doc, DocWrite
from countersign.store.errors import Conflict
from tests.store._factories import World


def put(kind: str, doc_id: str, data: dict | None, expected_version: int) -> DocWrite:
    return DocWrite(kind=kind, id=doc_id, data=data, expected_version=expected_version)


def test_create_with_version_zero_stores_version_one(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [put("account", "acc_1", {"name": "Checking", "balance": 0}, 0)])
    assert store.docs.get_doc(w.ws.id, "account", "acc_1") == Doc("account", "acc_1", {"name": "Checking",
                                                                                       "balance": 0}, 1)


def test_update_with_the_read_version_bumps_it(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [put("account", "acc_1", {"balance": 0}, 0)])
    store.docs.write_docs(w.ws.id, [put("account", "acc_1", {"balance": 5}, 1)])
    store.docs.write_docs(w.ws.id, [put("account", "acc_1", {"balance": 7}, 2)])
    assert store.docs.get_doc(w.ws.id, "account", "acc_1") == Doc("account", "acc_1", {"balance": 7}, 3)


def test_unknown_doc_is_none(store):
    w = World(store)
    assert store.docs.get_doc(w.ws.id, "account", "nope") is None


def test_creating_an_existing_doc_conflicts(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [put("account", "acc_1", {"v": 1}, 0)])
    with pytest.raises(Conflict) as conflict:
        store.docs.write_docs(w.ws.id, [put("account", "acc_1", {"v": 2}, 0)])
    assert "acc_1" in conflict.value.message
    assert (conflict.value.kind, conflict.value.id) == ("account", "acc_1")
    assert store.docs.get_doc(w.ws.id, "account", "acc_1") == Doc("account", "acc_1", {"v": 1}, 1)


def test_stale_version_conflicts_and_writes_nothing_of_the_batch(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [put("account", "a", {"v": 1}, 0), put("account", "b", {"v": 1}, 0)])
    store.docs.write_docs(w.ws.id, [put("account", "b", {"v": 2}, 1)])  # b is now at version 2
    batch = [
        put("account", "a", {"v": "lost"}, 1),
        put("category", "new", {"v": "lost"}, 0),
        put("account", "b", {"v": "lost"}, 1),  # stale
    ]
    with pytest.raises(Conflict) as conflict:
        store.docs.write_docs(w.ws.id, batch)
    assert "b" in conflict.value.message
    assert (conflict.value.kind, conflict.value.id) == ("account", "b")
    assert store.docs.get_doc(w.ws.id, "account", "a") == Doc("account", "a", {"v": 1}, 1)
    assert store.docs.get_doc(w.ws.id, "account", "b") == Doc("account", "b", {"v": 2}, 2)
    assert store.docs.get_doc(w.ws.id, "category", "new") is None


def test_update_of_a_missing_doc_conflicts(store):
    w = World(store)
    with pytest.raises(Conflict) as conflict:
        store.docs.write_docs(w.ws.id, [put("account", "ghost", {"v": 1}, 1)])
    assert (conflict.value.kind, conflict.value.id) == ("account", "ghost")
    assert store.docs.get_doc(w.ws.id, "account", "ghost") is None


def test_delete_with_the_read_version(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [put("account", "a", {"v": 1}, 0)])
    store.docs.write_docs(w.ws.id, [put("account", "a", None, 1)])
    assert store.docs.get_doc(w.ws.id, "account", "a") is None
    assert store.docs.list_docs(w.ws.id, "account") == []
    store.docs.write_docs(w.ws.id, [put("account", "a", {"v": "again"}, 0)])
    assert store.docs.get_doc(w.ws.id, "account", "a") == Doc("account", "a", {"v": "again"}, 1)


def test_delete_with_a_stale_version_conflicts(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [put("account", "a", {"v": 1}, 0)])
    store.docs.write_docs(w.ws.id, [put("account", "a", {"v": 2}, 1)])
    with pytest.raises(Conflict) as conflict:
        store.docs.write_docs(w.ws.id, [put("account", "a", None, 1)])
    assert (conflict.value.kind, conflict.value.id) == ("account", "a")
    assert store.docs.get_doc(w.ws.id, "account", "a") == Doc("account", "a", {"v": 2}, 2)


def test_list_docs_is_ordered_by_id_and_per_kind(store):
    w = World(store)
    store.docs.write_docs(
        w.ws.id,
        [
            put("account", "c", {"n": 3}, 0),
            put("account", "a", {"n": 1}, 0),
            put("category", "b", {"n": 0}, 0),
            put("account", "b", {"n": 2}, 0),
        ],
    )
    assert store.docs.list_docs(w.ws.id, "account") == [
        Doc("account", "a", {"n": 1}, 1),
        Doc("account", "b", {"n": 2}, 1),
        Doc("account", "c", {"n": 3}, 1),
    ]
    assert store.docs.list_docs(w.ws.id, "category") == [Doc("category", "b", {"n": 0}, 1)]
    assert store.docs.list_docs(w.ws.id, "campaign") == []


def test_docs_are_per_workspace(store):
    a, b = World(store, "A"), World(store, "B")
    store.docs.write_docs(a.ws.id, [put("account", "acc", {"owner": "A"}, 0)])
    assert store.docs.get_doc(b.ws.id, "account", "acc") is None
    assert store.docs.list_docs(b.ws.id, "account") == []
    store.docs.write_docs(b.ws.id, [put("account", "acc", {"owner": "B"}, 0)])
    assert store.docs.get_doc(a.ws.id, "account", "acc") == Doc("account", "acc", {"owner": "A"}, 1)
    assert store.docs.get_doc(b.ws.id, "account", "acc") == Doc("account", "acc", {"owner": "B"}, 1)


def test_doc_data_round_trips_nested_and_unicode_values(store):
    w = World(store)
    data = {"payee": "Café Ünïcode <b>", "splits": [{"amount": -1250, "memo": None}], "flag": True, "rate": 0.5}
    store.docs.write_docs(w.ws.id, [put("transaction", "tx_1", data, 0)])
    assert store.docs.get_doc(w.ws.id, "transaction", "tx_1").data == data


def test_an_empty_batch_writes_nothing(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [])
    assert store.docs.list_docs(w.ws.id, "account") == []


def test_conflict_names_the_doc_that_moved_not_the_first_of_the_batch(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [put("account", "a", {"v": 1}, 0), put("category", "a", {"v": 1}, 0)])
    store.docs.write_docs(w.ws.id, [put("category", "a", {"v": 2}, 1)])  # same id, other kind: moved
    with pytest.raises(Conflict) as conflict:
        store.docs.write_docs(w.ws.id, [put("account", "a", {"v": "lost"}, 1), put("category", "a", {"v": "lost"}, 1)])
    assert (conflict.value.kind, conflict.value.id) == ("category", "a")
    assert store.docs.get_doc(w.ws.id, "account", "a") == Doc("account", "a", {"v": 1}, 1)


def test_a_create_conflict_carries_no_doc(store):
    w = World(store)
    with pytest.raises(Conflict) as conflict:
        store.workspaces.create_workspace(w.ws)
    assert (conflict.value.kind, conflict.value.id) == (None, None)
