"""The deployed-stack rehearsal: both Lambda entry points, each in its own process with the
environment template.yaml gives it, against moto (DynamoDB, SES, Secrets Manager), through a
whole confirmation:

    operator: countersign workspace create / connection create  (CLI, AWS credentials, the table)
    agent:    suppress_domain over /mcp  -> held: a card, an email to the owner      (McpFunction)
    person:   sign-in link by email, sign in, list, confirm over /api                (ApiFunction)
    agent:    get_confirmation_status over /mcp -> completed                          (McpFunction)

Then: every AWS call each function made is allowed by that function's IAM statements in the
template (and every statement is used); every environment variable its code reads is set; the
handlers named in the template import and are callable; logs are JSON with the request's
correlation id and hold no ticket, token, code or key; the metrics went out as EMF.
"""

from __future__ import annotations

import json
import logging
import re

import anyio
import pytest

from countersign.store.dynamodb import DynamoDBStore
from tests.deploy.cfn import iam_requests, allowed, Unsupported
from tests.deploy.rehearsal import FROM_ADDRESS, OWNER, MotoStack, mail_text, requirement_closure
from tests.support.apigw import LambdaTransport, http_event, response_body
from tests.support.harness import mcp_client

FUNCTIONS = ("McpFunction", "ApiFunction")
ENV_NAME = re.compile(r"\b((?:COUNTERSIGN|POWERTOOLS)_[A-Z0-9_]+)\b")


@pytest.fixture(scope="module")
def moto_stack(tmp_path_factory):
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # the moto server's access log
    stack = MotoStack(tmp_path_factory.mktemp("rehearsal"))
    try:
        yield stack
    finally:
        stack.close()


