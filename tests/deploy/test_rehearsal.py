"""The deployed-stack rehearsal: the four Lambda entry points, each in its own process with the
environment template.yaml gives it, against moto (DynamoDB, SES, Secrets Manager), through a
whole confirmation:

    operator: countersign workspace create / connection create  (CLI, AWS credentials, the table)
    agent:    suppress_domain over /mcp  -> held: a card and its notification     (McpFunction)
    stream:   the notification's INSERT (the template's filter) -> the owner's email (NotifierFunction)
    person:   sign-in link by email, sign in, list, confirm over /api                (ApiFunction)
    agent:    get_confirmation_status over /mcp -> completed                          (McpFunction)
    OAuth:    an agent connects by OAuth, routed as the template routes it (tests/deploy/oauth_flow.py)
                                                                (McpFunction, ApiFunction)
    upkeep:   a withdrawn card, a lost stream record, a dead runner (tests/deploy/upkeep.py)
                                                                (NotifierFunction, SweeperFunction)
    protection: direct calls refused (403), a bounce that suppresses the owner's address, a burst
              from one connection answered 429 while another and the page go on (tests/deploy/protection.py)

Then: every AWS call each function made is allowed by that function's IAM statements in the
template (and every statement is used); every environment variable its code reads is set; the
handlers named in the template import and are callable; logs are JSON with the request's
correlation id and hold no ticket, token, code or key; the metrics went out as EMF.
"""

from __future__ import annotations

import json
import re

import pytest

from countersign.store.dynamodb import DynamoDBStore
from tests.deploy.cfn import Unsupported, allowed, iam_requests
from tests.deploy.rehearsal import FROM_ADDRESS, KIND, mail_text, requirement_closure

FUNCTIONS = ("McpFunction", "ApiFunction", "NotifierFunction", "SweeperFunction")
ENV_NAME = re.compile(r"\b((?:COUNTERSIGN|POWERTOOLS)_[A-Z0-9_]+)\b")


def test_a_whole_confirmation_across_the_functions(rehearsal):
    instances = rehearsal["instances"]
    assert rehearsal["status"]["status"] == "completed"
    assert rehearsal["notified"] == {"batchItemFailures": []}
    assert instances["McpFunction"].invocations >= 4 and instances["ApiFunction"].invocations == 4 + 2 + 6
    assert instances["NotifierFunction"].invocations == 2 + 2 and instances["SweeperFunction"].invocations == 1


def test_the_notifier_and_the_sweeper_deliver_what_is_owed_and_settle_what_stopped(rehearsal):
    act = rehearsal["upkeep"]
    # Withdrawn before the notifier ran: done, nothing sent, the email slot released (DeleteItem).
    assert act["withdrawn_result"] == {"batchItemFailures": []}
    assert act["withdrawn_outcome"] == "email_nothing_pending"
    # The sweep settled the dead runner's card and delivered both notifications still owed: one
    # email (the lost record's card; the other card had just failed), the other rate limited.
    assert act["sweep"] == {"settled": 1, "delivered": 2, "webhooks": 0, "escalated": 0}
    assert act["lost"].outcome == "email_sent"
    [mail] = act["second_mail"]
    assert FROM_ADDRESS in mail["From"] and "hooli.com" in mail_text(mail)
    stopped = act["stopped"]
    assert stopped.state.value == "failed"
    assert stopped.result["done"] == ["suppress"] and stopped.result["not_done"] == ["notify_list"]


def test_a_removed_member_is_refused_at_once_and_their_waiting_card_withdrawn(rehearsal):
    upkeep = rehearsal["upkeep"]
    assert upkeep["colleague"]["role"] == "member" and upkeep["colleague_ping"] == 200
    removed = upkeep["removed"]
    assert removed["removed"]["email"] == "colleague@example.com"
    assert (removed["revoked_connections"], removed["withdrawn_cards"], removed["removed_passkeys"]) == (1, 1, 0)
    assert upkeep["removed_card"].state.value == "withdrawn"
    assert upkeep["removed_ping"] == 401
    assert [m["email"] for m in upkeep["members_after"]["members"]] == ["second@example.com"]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_handler_named_in_the_template_imports_and_is_callable(rehearsal, function):
    instance = rehearsal["instances"][function]
    ready = instance.wait_ready()
    assert ready["ready"] and ready["callable"], ready
    assert instance.handler == rehearsal["stack"].stack.function_property(function, "Handler")


