"""The ``store`` fixture of every suite that runs on both stores: SQLite on a temporary file and
DynamoDB on moto (the table built from template.yaml). Import it into a conftest to use it."""

from __future__ import annotations

import inspect

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
    from countersign.store.hashes import secret_hash

    connection = store.connections.get_connection_by_token_hash(secret_hash(token))
    assert connection is not None, "the agent token does not authenticate"
    workspace = store.workspaces.get_workspace(connection.workspace_id)
    person = store.workspaces.get_person(connection.workspace_id, connection.person_id)
    return Principal(workspace, person, connection)


def with_roles(store, **roles):
    """``store`` with some of its roles replaced (a role wrapped to lag, fail or count), the others
    its own: a copy, so ``store`` itself is left as it is."""
    import copy

    changed = copy.copy(store)
    for name, role in roles.items():
        setattr(changed, name, role)
    return changed


def calls_recorded(store, record):
    """``store`` (a copy) whose roles tell ``record(method_name, args, result)`` of every call made
    through them, after it is made (``result`` None when it raised). Method names are unique across
    roles, so a name says which read or write it was."""
    from countersign.store import Store

    class Recording:
        def __init__(self, role):
            self._role = role

        def __getattr__(self, name):
            found = getattr(self._role, name)
            if not callable(found):
                return found

            def recorded(*args, **kwargs):
                result = None
                try:
                    result = found(*args, **kwargs)
                    return result
                finally:
                    record(name, args, result)
            return recorded

    roles = [name for name in inspect.signature(Store.__init__).parameters if name != "self"]
    return with_roles(store, **{name: Recording(getattr(store, name)) for name in roles})