@pytest.fixture(scope="module")
def rehearsal(moto_stack):
    """Run the whole confirmation once; the tests below look at what it left."""
    stack = moto_stack
    mcp, api = stack.start("McpFunction"), stack.start("ApiFunction")  # both import in parallel
    record: dict = {"mcp": mcp, "api": api, "stack": stack}

    workspace = stack.cli("workspace", "create", "--store", f"dynamodb://{stack.stack.refs['Table']}",
                          "--name", "Acme", "--owner-email", OWNER, "--owner-name", "Olive")
    connection = stack.cli("connection", "create", "--store", f"dynamodb://{stack.stack.refs['Table']}",
                           "--email", OWNER, "--name", "Claude on laptop")
    assert connection["mcp_url"] == f"{stack.public_url}/mcp"
    record.update(workspace=workspace, connection=connection, token=connection["token"])
    for instance in (mcp, api):
        ready = instance.wait_ready()
        assert ready["ready"], ready.get("error")

    async def agent(tool: str, arguments: dict) -> dict:
        async with mcp_client(connection["mcp_url"], connection["token"], transport=LambdaTransport([mcp])) as client:
            result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        return result.structured_content

    # The agent asks; the write is held as a card and the owner is emailed.
    held = anyio.run(agent, "suppress_domain", {"domain": "globex.com"})
    assert held["status"] == "pending", held
    card_id = held["confirmationId"]
    assert held["confirmationUrl"] == f"{stack.public_url}/confirm?card={card_id}"
    record.update(held=held, card_id=card_id)
    [card_mail] = [m for m in stack.sent_mail() if m["To"] == OWNER]
    assert FROM_ADDRESS in card_mail["From"] and f"{stack.public_url}/confirm" in mail_text(card_mail)

    # The person signs in by email link, as the page does.
    page = {"origin": stack.public_url, "content-type": "application/json"}
    asked = api.invoke(http_event("POST", "/api/signin/request", headers=page, body=json.dumps({"email": OWNER}),
                                  base64_body=True))
    assert asked["statusCode"] == 202, asked
    # Which address the sign-in rate limit counted (the table, read from outside the functions).
    limits = stack.dynamodb.scan(TableName=stack.stack.refs["Table"], FilterExpression="begins_with(pk, :p)",
                                 ExpressionAttributeValues={":p": {"S": "LIMIT#signin-address:"}})["Items"]
    record["limit_keys"] = sorted(item["pk"]["S"] for item in limits)
    [signin_mail] = [m for m in stack.sent_mail() if "sign-in" in m["Subject"]]
    link = re.search(r"https://\S+/signin#token=(\S+)", mail_text(signin_mail))
    assert link, mail_text(signin_mail)
    signin_token = link.group(1)
    done = api.invoke(http_event("POST", "/api/signin/complete", headers=page,
                                 body=json.dumps({"token": signin_token})))
    assert done["statusCode"] == 200, done
    [cookie] = done["cookies"]
    session_id = cookie.split(";", 1)[0].split("=", 1)[1]
    csrf = json.loads(response_body(done))["csrfToken"]
    signed_in = {**page, "cookie": cookie.split(";", 1)[0], "x-csrf-token": csrf}
    record.update(signin_token=signin_token, session_id=session_id, csrf=csrf)

    listed = api.invoke(http_event("GET", "/api/cards", headers=signed_in))
    assert listed["statusCode"] == 200 and [c["id"] for c in json.loads(response_body(listed))["cards"]] == [card_id]
    confirmed = api.invoke(http_event("POST", f"/api/cards/{card_id}/confirm", headers=signed_in))
    assert confirmed["statusCode"] == 200, response_body(confirmed)
    assert json.loads(response_body(confirmed))["state"] == "completed"

    # The agent polls and sees the action ran.
    status = anyio.run(agent, "get_confirmation_status", {"confirmation_id": card_id})
    assert status["status"] == "completed", status
    record["status"] = status

    # What must never reach a log line, then the proof that it would be redacted if it did.
    store = DynamoDBStore(stack.stack.refs["Table"], client=stack.dynamodb)
    ticket = store.get_card(workspace["workspace_id"], card_id, 0).ticket
    record["secrets"] = {
        "connection token": connection["token"], "sign-in token": signin_token, "session id": session_id,
        "csrf token": csrf, "ticket": ticket, "ticket payload": ticket.split(".")[0],
        "ticket signature": ticket.split(".")[1], "signing key": stack.key_values["signing"],
        "state key": stack.key_values["state"], "origin secret": stack.key_values["origin"],
    }
    for instance in (mcp, api):
        instance.log(f"ticket={ticket} Authorization: Bearer {connection['token']} key {stack.key_values['state']}")
        instance.log(f"confirmation code {signin_token[:11]} for the sign-in link #token={signin_token}")
    record["calls"] = {"McpFunction": mcp.calls(), "ApiFunction": api.calls()}
    return record


def test_a_whole_confirmation_across_both_functions(rehearsal):
    assert rehearsal["status"]["status"] == "completed"
    assert rehearsal["mcp"].invocations >= 4 and rehearsal["api"].invocations == 4


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_handler_named_in_the_template_imports_and_is_callable(rehearsal, function):
    instance = rehearsal["mcp" if function == "McpFunction" else "api"]
    ready = instance.wait_ready()
    assert ready["ready"] and ready["callable"], ready
    assert instance.handler == rehearsal["stack"].stack.function_property(function, "Handler")


def test_cloudfront_proves_itself_and_the_viewer_address_is_limited(rehearsal):
    """The distribution's X-Countersign-Origin (the template's dynamic reference, resolved from
    Secrets Manager) matches what the api function read through COUNTERSIGN_ORIGIN_SECRET, so the
    sign-in was counted against the viewer's address, not the edge it came through."""
    from tests.deploy.rehearsal import EDGE
    from tests.support.apigw import http_event as event

    stack = rehearsal["stack"]
    assert stack.origin_headers == {"x-countersign-origin": stack.key_values["origin"]}
    viewer = event("GET", "/")["requestContext"]["http"]["sourceIp"]
    assert viewer != EDGE
    assert rehearsal["limit_keys"] == [f"LIMIT#signin-address:{viewer}"]


