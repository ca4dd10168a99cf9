"""A deployed stack in miniature: moto DynamoDB (table from template.yaml) and SES, and Lambda
instances invoked with API Gateway REST API (payload 1.0) events through Mangum, with the table's stream
(read from moto) and schedule events."""

from __future__ import annotations

import contextlib
import secrets
from email import message_from_string, policy
from email.message import EmailMessage

import anyio
import pytest
from botocore.exceptions import ClientError

from countersign import settings as settings_mod
from countersign.gate.ask import request_card
from countersign.identity import accounts
from countersign.identity.principal import Principal
from countersign.runtime import build
from tests.support.aws import REGION, boto_session, create_table_from_template
from tests.support.harness import SECRETS, all_toolsets, seed_notes
from tests.support.streams import TableStream


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/aws_lambda/" in str(item.fspath):
            item.add_marker(pytest.mark.lambda_)


@pytest.fixture
def aws(tmp_path):
    """Environment of a deployed function, on moto."""
    from moto import mock_aws

    with mock_aws():
        client = boto_session().client("dynamodb", region_name=REGION)
        table = create_table_from_template(client, "countersign-stack")
        boto_session().client("sesv2", region_name=REGION).create_email_identity(EmailIdentity="example.com")
        env = {
            "COUNTERSIGN_STORE": f"dynamodb://{table}",
            "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com",
            "COUNTERSIGN_MAIL": "ses:countersign@example.com",
            "COUNTERSIGN_SIGNING_KEY": secrets.token_urlsafe(32),
            "COUNTERSIGN_STATE_KEYS": secrets.token_urlsafe(48),
            "COUNTERSIGN_DATA": str(tmp_path),
        }
        SECRETS.update({env["COUNTERSIGN_SIGNING_KEY"], env["COUNTERSIGN_STATE_KEYS"]})
        yield env
        # every ticket the stack signed joins the end-of-run scan of responses and logs
        for page in client.get_paginator("scan").paginate(TableName=table):
            for item in page["Items"]:
                if "ticket" in item:
                    SECRETS.update({item["ticket"]["S"], *item["ticket"]["S"].split(".")})


def instance_runtime(env):
    """What one Lambda instance builds at import: no function emails right after filing (the
    table's stream drives the notifier function, countersign.handlers.*); one request at a time,
    so a call's work runs on the event loop."""
    return build(settings_mod.load(env), toolsets=all_toolsets(), deliver_inline=False, one_request_at_a_time=True)


def sent_mail() -> list[EmailMessage]:
    """Every message moto's SES accepted, parsed (the SES sender sends raw RFC 822)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ses import ses_backends

    return [message_from_string(m.raw_data, policy=policy.default)
            for m in ses_backends[DEFAULT_ACCOUNT_ID][REGION].sent_messages if getattr(m, "raw_data", None)]


@pytest.fixture
def stream(aws):
    """The table's stream, read from now on (the event source mapping starts at LATEST)."""
    reader = TableStream(boto_session(), aws["COUNTERSIGN_STORE"].removeprefix("dynamodb://"))
    reader.skip()
    return reader


@pytest.fixture
def stack_tenant(aws):
    runtime = instance_runtime(aws)
    workspace, person = accounts.create_workspace(runtime.store.workspaces, "Acme", "owner@example.com")
    token = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, workspace.id, person.id,
                                       "Lambda agent").token
    seed_notes(runtime.store, workspace.id)
    return runtime, workspace, person, token


class Person:
    """A person with their own workspace, notes and agent connection, who files cards through the
    real gate (``request_confirmation``'s path) on the stack's store."""

    def __init__(self, runtime, email: str):
        self.runtime = runtime
        self.workspace, self.person = accounts.create_workspace(runtime.store.workspaces, email.split("@")[0].title(),
                                                                email)
        connection = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, self.workspace.id,
                                                self.person.id, "agent").connection
        seed_notes(runtime.store, self.workspace.id)
        self.email = email
        self.principal = Principal(runtime.store.workspaces.get_workspace(self.workspace.id), self.person, connection)

    def file(self, text: str, note: str = "n1", tool: str = "publish_note") -> str:
        """File a card (held, pending) and return its id."""
        held = anyio.run(request_card, self.runtime.desk, self.principal, tool, {"note_id": note, "text": text})
        assert held["status"] == "pending", held
        return held["confirmationId"]

    def card(self, card_id: str):
        return self.runtime.store.cards.get_card(self.workspace.id, card_id, self.runtime.desk.now())


def notification(runtime, card_id: str):
    return runtime.store.outbox.get_notification(card_id)


def move_clock(runtime, seconds: int) -> None:
    """Move the runtime's clock on (the desk's; the notifier follows it)."""
    current = runtime.desk.clock
    runtime.desk.clock = lambda: current() + seconds


@contextlib.contextmanager
def ses_refuses(runtime, address: str):
    """SES answers ``Throttling`` for mail to ``address`` (and nothing is sent); others go through."""
    client = runtime.notifier.sender.client
    original = client.send_email

    def send_email(**kwargs):
        if address in kwargs["Destination"]["ToAddresses"]:
            raise ClientError({"Error": {"Code": "Throttling", "Message": "Maximum sending rate exceeded."}},
                              "SendEmail")
        return original(**kwargs)

    client.send_email = send_email
    try:
        yield
    finally:
        del client.send_email
