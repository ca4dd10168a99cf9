"""Fixtures for the notification tests: both stores, three real senders, a settable clock.

Everything runs on loopback: SMTP goes to an aiosmtpd server on 127.0.0.1, SES to moto.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

import pytest

from countersign.notify import OutboxSender, SesSender, SmtpSender
from countersign.settings import Settings
from tests.support.aws import REGION
from tests.support.stores import store  # noqa: F401  (the both-stores fixture)

SES_DOMAIN = "example.com"
SES_FROM = f"countersign@{SES_DOMAIN}"
PUBLIC_URL = "https://confirm.example.test"


class Clock:
    """A clock the test moves: ``clock.now = 900``."""

    def __init__(self, now: float = 1_000_000):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path / "data", public_url=PUBLIC_URL, email_interval=900)


# -- SMTP: a real server on loopback -------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SmtpSink:
    """aiosmtpd handler: keeps every message it accepts."""

    def __init__(self):
        self.lock = threading.Lock()
        self.received: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.received.append((envelope.mail_from, list(envelope.rcpt_tos), bytes(envelope.original_content)))
        return "250 Message accepted for delivery"


@pytest.fixture(scope="session")
def _smtp_server():
    from aiosmtpd.controller import Controller

    sink = SmtpSink()
    controller = Controller(sink, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield sink, controller.port
    controller.stop()


@pytest.fixture
def smtp_server(_smtp_server):
    """(sink, port) with an empty inbox."""
    sink, port = _smtp_server
    with sink.lock:
        sink.received.clear()
    return sink, port


# -- SES: moto -----------------------------------------------------------------------------------


@pytest.fixture
def ses_client():
    """An SES v2 client on moto with ``example.com`` verified. Nests inside the moto DynamoDB store."""
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("sesv2", region_name=REGION)
        client.create_email_identity(EmailIdentity=SES_DOMAIN)
        yield client


def ses_sent() -> list[Any]:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ses import ses_backends

    return list(ses_backends[DEFAULT_ACCOUNT_ID][REGION].sent_messages)


# -- one fixture for "each sender" ---------------------------------------------------------------


def parse(raw: bytes | str) -> EmailMessage:
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    return message_from_bytes(data, policy=policy.default)  # type: ignore[return-value]


@dataclass
class Channel:
    """A working sender, a failing one of the same kind, and what was delivered."""

    name: str
    sender: Any
    failing: Any
    _sent: Callable[[], list[EmailMessage]] = field(repr=False)

    def sent(self) -> list[EmailMessage]:
        return self._sent()


@pytest.fixture(params=["outbox", "smtp", "ses"])
def channel(request, tmp_path) -> Channel:
    if request.param == "outbox":
        outbox = OutboxSender(tmp_path / "outbox")
        blocked = tmp_path / "not-a-folder"
        blocked.write_text("a file where the outbox folder should be")
        return Channel(
            "outbox", outbox, OutboxSender(blocked / "outbox"), lambda: [parse(p.read_bytes()) for p in outbox.files()]
        )
    if request.param == "smtp":
        sink, port = request.getfixturevalue("smtp_server")
        return Channel(
            "smtp",
            SmtpSender(f"smtp://127.0.0.1:{port}"),
            SmtpSender(f"smtp://127.0.0.1:{free_port()}", timeout=2),  # nobody listens there
            lambda: [parse(raw) for _, _, raw in sink.received],
        )
    client = request.getfixturevalue("ses_client")
    return Channel(
        "ses",
        SesSender(SES_FROM, client=client),
        SesSender("countersign@unverified.test", client=client),  # MessageRejected
        lambda: [parse(m.raw_data) for m in ses_sent()],
    )