def test_the_api_function_never_imports_mcp(rehearsal):
    assert rehearsal["mcp"].wait_ready()["mcp_imported"] is True
    assert rehearsal["api"].wait_ready()["mcp_imported"] is False


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_aws_call_is_allowed_by_the_function_policy(rehearsal, function):
    stack = rehearsal["stack"].stack
    statements = stack.statements(function)
    calls = rehearsal["calls"][function]
    assert calls, "no AWS call was recorded"
    denied = []
    for call in calls:
        try:
            requests = iam_requests(call)
        except Unsupported as exc:
            pytest.fail(str(exc))
        denied += [(call["service"], call["operation"], r) for r in requests if not allowed(statements, r)]
    assert not denied, f"{function} made calls its template policy does not allow: {denied}"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_each_function_made_the_calls_a_confirmation_needs(rehearsal, function):
    """Keys from Secrets Manager at import (one read per secret: cached), the store, and SES."""
    calls = rehearsal["calls"][function]
    operations = {(c["service"], c["operation"]) for c in calls}
    secrets = [c for c in calls if c["operation"] == "GetSecretValue"]
    refs = rehearsal["stack"].stack.refs
    read = ["SigningKeySecret", "StateKeysSecret"] + (["OriginVerifySecret"] if function == "ApiFunction" else [])
    assert sorted(c["params"]["SecretId"] for c in secrets) == sorted(refs[name] for name in read)
    assert ("sesv2", "SendEmail") in operations  # the card email (mcp), the sign-in link (api)
    assert {("dynamodb", "GetItem"), ("dynamodb", "TransactWriteItems")} <= operations


# Read by modules both functions load (settings, runtime) but deliberately left unset where it has
# no use: only ApiFunction checks CloudFront's origin header, so only it may read that secret.
OPTIONAL_HERE = {"McpFunction": {"COUNTERSIGN_ORIGIN_SECRET"}, "ApiFunction": set()}
# Read only by the crash tests' fault hook (countersign/faults.py): never set in a deployment.
TEST_ONLY = {"COUNTERSIGN_FAULT"}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_environment_variable_the_code_reads_is_set(rehearsal, function):
    """Grep every countersign module the function actually loaded for the variables it names."""
    instance = rehearsal["mcp" if function == "McpFunction" else "api"]
    env = rehearsal["stack"].stack.environment(function)
    read: dict[str, str] = {}
    for path in instance.wait_ready()["countersign_files"]:
        with open(path, encoding="utf-8") as fh:
            for name in ENV_NAME.findall(fh.read()):
                read.setdefault(name, path)
    assert "COUNTERSIGN_STORE" in read and "POWERTOOLS_SERVICE_NAME" in read
    missing = {name: where for name, where in read.items()
               if name not in env and name not in OPTIONAL_HERE[function] | TEST_ONLY}
    assert not TEST_ONLY & set(env)
    assert OPTIONAL_HERE[function] <= set(read) and not OPTIONAL_HERE[function] & set(env)
    assert not missing, f"{function} reads variables template.yaml does not set: {missing}"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_logs_are_json_with_the_request_correlation_id(rehearsal, function):
    instance = rehearsal["mcp" if function == "McpFunction" else "api"]
    lines = [json.loads(line) for line in instance.log_text().splitlines() if line.strip()]
    logs = [line for line in lines if "level" in line]
    handled = [line for line in logs if line.get("message") == "handled"]
    assert len(handled) == instance.invocations
    assert [line["correlation_id"] for line in handled] == instance.request_ids
    assert all(line["service"] == "countersign" and line["function_name"] == f"countersign-{function}"
               for line in handled)
    assert all(set(line) >= {"method", "path", "status", "ms"} for line in handled)


def test_no_ticket_token_code_or_key_reaches_a_log_line(rehearsal):
    secrets = rehearsal["secrets"]
    for instance in (rehearsal["mcp"], rehearsal["api"]):
        text = instance.log_text() + instance.stderr_path.read_text()
        assert "rehearsal: ticket=[redacted]" in text and "Bearer [redacted]" in text  # the planted lines
        assert "confirmation code [redacted]" in text and "#token=[redacted]" in text
        leaked = [name for name, value in secrets.items() if value in text]
        assert not leaked, f"{instance.function} logged: {leaked}"


