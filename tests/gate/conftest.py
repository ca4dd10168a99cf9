"""The gate in process, on both stores: every path a yes or a no can take, driven step by step."""

from __future__ import annotations

import pytest

from tests.support.stores import store  # noqa: F401  (the both-stores fixture)

from .world import GateWorld


@pytest.fixture
def world(store):  # noqa: F811
    return GateWorld(store)
