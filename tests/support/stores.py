"""The ``store`` fixture of every suite that runs on both stores: SQLite on a temporary file and
DynamoDB on moto (the table built from template.yaml). Import it into a conftest to use it."""

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


def principal_by_token(store, token: str):
    """The principal an agent's connection token acts as (its connection, workspace and member)."""
    from countersign.identity.principal import Principal
    from countersign.store.records import secret_hash

    connection = store.get_connection_by_token_hash(secret_hash(token))
    assert connection is not None, "the agent token does not authenticate"
    workspace = store.get_workspace(connection.workspace_id)
    person = store.get_person(connection.workspace_id, connection.person_id)
    return Principal(workspace, person, connection)
