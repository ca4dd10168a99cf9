"""Reading only what is asked: a range of doc ids (prefix, bounds, limit, order) and several docs
by key in one read, the same on both stores."""

from __future__ import annotations

import pytest

from countersign.store.docs import Doc, DocWrite
from countersign.store.errors import BadInput
from tests.store._factories import World

IDS = ["2026-08.acc_a.0", "2026-09.acc_a.0", "2026-09.acc_a.1", "2026-09.acc_b.0", "2026-10.acc_a.0", "2026-1",
       "2026-09", "2026-09~", "2027-01.acc_a.0", "Zürich", "日本"]


@pytest.fixture
def ws(store):
    w = World(store)
    store.docs.write_docs(w.ws.id, [DocWrite("chunk", i, {"id": i}, 0) for i in IDS])
    store.docs.write_docs(w.ws.id, [DocWrite("other", "2026-09.acc_a.0", {"id": "other"}, 0)])
    return w.ws.id


def ids(docs: list[Doc]) -> list[str]:
    return [d.id for d in docs]


def test_a_prefix_reads_only_its_ids_in_order(store, ws):
    assert ids(store.docs.list_docs(ws, "chunk", "2026-09.")) == ["2026-09.acc_a.0", "2026-09.acc_a.1",
                                                                  "2026-09.acc_b.0"]
    assert ids(store.docs.list_docs(ws, "chunk", "2026-09")) == ["2026-09", "2026-09.acc_a.0", "2026-09.acc_a.1",
                                                            "2026-09.acc_b.0", "2026-09~"]
    assert ids(store.docs.list_docs(ws, "chunk", "2026-09.acc_a.")) == ["2026-09.acc_a.0", "2026-09.acc_a.1"]
    assert store.docs.list_docs(ws, "chunk", "2025") == []
    assert ids(store.docs.list_docs(ws, "chunk", "Z")) == ["Zürich"]
    assert ids(store.docs.list_docs(ws, "chunk", "日")) == ["日本"]


def test_start_is_inclusive_stop_exclusive(store, ws):
    assert ids(store.docs.list_docs(ws, "chunk", start="2026-09.acc_a.1", stop="2026-10.acc_a.0")) == [
        "2026-09.acc_a.1", "2026-09.acc_b.0", "2026-09~", "2026-1"]  # "2026-1" sorts before "2026-10…"
    assert ids(store.docs.list_docs(ws, "chunk", stop="2026-09")) == ["2026-08.acc_a.0"]
    assert ids(store.docs.list_docs(ws, "chunk", start="2027")) == ["2027-01.acc_a.0", "Zürich", "日本"]
    assert ids(store.docs.list_docs(ws, "chunk", "2026-09.", start="2026-09.acc_b")) == ["2026-09.acc_b.0"]
    assert ids(store.docs.list_docs(ws, "chunk", "2026-09.", stop="2026-09.acc_a.1")) == ["2026-09.acc_a.0"]
    assert store.docs.list_docs(ws, "chunk", start="2026-09.acc_b.0", stop="2026-09.acc_b.0") == []


def test_descending_and_limit(store, ws):
    assert ids(store.docs.list_docs(ws, "chunk", descending=True, limit=2)) == ["日本", "Zürich"]
    assert ids(store.docs.list_docs(ws, "chunk", "2026-09.", descending=True)) == [
        "2026-09.acc_b.0", "2026-09.acc_a.1", "2026-09.acc_a.0"]
    assert ids(store.docs.list_docs(ws, "chunk", stop="2026-09.acc_b.0", descending=True, limit=2)) == [
        "2026-09.acc_a.1", "2026-09.acc_a.0"]
    assert ids(store.docs.list_docs(ws, "chunk", limit=1)) == ["2026-08.acc_a.0"]
    assert len(store.docs.list_docs(ws, "chunk", limit=100)) == len(IDS)


def test_ranges_stay_in_their_kind_and_workspace(store, ws):
    assert store.docs.list_docs(ws, "other", "2026-09.") == [Doc("other", "2026-09.acc_a.0", {"id": "other"}, 1)]
    elsewhere = World(store, "B").ws.id
    assert store.docs.list_docs(elsewhere, "chunk", "2026") == []


@pytest.mark.parametrize("bad", [{"limit": 0}, {"limit": -1}, {"limit": 1.5}, {"start": 5}, {"prefix": None}])
def test_bad_bounds_are_refused(store, ws, bad):
    with pytest.raises(BadInput):
        store.docs.list_docs(ws, "chunk", **bad)


def test_get_docs_reads_several_at_once(store, ws):
    found = store.docs.get_docs(ws, [("chunk", "2026-09.acc_a.1"), ("other", "2026-09.acc_a.0"), ("chunk", "nope"),
                                ("chunk", "2026-09.acc_a.1")])
    assert found == {
        ("chunk", "2026-09.acc_a.1"): Doc("chunk", "2026-09.acc_a.1", {"id": "2026-09.acc_a.1"}, 1),
        ("other", "2026-09.acc_a.0"): Doc("other", "2026-09.acc_a.0", {"id": "other"}, 1),
    }
    assert store.docs.get_docs(ws, []) == {}
    assert store.docs.get_docs(World(store, "C").ws.id, [("chunk", "2026-09.acc_a.1")]) == {}


def test_get_docs_reads_at_most_a_hundred(store, ws):
    assert len(store.docs.get_docs(ws, [("chunk", i) for i in IDS] + [("x", str(n)) for n in range(89)])) == len(IDS)
    with pytest.raises(BadInput):
        store.docs.get_docs(ws, [("x", str(n)) for n in range(101)])
