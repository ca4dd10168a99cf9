"""The per-person device limit under real concurrency: a person two short of
:data:`MAX_SUBSCRIPTIONS` adds six devices at the same instant; exactly two are stored, the other
four are refused (BadInput, field ``endpoint``) with nothing written. On SQLite (one file, one
connection per thread) and on DynamoDB (moto, each write and read atomic as DynamoDB's are: the
condition inside the transaction decides, tests/support/serial_moto.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from countersign.store.errors import BadInput
from countersign.store.push_subscriptions import MAX_SUBSCRIPTIONS
from countersign.store.sqlite import SQLiteStore
from tests.store.test_push_subscriptions import sub, ws
from tests.support.serial_moto import serialized_writes_and_reads

RACERS = 6
ROUNDS = 3


@pytest.fixture(params=["sqlite", "dynamodb"])
def racing_store(request, tmp_path) -> Iterator[Any]:
    if request.param == "sqlite":
        s = SQLiteStore(str(tmp_path / "push-races.db"))
        yield s
        s.close()
        return
    from tests.support.aws import moto_dynamodb_store

    with moto_dynamodb_store() as s, serialized_writes_and_reads():
        yield s


def _add(roles: Any, barrier: threading.Barrier, subscription: Any) -> Any:
    barrier.wait()
    try:
        return roles.add_subscription(subscription)
    except Exception as exc:  # noqa: BLE001 - the outcome under test
        return exc


def test_devices_added_at_once_never_pass_the_limit(racing_store):
    roles = racing_store.push_subscriptions
    for _ in range(ROUNDS):
        w = ws()
        for i in range(MAX_SUBSCRIPTIONS - 2):
            roles.add_subscription(sub(w, "p1", at=i))
        barrier = threading.Barrier(RACERS)
        racing = [sub(w, "p1", at=100 + i) for i in range(RACERS)]

        with ThreadPoolExecutor(max_workers=RACERS) as pool:
            outcomes = list(pool.map(lambda one, gate=barrier: _add(roles, gate, one), racing))
        added = [o for o in outcomes if not isinstance(o, Exception)]
        refused = [o for o in outcomes if isinstance(o, Exception)]
        assert len(added) == 2, outcomes
        assert all(isinstance(o, BadInput) and o.field == "endpoint" for o in refused), refused
        listed = roles.list_subscriptions(w, "p1")
        assert len(listed) == MAX_SUBSCRIPTIONS
        assert {s.id for s in listed} >= {s.id for s in added}
        assert not {s.id for s in listed} & {r.id for r, o in zip(racing, outcomes, strict=True)
                                             if isinstance(o, Exception)}