def test_an_agent_connects_by_oauth_through_the_routes_of_the_template(rehearsal):
    """Discovery, registration, token and refresh reached McpFunction, the consent ApiFunction,
    by the template's own CloudFront behaviours and REST API methods; the agent's calls worked."""
    oauth = rehearsal["oauth"]
    assert "campaigns" in oauth["first"] and oauth["first"] == oauth["second"]
    consent = [path for function, path in oauth["routed"] if function == "ApiFunction"]
    assert len(consent) == 2 and all(path.startswith("/api/oauth/requests/") for path in consent)
    assert {"/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server",
            "/oauth/register", "/oauth/authorize", "/oauth/token"} <= {
        path for function, path in oauth["routed"] if function == "McpFunction"}
    stack = rehearsal["stack"]
    store = DynamoDBStore(stack.stack.refs["Table"], client=stack.dynamodb)
    [connection] = [c for c in store.connections.list_connections(rehearsal["workspace"]["workspace_id"])
                    if c.name == oauth["client_name"]]
    assert not connection.revoked
    assert connection.id in store.connections.connections_last_used(rehearsal["workspace"]["workspace_id"])


def test_aws_waf_on_the_rest_api_lets_in_exactly_what_cloudfront_sends(rehearsal):
    """OriginWebAcl's rule, resolved from the same Secrets Manager secret as the distribution's
    origin header, allows exactly the value CloudFront sends: the requests the rehearsal made
    through CloudFront would pass AWS WAF, a request without it would not."""
    stack = rehearsal["stack"]
    assert stack.origin_web_acl_allows() == [stack.origin_headers["x-countersign-origin"]]


def test_cloudfront_proves_itself_and_the_viewer_address_is_limited(rehearsal):
    """The distribution's X-Countersign-Origin (the template's dynamic reference, resolved from
    Secrets Manager) matches what the api function read through COUNTERSIGN_ORIGIN_SECRET, so the
    sign-in was counted against the viewer's address, not the edge it came through."""
    from tests.deploy.rehearsal import EDGE
    from tests.support.apigw import http_event as event

    stack = rehearsal["stack"]
    assert stack.origin_headers == {"x-countersign-origin": stack.key_values["origin"]}
    viewer = event("GET", "/")["requestContext"]["identity"]["sourceIp"]
    assert viewer != EDGE
    assert rehearsal["limit_keys"] == [f"LIMIT#signin-address:{viewer}"]


def test_only_the_mcp_function_imports_mcp(rehearsal):
    for function, instance in rehearsal["instances"].items():
        assert instance.wait_ready()["mcp_imported"] is (function == "McpFunction"), function
    for function in ("NotifierFunction", "SweeperFunction"):  # no web framework either
        top = set(rehearsal["instances"][function].wait_ready()["top_level"])
        assert not top & {"fastapi", "starlette", "mangum", "uvicorn", "mcp_types"}, function


@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_full_collection_walks_none_of_what_the_import_built(rehearsal, function):
    """The instance's start-up heap (tens of thousands of objects: a 15-25 ms walk at every full
    collection, inside some request) is frozen once built: a collection walks only what came after."""
    ready = rehearsal["instances"][function].wait_ready()
    assert ready["gc_frozen"] > 50_000, ready["gc_frozen"]
    assert ready["gc_tracked"] < ready["gc_frozen"] // 100, (ready["gc_tracked"], ready["gc_frozen"])


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


