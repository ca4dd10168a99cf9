"""Both stores hold every role of :class:`~countersign.store.Store`, each an object implementing
that role's interface whole (tests/unit/test_store_roles.py keeps each interface small)."""

from __future__ import annotations

import dataclasses
import inspect
import typing

from countersign.store import Store


def test_the_store_holds_every_role_implemented(store):
    for field in dataclasses.fields(Store):
        role = typing.get_type_hints(Store)[field.name]
        held = getattr(store, field.name)
        assert isinstance(held, role), f"store.{field.name} is a {type(held).__name__}, not a {role.__name__}"
        assert not inspect.isabstract(type(held)), f"store.{field.name} leaves methods of {role.__name__} out"
