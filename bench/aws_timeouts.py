"""AWS timeouts bench: how long a DynamoDB call to a table that never answers takes to fail, with
the botocore configuration the product gives its clients (``countersign.platform.botocore_config``).

    .venv/bin/python bench/aws_timeouts.py

A loopback listener accepts every connection and never answers (no network beyond loopback). The
store's ``get_workspace`` is timed until botocore gives up, and the connections it opened are
counted (one per attempt). The baseline is measured in the same run against the same listener: a
bare socket that connects, sends a request and waits for the configured read timeout, as many
times as botocore attempted. ratio = botocore ÷ bare: what botocore adds around its attempts
(backoff between retries). The goal is a failure well inside a function's 20 s: 3 attempts of
2 s, not botocore's default 4 of 60 s. ``tests/unit/test_aws_config.py`` checks the configuration
and the attempts. It prints; it asserts nothing.
"""

from __future__ import annotations

import os
import socket
import sys
import time

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)

for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                    ("AWS_DEFAULT_REGION", "eu-west-1"), ("AWS_EC2_METADATA_DISABLED", "true")):
    os.environ[name] = value
os.environ.pop("AWS_PROFILE", None)

from botocore.exceptions import ReadTimeoutError  # noqa: E402

from countersign.platform.botocore_config import DYNAMODB_CONFIG  # noqa: E402
from countersign.store.dynamodb import DynamoDBStore  # noqa: E402
from tests.support.never_answers import NeverAnswers  # noqa: E402


def botocore_call(table: NeverAnswers) -> tuple[float, int, str]:
    host, port = table.address
    os.environ["AWS_ENDPOINT_URL"] = f"http://{host}:{port}"
    store = DynamoDBStore("countersign-bench", region_name="eu-west-1")
    before = len(table.accepted)
    started = time.perf_counter()
    try:
        store.workspaces.get_workspace("w_1")
        outcome = "answered (?)"
    except ReadTimeoutError:
        outcome = "ReadTimeoutError"
    except Exception as error:  # noqa: BLE001 - shown as it is
        outcome = type(error).__name__
    took = time.perf_counter() - started
    store.close()
    return took, len(table.accepted) - before, outcome


def bare_attempts(table: NeverAnswers, attempts: int, read_timeout: float) -> float:
    started = time.perf_counter()
    for _ in range(attempts):
        with socket.create_connection(table.address, timeout=read_timeout) as connection:
            connection.sendall(b"POST / HTTP/1.1\r\nHost: bench\r\nContent-Length: 0\r\n\r\n")
            try:
                connection.recv(1)
            except TimeoutError:
                pass
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    read_timeout = DYNAMODB_CONFIG.read_timeout
    configured = DYNAMODB_CONFIG.retries["total_max_attempts"]
    table = NeverAnswers()
    try:
        took, attempts, outcome = botocore_call(table)
        bare = bare_attempts(table, attempts, read_timeout)
    finally:
        table.close()
    print(f"DynamoDB client: connect {DYNAMODB_CONFIG.connect_timeout} s, read {read_timeout} s, "
          f"{configured} attempts in all")
    print(f"a table that never answers   {took:6.2f} s   {attempts} attempts   {outcome}")
    print(f"bare socket, {attempts} reads of {read_timeout} s  {bare:6.2f} s")
    print(f"botocore ÷ bare  {took / bare:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