# The store calls each function's part needs (beyond these, whatever its policy allows).
NEEDED = {
    "McpFunction": {"GetItem", "TransactWriteItems"},  # read the connection, file the cards
    "ApiFunction": {"GetItem", "TransactWriteItems"},  # sessions, the confirm click
    "NotifierFunction": {"GetItem", "Query", "UpdateItem", "DeleteItem"},  # lease, slot, compose, release
    "SweeperFunction": {"Query", "UpdateItem", "TransactWriteItems"},  # find, deliver, settle
}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_each_function_made_the_calls_a_confirmation_needs(rehearsal, function):
    """Keys from Secrets Manager at import (one read per secret: cached), the store, and SES:
    the card emails from the notifier and the sweeper, the sign-in link from the api function,
    none from the MCP function (the stream carries its cards' notifications)."""
    calls = rehearsal["calls"][function]
    operations = {(c["service"], c["operation"]) for c in calls}
    secrets = [c for c in calls if c["operation"] == "GetSecretValue"]
    refs = rehearsal["stack"].stack.refs
    # The HTTP functions also read the origin secret, current and previous (AWSPREVIOUS: a rotation).
    http = function in ("McpFunction", "ApiFunction")
    read = ["SigningKeySecret", "StateKeysSecret"] + (["OriginVerifySecret"] * 2 if http else [])
    assert sorted(c["params"]["SecretId"] for c in secrets) == sorted(refs[name] for name in read)
    assert (("sesv2", "SendEmail") in operations) is (function != "McpFunction")
    assert {("dynamodb", op) for op in NEEDED[function]} <= operations


# Read by modules every function loads (settings, runtime) but deliberately left unset where it has
# no use: only the HTTP functions check CloudFront's origin header, so only they may read that secret.
OPTIONAL_HERE = {"McpFunction": set(), "ApiFunction": set(),
                 "NotifierFunction": {"COUNTERSIGN_ORIGIN_SECRET"}, "SweeperFunction": {"COUNTERSIGN_ORIGIN_SECRET"}}
# Read only by the crash tests' fault hook (countersign/core/crash_points.py): never set in a deployment.
TEST_ONLY = {"COUNTERSIGN_FAULT"}
# Parsed with every setting, used only by the local server (whose proxies it names): never set here.
# The gateway's settings (docs/gateway.md) have defaults fit for Lambda (stdio off there): set them
# in the template only to change them.
# So has Slack's Web API URL (Slack's own; only the tests point it elsewhere).
LOCAL_ONLY = {"COUNTERSIGN_TRUSTED_PROXIES", "COUNTERSIGN_UPSTREAM_TIMEOUT", "COUNTERSIGN_UPSTREAM_PRIVATE",
              "COUNTERSIGN_UPSTREAM_STDIO", "COUNTERSIGN_SLACK_API_URL"}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_environment_variable_the_code_reads_is_set(rehearsal, function):
    """Grep every countersign module the function actually loaded for the variables it names."""
    instance = rehearsal["instances"][function]
    env = rehearsal["stack"].stack.environment(function)
    read: dict[str, str] = {}
    for path in instance.wait_ready()["countersign_files"]:
        with open(path, encoding="utf-8") as fh:
            for name in ENV_NAME.findall(fh.read()):
                read.setdefault(name, path)
    assert "COUNTERSIGN_STORE" in read and "POWERTOOLS_SERVICE_NAME" in read
    missing = {name: where for name, where in read.items()
               if name not in env and name not in OPTIONAL_HERE[function] | TEST_ONLY | LOCAL_ONLY}
    assert not (TEST_ONLY | LOCAL_ONLY) & set(env)
    assert OPTIONAL_HERE[function] <= set(read) and not OPTIONAL_HERE[function] & set(env)
    assert not missing, f"{function} reads variables template.yaml does not set: {missing}"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_logs_are_json_with_the_request_correlation_id(rehearsal, function):
    """One ``handled`` line per invocation, correlated: API Gateway's request id (HTTP), the
    first stream record's eventID (notifier), the schedule event's id (sweeper)."""
    instance = rehearsal["instances"][function]
    lines = [json.loads(line) for line in instance.log_text().splitlines() if line.strip()]
    logs = [line for line in lines if "level" in line]
    handled = [line for line in logs if line.get("message") == "handled"]
    assert len(handled) == instance.invocations
    assert [line["correlation_id"] for line in handled] == instance.request_ids
    assert all(line["service"] == "countersign" and line["function_name"] == f"countersign-{function}"
               for line in handled)
    fields = {"McpFunction": {"method", "path", "status"}, "ApiFunction": {"method", "path", "status"},
              "NotifierFunction": {"records", "failed"}, "SweeperFunction": {"settled", "delivered"}}[function]
    assert all(set(line) >= fields | {"ms"} for line in handled)


