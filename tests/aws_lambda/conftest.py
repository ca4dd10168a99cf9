"""A deployed stack in miniature: moto DynamoDB (table from template.yaml) and SES, and Lambda
instances invoked with API Gateway HTTP API v2 events through Mangum."""

from __future__ import annotations

import secrets

import pytest

from countersign import accounts, settings as settings_mod
from countersign.runtime import build
from tests.support.aws import REGION, boto_session, create_table_from_template
from tests.support.harness import SECRETS, all_toolsets, seed_notes


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
    """What one Lambda instance builds at import."""
    return build(settings_mod.load(env), toolsets=all_toolsets())


@pytest.fixture
def stack_tenant(aws):
    runtime = instance_runtime(aws)
    workspace, person = accounts.create_workspace(runtime.store, "Acme", "owner@example.com")
    token = accounts.create_connection(runtime.store, workspace.id, person.id, "Lambda agent").token
    seed_notes(runtime.store, workspace.id)
    return runtime, workspace, person, token
