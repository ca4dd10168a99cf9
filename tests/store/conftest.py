"""The ``store`` fixture: every test in this folder runs once on SQLite and once on DynamoDB (moto)."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request, tmp_path):
    if request.param == "sqlite":
        from countersign.store.sqlite import SQLiteStore

        s = SQLiteStore(str(tmp_path / "countersign.db"))
        yield s
        s.close()
    else:
        from tests.support.aws import moto_dynamodb_store

        with moto_dynamodb_store() as s:
            yield s


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/store/" in str(item.fspath):
            item.add_marker(pytest.mark.store)
