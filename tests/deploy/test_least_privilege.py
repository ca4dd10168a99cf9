"""template.yaml's IAM, least privilege: every function's policies are inline, exact and name real
actions on named resources; DynamoDB exactly what the store calls, on the table only; SES only as
the configured sender, never from the MCP function; the generated keys read only by ARN, and the
secret loader cached for the cold start.

Resolved with :func:`tests.deploy.example_stack.stack` (example parameters, names and ARNs).
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from tests.deploy.cfn import ACCOUNT, REGION
from tests.deploy.example_stack import (
    CONFIGURATION_SET,
    FUNCTIONS,
    HTTP_FUNCTIONS,
    ORIGIN_ARN,
    PACKAGE,
    SECRETS,
    SIGNING_ARN,
    STATE_ARN,
    TABLE_ARN,
    VAPID_ARN,
    stack,
    statement_actions,
    store_operations,
)
from tests.deploy.tools import SAM_VENV


def _iam_actions() -> dict[str, set[str]]:
    """Every IAM action AWS defines, per service prefix (cfn-lint's copy of the policy reference)."""
    found = glob.glob(
        str(SAM_VENV / "lib" / "python3*" / "site-packages" / "cfnlint" / "data" / "AdditionalSpecs" / "Policies.json")
    )
    if not found:
        pytest.fail("cfn-lint's IAM action list is missing: run scripts/bootstrap --sam", pytrace=False)
    data = json.loads(Path(found[0]).read_text())
    return {
        prefix: set(spec["Actions"]) for prefix, spec in data.items() if isinstance(spec, dict) and "Actions" in spec
    }


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_policies_are_inline_exact_and_name_real_actions(template, function):
    props = template["Resources"][function]["Properties"]
    for policy in props["Policies"]:
        assert isinstance(policy, dict) and "Statement" in policy, f"{function}: managed or SAM policy {policy!r}"
    statements = stack().statements(function)
    known = _iam_actions()
    for statement in statements:
        assert statement["Effect"] == "Allow"
        for action in statement_actions(statement):
            prefix, _, name = action.partition(":")
            assert "*" not in action, f"{function}: wildcard action {action}"
            assert name.lower() in known.get(prefix, set()), f"{function}: {action} is not an IAM action"
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        if statement["Sid"] == "StreamList":  # IAM cannot scope it; it lists stream ARNs, reads no record
            assert (function, statement_actions(statement), resources) == (
                "NotifierFunction", ["dynamodb:ListStreams"], ["*"])
            continue
        assert "*" not in resources, f"{function}: {statement['Sid']} on every resource"


def test_the_notifier_reads_this_tables_stream_only():
    """SAM's DynamoDB event would attach AWSLambdaDynamoDBExecutionRole (GetRecords and the rest on
    every stream of the account): the notifier's mapping is a resource of its own, and its role
    reads exactly this table's stream. Checked on SAM's own transform of the template."""
    from tests.deploy.test_operations import translated

    out = translated()
    role = out["NotifierFunctionRole"]["Properties"]
    assert not any("DynamoDB" in arn for arn in json.dumps(role.get("ManagedPolicyArns", [])).split('"'))
    statements = [s for policy in role["Policies"] for s in policy["PolicyDocument"]["Statement"]
                  if "Action" in s]  # not the Fn::If of the optional KMS key statement
    reads = [s for s in statements if any(a in ("dynamodb:GetRecords", "dynamodb:GetShardIterator",
                                                "dynamodb:DescribeStream") for a in statement_actions(s))]
    assert reads == [{"Sid": "Stream", "Effect": "Allow",
                      "Action": ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
                      "Resource": {"Fn::GetAtt": ["Table", "StreamArn"]}}]
    [mapping] = [r for r in out.values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert mapping["Properties"]["EventSourceArn"] == {"Fn::GetAtt": ["Table", "StreamArn"]}
    for name, resource in out.items():  # no other role reads any stream
        if resource["Type"] == "AWS::IAM::Role" and name != "NotifierFunctionRole":
            text = json.dumps(resource)
            assert "GetRecords" not in text and "DynamoDBExecutionRole" not in text, name


def test_a_customer_managed_key_is_decrypted_by_every_function_only_when_given():
    key = "arn:aws:kms:eu-west-1:123456789012:key/0123abcd-0000-0000-0000-000000000000"
    for function in FUNCTIONS:
        assert not [s for s in stack().statements(function) if s["Sid"] == "KmsKey"]
        [statement] = [s for s in stack(KmsKeyArn=key).statements(function) if s["Sid"] == "KmsKey"]
        assert statement == {"Sid": "KmsKey", "Effect": "Allow", "Action": "kms:Decrypt", "Resource": key}


# The notifier only delivers: it reads (GetItem, Query), leases, finishes and retries the
# notification and claims the email slot (UpdateItem), puts the digest check an email leaves for
# its interval's end (PutItem), releases the slot (DeleteItem). tests/deploy/test_rehearsal.py
# records its calls and checks each is allowed.
# Only the MCP function asks 2026 questions, whose counters are taken on condition that no card
# holds the request (a ConditionCheck item in their TransactWriteItems: store.cards.request_holder).
QUESTION_ONLY = {"dynamodb:ConditionCheckItem"}
NOT_CALLED = {"NotifierFunction": {"dynamodb:BatchGetItem"} | QUESTION_ONLY,  # it plans nothing
              "ApiFunction": QUESTION_ONLY, "SweeperFunction": QUESTION_ONLY}


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_dynamodb_exactly_what_the_store_calls_on_the_table_only(function):
    [table] = [s for s in stack().statements(function) if s["Sid"] == "Table"]
    assert set(statement_actions(table)) == store_operations() - NOT_CALLED.get(function, set())
    assert table["Resource"] == [TABLE_ARN, f"{TABLE_ARN}/index/*"]


# Who emails: the notifier and the sweeper (cards), the api function (sign-in links). The MCP
# function files cards with their notifications and sends nothing itself.
SENDERS = ("ApiFunction", "NotifierFunction", "SweeperFunction")


def test_the_mcp_function_may_not_send_email():
    assert not [s for s in stack().statements("McpFunction") if any(a.startswith("ses:") for a in statement_actions(s))]


@pytest.mark.parametrize("function", SENDERS)
def test_ses_only_as_the_configured_sender(function, template):
    statements = stack().statements(function)
    ses = [s for s in statements if any(a.startswith("ses:") for a in statement_actions(s))]
    assert len(ses) == 1
    [statement] = ses
    assert set(statement_actions(statement)) == {"ses:SendEmail", "ses:SendRawEmail"}
    assert statement["Resource"] == [f"arn:aws:ses:{REGION}:{ACCOUNT}:identity/example.com",
                                     f"arn:aws:ses:{REGION}:{ACCOUNT}:identity/countersign@example.com",
                                     f"arn:aws:ses:{REGION}:{ACCOUNT}:configuration-set/{CONFIGURATION_SET}"]
    assert statement["Condition"] == {"StringEquals": {"ses:FromAddress": "countersign@example.com"}}
    assert "SESCrudPolicy" not in json.dumps(template)
    # The sender the code uses is the one the policy allows.
    assert stack().environment(function)["COUNTERSIGN_MAIL"] == "ses:countersign@example.com"
    sender = (PACKAGE / "notify" / "ses.py").read_text()
    assert 'Content={"Raw"' in sender  # Raw content: authorised as ses:SendRawEmail too


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_keys_are_generated_secrets_read_only_by_arn(function, resources):
    s = stack()
    [keys] = [st for st in s.statements(function) if st["Sid"] == "Keys"]
    # The origin secret only where CloudFront's header is checked: the two HTTP functions. The VAPID
    # key where Web Push needs it: the API (Settings shows its public half, its test push), the
    # notifier (it pushes) and the sweeper (it pushes the cards held for quiet hours when they end).
    expected = [SIGNING_ARN, STATE_ARN] + ([ORIGIN_ARN] if function in HTTP_FUNCTIONS else []) + (
        [VAPID_ARN] if function in ("ApiFunction", "NotifierFunction", "SweeperFunction") else [])
    assert statement_actions(keys) == ["secretsmanager:GetSecretValue"] and sorted(keys["Resource"]) == sorted(expected)
    secret_statements = [
        st for st in s.statements(function) if any(a.startswith("secretsmanager:") for a in statement_actions(st))
    ]
    assert secret_statements == [keys]
    env = s.environment(function)
    assert env["COUNTERSIGN_SIGNING_KEY"] == SIGNING_ARN and env["COUNTERSIGN_STATE_KEYS"] == STATE_ARN
    assert env.get("COUNTERSIGN_ORIGIN_SECRET") == (ORIGIN_ARN if function in HTTP_FUNCTIONS else None)
    assert env["COUNTERSIGN_VAPID_KEY"] == VAPID_ARN
    for name in SECRETS:
        secret = resources[name]
        assert secret["Type"] == "AWS::SecretsManager::Secret"
        assert secret["Properties"]["GenerateSecretString"] == {"PasswordLength": 64, "ExcludePunctuation": True}
        assert "SecretString" not in secret["Properties"]
        assert secret["DeletionPolicy"] == secret["UpdateReplacePolicy"] == "Retain"


def test_the_secret_loader_is_cached_for_the_cold_start():
    source = (PACKAGE / "platform" / "secrets_manager.py").read_text()
    assert "parameters.get_secret(arn, max_age=3600)" in source
    for function in FUNCTIONS:
        assert stack().environment(function)["POWERTOOLS_PARAMETERS_MAX_AGE"] == "3600"
