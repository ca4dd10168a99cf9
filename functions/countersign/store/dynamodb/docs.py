"""Toolset documents on DynamoDB, and the writes of an effect as transaction items."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..docs import (
    Doc,
    DocStore,
    DocWrite,
    RoleWrite,
    SettingWrite,
    Write,
    check_doc_keys,
    check_doc_writes,
    id_range,
    moved,
    storable_doc_key,
    write_target,
)
from ..errors import Conflict, StoreError
from ..standing_grants import StandingGrantWrite
from ..workspaces import SETTING_DEFAULTS
from . import codec
from .client import Cancelled, Table
from .standing_grants import grant_put, hint_items


class DynamoDocs(DocStore):
    def __init__(self, table: Table):
        self.table = table

    def get_doc(self, workspace_id: str, kind: str, doc_id: str) -> Doc | None:
        if not storable_doc_key(kind, doc_id):  # (no such doc can exist; DynamoDB would refuse the key)
            return None
        found = self.table.get(codec.doc_key(workspace_id, kind, doc_id))
        return None if found is None else codec.doc_from(found)

    def get_docs(self, workspace_id: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Doc]:
        wanted = list(dict.fromkeys(keys))
        check_doc_keys(wanted)
        found = self.table.batch_get([codec.doc_key(workspace_id, kind, ident) for kind, ident in wanted
                                      if storable_doc_key(kind, ident)])
        docs = (codec.doc_from(v) for v in found)
        return {(d.kind, d.id): d for d in docs}

    def list_docs(self, workspace_id: str, kind: str, prefix: str = "", *, start: str | None = None,
                  stop: str | None = None, limit: int | None = None, descending: bool = False) -> list[Doc]:
        low, high = id_range(prefix, start, stop, limit)
        names = {":pk": codec.doc_partition(workspace_id, kind)}
        condition = "pk = :pk"
        if high is not None and low:
            condition += " AND sk BETWEEN :low AND :high"  # inclusive: an id equal to high is dropped below
            names.update({":low": low, ":high": high})
        elif high is not None:
            condition += " AND sk < :high"
            names[":high"] = high
        elif low:
            condition += " AND sk >= :low"
            names[":low"] = low
        query: dict[str, Any] = {"KeyConditionExpression": condition, "ConsistentRead": True,
                                 "ExpressionAttributeValues": codec.values(names), "ScanIndexForward": not descending}
        if limit is not None:
            query["PaginationConfig"] = {"PageSize": limit + 1}
        docs: list[Doc] = []
        for v in self.table.query(**query):
            if high is not None and v["sk"] == high:
                continue
            docs.append(codec.doc_from(v))
            if limit is not None and len(docs) >= limit:
                break
        return docs

    def write_docs(self, workspace_id: str, writes: Iterable[Write]) -> None:
        writes = list(writes)
        check_doc_writes(writes)  # at most MAX_DOC_WRITES, no record twice, plain JSON
        if not writes:
            return
        try:
            self.table.transact(write_ops(workspace_id, writes))
        except Cancelled as cancelled:
            raise conflict_of(workspace_id, writes, cancelled, 0) from None


def write_ops(workspace_id: str, writes: list[Write]) -> list[dict[str, Any]]:
    """One transaction item per write, each conditional on what the write expects; then the items
    a grant's write adds on its connection (:func:`~.standing_grants.hint_items`)."""
    return [_op(workspace_id, w) for w in writes] + [item for _, item in _beside(writes)]


def _beside(writes: list[Write]) -> list[tuple[StandingGrantWrite, dict[str, Any]]]:
    return [(w, item) for w in writes if isinstance(w, StandingGrantWrite)
            for item in hint_items(w.grant, w.connection)]


def conflict_of(workspace_id: str, writes: list[Write], cancelled: Cancelled, offset: int) -> StoreError:
    """The :class:`Conflict` naming the first write (items ``offset`` on) whose condition failed."""
    for i, w in enumerate(writes):
        if cancelled.code(offset + i) == "ConditionalCheckFailed":
            kind, ident = write_target(w)
            return Conflict(moved(w), kind=kind, id=ident or workspace_id)
    for i, (w, _) in enumerate(_beside(writes), start=offset + len(writes)):
        if cancelled.code(i) == "ConditionalCheckFailed":
            return Conflict(f"The standing grants of connection {w.connection.id!r} changed since it was read.",
                            kind="connection", id=w.connection.id)
    return StoreError(f"The writes could not be committed ({cancelled}); nothing was written.")


def _op(workspace_id: str, w: Write) -> dict[str, Any]:
    if isinstance(w, DocWrite):
        if w.expected_version == 0:
            cond: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
        else:
            cond = {
                "ConditionExpression": "version = :v",
                "ExpressionAttributeValues": codec.values({":v": w.expected_version}),
            }
        if w.data is None:
            return {"Delete": {"Key": codec.doc_key(workspace_id, w.kind, w.id), **cond}}
        return {"Put": {"Item": codec.doc_item(workspace_id, w.kind, w.id, w.data, w.expected_version + 1), **cond}}
    if isinstance(w, StandingGrantWrite):
        if w.grant.workspace_id != workspace_id:  # (refused as SQLite refuses it: nothing written)
            raise Conflict(moved(w), kind="standing_grant", id=w.grant.id)
        return grant_put(w.grant)
    if isinstance(w, RoleWrite):
        return {"Update": {
            "Key": codec.person_key(workspace_id, w.person_id),
            "UpdateExpression": "SET #role = :role",
            "ConditionExpression": "attribute_exists(pk) AND #role = :expected",
            "ExpressionAttributeNames": {"#role": "role"},
            "ExpressionAttributeValues": codec.values({":role": w.role, ":expected": w.expected}),
        }}
    if isinstance(w, SettingWrite):
        # A setting never written reads as its default, so "still the default" also holds when absent.
        holds = "settings.#k = :expected"
        expected = list(w.expected) if isinstance(w.expected, tuple) else w.expected  # a list setting: a list
        if SETTING_DEFAULTS.get(w.name) == w.expected:
            holds = f"(attribute_not_exists(settings.#k) OR {holds})"
        return {"Update": {
            "Key": codec.workspace_key(workspace_id),
            "UpdateExpression": "SET settings.#k = :value",
            "ConditionExpression": f"attribute_exists(pk) AND {holds}",
            "ExpressionAttributeNames": {"#k": w.name},
            "ExpressionAttributeValues": codec.values({":value": w.stored(), ":expected": expected}),
        }}
    return {"Update": {
        "Key": codec.workspace_key(workspace_id),
        "UpdateExpression": "SET #name = :name",
        "ConditionExpression": "attribute_exists(pk) AND #name = :expected",
        "ExpressionAttributeNames": {"#name": "name"},
        "ExpressionAttributeValues": codec.values({":name": w.name, ":expected": w.expected}),
    }}
