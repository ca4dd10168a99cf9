"""Budget tests: in-process ones run on SQLite and on DynamoDB (moto); e2e ones use the shared live server.

Moto's mock starts once per module (slow) and each test gets its own fresh table (fast), because
moto's transactions copy the whole table and a shared, growing table makes every write slower.
"""

from __future__ import annotations

import uuid

import pytest

from tests.budget.ledger import new_book


@pytest.fixture(scope="module", params=["sqlite", "dynamodb"])
def backend(request):
    if request.param == "sqlite":
        yield "sqlite", None
        return
    from moto import mock_aws

    from tests.support.aws import REGION, boto_session

    with mock_aws():
        yield "dynamodb", boto_session().client("dynamodb", region_name=REGION)


@pytest.fixture
def store(backend, tmp_path):
    kind, client = backend
    if kind == "sqlite":
        from countersign.store.sqlite import SQLiteStore

        s = SQLiteStore(str(tmp_path / "countersign.db"))
        yield s
        s.close()
        return
    from countersign.store.dynamodb import DynamoDBStore
    from tests.support.aws import create_table_from_template

    name = create_table_from_template(client, f"budget-test-{uuid.uuid4().hex[:8]}")
    s = DynamoDBStore(name, client=client)
    yield s
    s.close()
    client.delete_table(TableName=name)


@pytest.fixture
def book(store):
    """The small September 2026 budget in a fresh workspace of ``store``."""
    return new_book(store)
