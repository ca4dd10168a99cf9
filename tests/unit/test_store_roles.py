"""The store's roles stay small (docs/architecture.md): every role a :class:`~countersign.store.Store`
holds is an interface of at most :data:`MOST_METHODS` methods (that both stores implement each is
``tests/store/test_roles.py``)."""

from __future__ import annotations

import abc
import dataclasses
import inspect
import typing

import pytest

from countersign.store import Store

MOST_METHODS = 15  # issue 41: "no role over ~15 methods"

ROLES = {f.name: typing.get_type_hints(Store)[f.name] for f in dataclasses.fields(Store)}


def _methods(role: type) -> list[str]:
    return [name for name, _ in inspect.getmembers(role, inspect.isfunction) if not name.startswith("_")]


@pytest.mark.parametrize("name", sorted(ROLES))
def test_every_role_is_a_small_interface(name):
    role = ROLES[name]
    assert issubclass(role, abc.ABC), f"store.{name} is typed as {role.__name__}, which is no role interface"
    methods = _methods(role)
    assert len(methods) <= MOST_METHODS, (
        f"store.{name} ({role.__name__}) has {len(methods)} methods, more than {MOST_METHODS}: split it by idea "
        f"({', '.join(methods)})")