def test_metrics_are_emitted_as_emf(rehearsal):
    def metrics(instance) -> dict[str, float]:
        out: dict[str, float] = {}
        for line in instance.log_text().splitlines():
            blob = json.loads(line) if line.startswith("{") else {}
            if "_aws" not in blob:
                continue
            [directive] = blob["_aws"]["CloudWatchMetrics"]
            assert directive["Namespace"] == "countersign"
            for metric in directive["Metrics"]:
                value = blob[metric["Name"]]
                out[metric["Name"]] = out.get(metric["Name"], 0) + (sum(value) if isinstance(value, list) else value)
        return out

    mcp, api = metrics(rehearsal["mcp"]), metrics(rehearsal["api"])
    assert mcp.get("card_filed") == 1 and mcp.get("email_sent") == 1 and mcp.get("ColdStart") == 1, mcp
    assert api.get("card_confirmed") == 1 and api.get("ColdStart") == 1, api


# Granted but not reached by one card confirmed on the page (the static test in test_template.py
# ties the DynamoDB actions to the store's code): McpFunction spends confirmation codes by deleting them.
UNUSED_HERE = {"McpFunction": {"dynamodb:deleteitem"}, "ApiFunction": set()}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_granted_action_is_used(rehearsal, function):
    """Least privilege, the other way round: the policy grants nothing the functions do not call."""
    stack = rehearsal["stack"].stack
    used = {r.action.lower() for call in rehearsal["calls"][function] for r in iam_requests(call)}
    granted = {a.lower() for s in stack.statements(function)
               for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])}
    assert used <= granted
    assert granted - used == UNUSED_HERE[function]


@pytest.mark.parametrize("function,kind", [("McpFunction", "mcp"), ("ApiFunction", "api")])
def test_the_function_requirements_cover_everything_it_imports(rehearsal, function, kind):
    """infra/requirements-KIND.txt is all the bundle gets. The workers run with every other
    installed distribution made unimportable (as in the bundle: optional imports such as certifi,
    rich or python-multipart fail quietly there too), so whatever the import pulled in comes
    from the requirements; and the api function's requirements never bring the MCP SDK."""
    import importlib.metadata as md

    from packaging.utils import canonicalize_name

    from tests.support.aws import REPO_ROOT

    instance = rehearsal["mcp" if function == "McpFunction" else "api"]
    assert instance.blocked, "the worker ran with every installed distribution available"
    by_module = md.packages_distributions()
    imported = {canonicalize_name(d) for m in instance.wait_ready()["top_level"] if m != "_distutils_hack"
                for d in by_module.get(m, [])} - {"countersign"}
    closure = requirement_closure(REPO_ROOT / "infra" / f"requirements-{kind}.txt")
    assert imported, "no third-party import recorded?"
    assert imported <= closure, f"{function} imports {sorted(imported - closure)} that its requirements do not bring"
    if kind == "api":
        assert "mcp" not in closure and "uvicorn" not in closure


def test_the_rehearsal_table_is_the_template_table(rehearsal):
    """The moto table the functions ran against was built from template.yaml's own definition."""
    from countersign.store import table

    stack = rehearsal["stack"]
    described = stack.dynamodb.describe_table(TableName=stack.stack.refs["Table"])["Table"]
    props = stack.stack.template["Resources"][table.LOGICAL_ID]["Properties"]
    assert described["KeySchema"] == props["KeySchema"] == table.DEFINITION["KeySchema"]
    assert [g["IndexName"] for g in described["GlobalSecondaryIndexes"]] == [table.GSI1]
    assert described["StreamSpecification"]["StreamViewType"] == props["StreamSpecification"]["StreamViewType"]
    ttl = stack.dynamodb.describe_time_to_live(TableName=stack.stack.refs["Table"])["TimeToLiveDescription"]
    assert ttl["AttributeName"] == props["TimeToLiveSpecification"]["AttributeName"] == table.TTL_ATTRIBUTE
