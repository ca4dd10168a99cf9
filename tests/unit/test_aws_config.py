"""botocore clients end well inside a function's 20 s (countersign.aws_config): short timeouts and
few attempts for DynamoDB, one retry at most for SES (a retried send can send twice)."""

from __future__ import annotations

import socket
import time

import pytest

from countersign.notify.ses import SesSender
from countersign.store.dynamodb import DynamoDBStore


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


def test_a_table_that_never_answers_fails_within_seconds(aws_env, monkeypatch):
    """A loopback listener that accepts and never answers: 3 attempts of 2 s, not 4 of 60."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{listener.getsockname()[1]}")
    store = DynamoDBStore("countersign-t", region_name="eu-west-1")
    started = time.monotonic()
    with pytest.raises(Exception, match="(?i)timeout|timed out"):
        store.get_workspace("w_1")
    took = time.monotonic() - started
    store.close()
    listener.close()
    assert 5 < took < 12, took