def test_no_ticket_token_code_or_key_reaches_a_log_line(rehearsal):
    secrets = rehearsal["secrets"]
    for instance in rehearsal["instances"].values():
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

    got = {function: metrics(instance) for function, instance in rehearsal["instances"].items()}
    mcp, api, notifier, sweeper = (got[f] for f in FUNCTIONS)
    assert all(m.get("ColdStart") == 1 for m in got.values()), got
    # (the seventh card is the removed colleague's, withdrawn by the operator's CLI, not a function)
    assert mcp.get("card_filed") == 7 and mcp.get("card_withdrawn") == 1 and "email_sent" not in mcp, mcp
    assert api.get("card_confirmed") == 1, api
    assert notifier.get("email_sent") == 1 and notifier.get("email_nothing_pending") == 1, notifier
    assert notifier.get("email_bounced") == 1 and notifier.get("email_suppressed") == 1, notifier
    assert (sweeper.get("card_recovered"), sweeper.get("sweep_settled"), sweeper.get("sweep_delivered")) == (1, 1, 2)
    assert sweeper.get("email_sent") == 1 and sweeper.get("email_rate_limited") == 1, sweeper


# Granted but not reached by this rehearsal (the static test in test_least_privilege.py ties the DynamoDB
# actions to the store's code): McpFunction spends confirmation codes by deleting them; the sweeper
# releases a person's email slot when a send fails or nothing waits any more (the notifier does it
# here; tests/aws_lambda/test_sweeper.py shows the sweeper doing it) and a resumed action may delete,
# and re-plan (a budget or mail plan reads several docs in one BatchGetItem). McpFunction checks a
# 2026 question's request with its counters (ConditionCheckItem): this rehearsal's agent asks no
# question in the client (tests/store/test_dynamodb_requests.py counts that transaction).
# The notifier's stream and dead-letter statements are used by Lambda's event source mapping on the
# function's behalf, never by its code (the rehearsal reads the stream itself, tests/support/streams.py).
MAPPING_ACTIONS = {"dynamodb:describestream", "dynamodb:getrecords", "dynamodb:getsharditerator",
                   "dynamodb:liststreams", "sqs:sendmessage"}
UNUSED_HERE = {"McpFunction": {"dynamodb:deleteitem", "dynamodb:conditioncheckitem"}, "ApiFunction": set(),
               "NotifierFunction": MAPPING_ACTIONS,
               "SweeperFunction": {"dynamodb:deleteitem", "dynamodb:batchgetitem"}}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_granted_action_is_used(rehearsal, function):
    """Least privilege, the other way round: the policy grants nothing the functions do not call."""
    stack = rehearsal["stack"].stack
    used = {r.action.lower() for call in rehearsal["calls"][function] for r in iam_requests(call)}
    granted = {a.lower() for s in stack.statements(function)
               for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])}
    assert used <= granted
    assert granted - used == UNUSED_HERE[function]


@pytest.mark.parametrize("function,kind", sorted(KIND.items()))
def test_the_function_requirements_cover_everything_it_imports(rehearsal, function, kind):
    """infra/requirements-KIND.txt is all the bundle gets. The workers run with every other
    installed distribution made unimportable (as in the bundle: optional imports such as certifi,
    rich or python-multipart fail quietly there too), so whatever the import pulled in comes
    from the requirements; and the api function's requirements never bring the MCP SDK."""
    import importlib.metadata as md

    from packaging.utils import canonicalize_name

    from tests.support.aws import REPO_ROOT

    instance = rehearsal["instances"][function]
    assert instance.blocked, "the worker ran with every installed distribution available"
    by_module = md.packages_distributions()
    imported = {canonicalize_name(d) for m in instance.wait_ready()["top_level"] if m != "_distutils_hack"
                for d in by_module.get(m, [])} - {"countersign"}
    closure = requirement_closure(REPO_ROOT / "infra" / f"requirements-{kind}.txt")
    assert imported, "no third-party import recorded?"
    assert imported <= closure, f"{function} imports {sorted(imported - closure)} that its requirements do not bring"
    if kind != "mcp":
        assert "mcp" not in closure and "uvicorn" not in closure
    if kind in ("notifier", "sweeper"):
        assert not {"fastapi", "starlette", "mangum"} & closure


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
