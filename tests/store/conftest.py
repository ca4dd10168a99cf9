"""The ``store`` fixture: every test in this folder runs once on SQLite and once on DynamoDB (moto)."""

from __future__ import annotations

import pytest

from tests.support.stores import store  # noqa: F401  (the both-stores fixture)


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/store/" in str(item.fspath):
            item.add_marker(pytest.mark.store)
