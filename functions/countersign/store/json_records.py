"""How both stores keep a record as one JSON value (the OAuth records: one row or item each, its
key and expiry beside it)."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any


def data_fields(record: Any) -> dict[str, Any]:
    """What a record's JSON ``data`` holds: its fields, but for those its class keeps outside it
    (``OUTSIDE_DATA``, e.g. :attr:`~.grants.OAuthGrant.OUTSIDE_DATA`)."""
    values = asdict(record)
    for name in getattr(type(record), "OUTSIDE_DATA", ()):
        values.pop(name, None)
    return values


def known_fields(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` without the keys ``cls`` has no field for: a record written by a later release
    (during a rolling deploy, or after a rollback) still loads, its new fields dropped."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in values.items() if k in names}
