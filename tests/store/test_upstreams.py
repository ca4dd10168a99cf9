"""Upstream configurations (the gateway) on both stores: a document per upstream, written only
with the version read (a change that raced another is refused, never lost), per workspace, and
holding a credential only sealed."""

from __future__ import annotations

import pytest

from countersign.store.docs import DocWrite
from countersign.store.errors import Conflict
from countersign.toolkit import ActionContext
from countersign.toolsets.gateway.config import KIND, Pin, Upstream, Witness, load, load_all, tool_digest
from countersign.toolsets.gateway.seal import Sealer
from tests.store._factories import World

TOOL = {"name": "write_file", "description": "Write a file.", "inputSchema": {"type": "object"},
        "annotations": {"destructiveHint": True}}


def upstream(workspace_id: str, sealed: str | None, version: int = 0) -> Upstream:
    pin = Pin(TOOL, tool_digest(TOOL), "held", (Witness("read_file", {"path": "$path"}),))
    return Upstream(workspace_id, "fs", "https://files.example.com/mcp", (), sealed, {"write_file": pin}, version)


def ctx(store, w: World) -> ActionContext:
    return ActionContext.reading(store.docs, store.workspaces, w.ws, w.person, None, 0)


def test_an_upstream_round_trips_and_changes_only_from_the_version_read(store):
    w = World(store)
    sealed = Sealer([b"k" * 32]).seal(w.ws.id, "fs", {"Authorization": "Bearer secret-value"})
    first = upstream(w.ws.id, sealed)
    store.docs.write_docs(w.ws.id, [DocWrite(KIND, "fs", first.to_data(), 0)])
    read = load(ctx(store, w), "fs")
    assert read == upstream(w.ws.id, sealed, version=1)
    assert "secret-value" not in repr(store.docs.get_doc(w.ws.id, KIND, "fs").data)
    with pytest.raises(Conflict):  # a second add, or a change planned on an old read
        store.docs.write_docs(w.ws.id, [DocWrite(KIND, "fs", first.to_data(), 0)])
    store.docs.write_docs(w.ws.id, [DocWrite(KIND, "fs", None, 1)])
    assert load(ctx(store, w), "fs") is None


def test_one_workspace_never_reads_anothers_upstreams(store):
    a, b = World(store), World(store)
    store.docs.write_docs(a.ws.id, [DocWrite(KIND, "fs", upstream(a.ws.id, None).to_data(), 0)])
    assert [u.name for u in load_all(ctx(store, a))] == ["fs"]
    assert load_all(ctx(store, b)) == [] and load(ctx(store, b), "fs") is None


def test_a_removed_upstream_reads_as_none_and_its_version_goes_on_counting(store):
    from countersign.toolsets.gateway.config import removed, stored

    w = World(store)
    store.docs.write_docs(w.ws.id, [DocWrite(KIND, "fs", upstream(w.ws.id, None).to_data(), 0)])
    store.docs.write_docs(w.ws.id, [DocWrite(KIND, "fs", removed("fs"), 1)])
    assert load(ctx(store, w), "fs") is None and load_all(ctx(store, w)) == []
    assert stored(ctx(store, w), "fs") == (None, 2) and stored(ctx(store, w), "gh") == (None, 0)
    with pytest.raises(Conflict):  # adding it again is written over the removal, from its version
        store.docs.write_docs(w.ws.id, [DocWrite(KIND, "fs", upstream(w.ws.id, None).to_data(), 0)])
    store.docs.write_docs(w.ws.id, [DocWrite(KIND, "fs", upstream(w.ws.id, None).to_data(), 2)])
    assert load(ctx(store, w), "fs") == upstream(w.ws.id, None, version=3)
