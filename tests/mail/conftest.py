"""Fixtures of the mail toolset's tests: every in-process test runs on SQLite and on DynamoDB (moto)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mail.world import World
from tests.support.stores import store  # noqa: F401  (the both-stores fixture)

_HERE = Path(__file__).resolve().parent


@pytest.fixture
def world(store) -> World:  # noqa: F811  (the fixture above)
    return World(store)


def pytest_collection_modifyitems(config, items):
    # This hook sees every item of the session: mark only this folder's end-to-end tests.
    for item in items:
        path = Path(str(item.path)).resolve()
        if path.parent == _HERE and path.name.startswith("test_e2e"):
            item.add_marker(pytest.mark.mcp)
