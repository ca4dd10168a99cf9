"""botocore clients end well inside a function's 20 s (countersign.platform.botocore_config): short timeouts and
few attempts for DynamoDB, one retry at most for SES (a retried send can send twice)."""

from __future__ import annotations

import time

import pytest
from botocore.exceptions import ReadTimeoutError

from countersign.notify.ses import SesSender
from countersign.store.dynamodb import DynamoDBStore
from tests.support.never_answers import NeverAnswers


@pytest.fixture
def aws_env(monkeypatch):
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "eu-west-1"), ("AWS_EC2_METADATA_DISABLED", "true")):
        monkeypatch.setenv(name, value)


def test_the_clients_carry_the_timeouts(aws_env):
    store = DynamoDBStore("countersign-t", region_name="eu-west-1")
    config = store.client.meta.config
    assert (config.connect_timeout, config.read_timeout, config.tcp_keepalive) == (1, 2, True)
    assert config.retries == {"mode": "standard", "total_max_attempts": 3}
    store.close()
    ses = SesSender("countersign@example.com").client.meta.config
    assert (ses.read_timeout, ses.retries) == (5, {"mode": "standard", "total_max_attempts": 2})



def test_a_table_that_never_answers_fails_after_three_attempts_of_its_read_timeout(aws_env, monkeypatch):
    """3 attempts, each ended by the read timeout (test_the_clients_carry_the_timeouts: 2 s), not 4
    of botocore's default 60 s. bench/aws_timeouts.py measures how long that takes."""
    table = NeverAnswers()
    monkeypatch.setenv("AWS_ENDPOINT_URL", table.url)
    store = DynamoDBStore("countersign-t", region_name="eu-west-1")
    started = time.monotonic()
    try:
        with pytest.raises(ReadTimeoutError):
            store.workspaces.get_workspace("w_1")
        took = time.monotonic() - started
    finally:
        store.close()
        table.close()
    assert len(table.accepted) == 3  # total_max_attempts, each on a fresh connection
    assert took < 60, took  # not even one attempt at botocore's default read timeout
