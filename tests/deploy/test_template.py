"""template.yaml read as data: least privilege, keys, the one origin, parameters and outputs.

The resolved values come from :class:`tests.deploy.cfn.Stack` (CloudFormation's intrinsic
functions, evaluated with example parameters), so the checks see what a deployed stack would.
"""

from __future__ import annotations

import glob
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from countersign.surfaces import local
from tests.deploy.cfn import ACCOUNT, REGION, Stack
from tests.deploy.conftest import SAM_VENV
from tests.support.aws import REPO_ROOT

HTTP_FUNCTIONS = {"McpFunction": "countersign.handlers.mcp.handler", "ApiFunction": "countersign.handlers.api.handler"}
# Not behind the HTTP API: the table's stream (OUTBOX inserts) and a schedule (every minute).
BACKGROUND_FUNCTIONS = {"NotifierFunction": "countersign.handlers.notifier.handler",
                        "SweeperFunction": "countersign.handlers.sweeper.handler"}
FUNCTIONS = {**HTTP_FUNCTIONS, **BACKGROUND_FUNCTIONS}
KIND = {"McpFunction": "mcp", "ApiFunction": "api", "NotifierFunction": "notifier", "SweeperFunction": "sweeper"}
WEB = {"mcp", "mcp-types", "uvicorn", "fastapi", "starlette", "mangum", "sse-starlette"}
PACKAGE = REPO_ROOT / "functions" / "countersign"
CACHING_OPTIMIZED = "658327ea-f89d-4fab-a63d-7e88639e58f6"
CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
ALL_VIEWER_EXCEPT_HOST = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
TABLE_ARN = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/countersign-Table-X"
SIGNING_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:SigningKeySecret-AbCdEf"
STATE_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:StateKeysSecret-GhIjKl"
ORIGIN_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:OriginVerifySecret-MnOpQr"
SECRETS = ("SigningKeySecret", "StateKeysSecret", "OriginVerifySecret")
CONFIGURATION_SET = "SesConfigurationSet-AbC123"
ALARM_TOPIC = f"arn:aws:sns:{REGION}:{ACCOUNT}:countersign-AlarmTopic-X"


def stack(**parameters) -> Stack:
    return Stack(
        parameters={"FromAddress": "countersign@example.com", "SenderDomain": "example.com", **parameters},
        refs={
            "Table": "countersign-Table-X",
            "SigningKeySecret": SIGNING_ARN,
            "StateKeysSecret": STATE_ARN,
            "OriginVerifySecret": ORIGIN_ARN,
            "HttpApi": "abc123",
            "Distribution": "E2EXAMPLE",
            "SiteBucket": "countersign-sitebucket-x",
            "SecurityHeadersPolicy": "policy-id",
            "McpFunction": "countersign-McpFunction-X",
            "ApiFunction": "countersign-ApiFunction-X",
            "NotifierFunction": "countersign-NotifierFunction-X",
            "SweeperFunction": "countersign-SweeperFunction-X",
            "SigningKey": SIGNING_ARN,
            "NotifierDLQ": "https://sqs.eu-west-1.amazonaws.com/123456789012/countersign-NotifierDLQ-X",
            "SesConfigurationSet": CONFIGURATION_SET,
            "McpFunction.Alias": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:countersign-McpFunction-X:live",
            "ApiFunction.Alias": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:countersign-ApiFunction-X:live",
            "AlarmTopic": ALARM_TOPIC,
            "SesEventsTopic": f"arn:aws:sns:{REGION}:{ACCOUNT}:countersign-SesEventsTopic-X",
            "Dashboard": "countersign-countersign",
        },
        attributes={
            "Table.Arn": TABLE_ARN,
            "Distribution.DomainName": "d111111abcdef8.cloudfront.net",
            "SiteBucket.Arn": "arn:aws:s3:::countersign-sitebucket-x",
            "SiteBucket.RegionalDomainName": "countersign-sitebucket-x.s3.eu-west-1.amazonaws.com",
            "SiteOriginAccessControl.Id": "OAC123",
            "SpaRoutesFunction.FunctionARN": "arn:cf-function",
            "McpFunction.Arn": "arn:mcp",
            "ApiFunction.Arn": "arn:api",
            "Table.StreamArn": f"{TABLE_ARN}/stream/2026-12-01T00:00:00.000",
            "NotifierDLQ.Arn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:countersign-NotifierDLQ-X",
            "HttpApiAccessLogGroup.Arn": "arn:aws:logs:eu-west-1:123456789012:log-group:access",
            "NotifierDLQ.QueueName": "countersign-NotifierDLQ-X",
        },
    )


@pytest.fixture(scope="module")
def resources(template):
    return template["Resources"]


def test_the_functions_and_their_handlers(template):
    s = stack()
    assert set(s.functions()) == set(FUNCTIONS)
    for name, handler in FUNCTIONS.items():
        assert s.function_property(name, "Handler") == handler
        assert s.function_property(name, "Runtime") == "python3.12"
        assert s.function_property(name, "Architectures") == ["arm64"]
        assert s.function_property(name, "CodeUri") == "functions"
        assert s.functions()[name]["Metadata"] == {"BuildMethod": "makefile", "ContextPath": "infra"}
        assert 128 <= s.function_property(name, "MemorySize") <= 3008
        assert s.function_property(name, "Tracing") == "Active"
        # Each function writes to its own log group, kept LogRetentionDays.
        group = s.function_property(name, "LoggingConfig")["LogGroup"]["Ref"]
        assert s.template["Resources"][group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    for name in HTTP_FUNCTIONS:
        assert s.function_property(name, "Timeout") < 30  # below the HTTP API's integration timeout
    # A sweep ends before the next one starts (rate(1 minute)).
    assert s.function_property("SweeperFunction", "Timeout") < 60
    makefile = (REPO_ROOT / "infra" / "Makefile").read_text()
    for name, kind in KIND.items():
        assert re.search(rf'^build-{name}:\n\tbash "\$\(INFRA\)build_function.sh" {kind} ', makefile, re.M), \
            f"infra/Makefile has no build-{name} target building {kind}"


# -- least privilege -------------------------------------------------------------------------------


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


def _actions(statement) -> list[str]:
    action = statement["Action"]
    return action if isinstance(action, list) else [action]


def _store_operations() -> set[str]:
    """The DynamoDB IAM actions the store's code can need, read from its source."""
    text = "".join(p.read_text() for p in sorted((PACKAGE / "store" / "dynamodb").glob("*.py")))
    calls = set(re.findall(r"\bclient\.([a-z_]+)\(", text)) - {"close", "get_paginator"}
    calls |= set(re.findall(r"\bget_paginator\(\"([a-z_]+)\"\)", text))  # a paginated read
    camel = {"".join(part.title() for part in c.split("_")) for c in calls}
    kinds = set(re.findall(r'\{"(Put|Update|Delete|ConditionCheck)":', text))
    actions = {f"dynamodb:{op}" for op in camel if op not in ("TransactWriteItems", "TransactGetItems")}
    item_action = {
        "Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem",
    }
    actions |= {f"dynamodb:{item_action[k]}" for k in kinds}
    return actions


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_policies_are_inline_exact_and_name_real_actions(template, function):
    props = template["Resources"][function]["Properties"]
    for policy in props["Policies"]:
        assert isinstance(policy, dict) and "Statement" in policy, f"{function}: managed or SAM policy {policy!r}"
    statements = stack().statements(function)
    known = _iam_actions()
    for statement in statements:
        assert statement["Effect"] == "Allow"
        for action in _actions(statement):
            prefix, _, name = action.partition(":")
            assert "*" not in action, f"{function}: wildcard action {action}"
            assert name.lower() in known.get(prefix, set()), f"{function}: {action} is not an IAM action"
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        assert "*" not in resources, f"{function}: {statement['Sid']} on every resource"


# The notifier only delivers: it reads (GetItem, Query), leases, finishes and retries the
# notification and claims the email slot (UpdateItem), releases the slot (DeleteItem). It never
# puts an item. tests/deploy/test_rehearsal.py records its calls and checks each is allowed.
NOT_CALLED = {"NotifierFunction": {"dynamodb:PutItem", "dynamodb:BatchGetItem"}}  # it plans nothing


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_dynamodb_exactly_what_the_store_calls_on_the_table_only(function):
    [table] = [s for s in stack().statements(function) if s["Sid"] == "Table"]
    assert set(_actions(table)) == _store_operations() - NOT_CALLED.get(function, set())
    assert table["Resource"] == [TABLE_ARN, f"{TABLE_ARN}/index/*"]


# Who emails: the notifier and the sweeper (cards), the api function (sign-in links). The MCP
# function files cards with their notifications and sends nothing itself.
SENDERS = ("ApiFunction", "NotifierFunction", "SweeperFunction")


def test_the_mcp_function_may_not_send_email():
    assert not [s for s in stack().statements("McpFunction") if any(a.startswith("ses:") for a in _actions(s))]


@pytest.mark.parametrize("function", SENDERS)
def test_ses_only_as_the_configured_sender(function, template):
    statements = stack().statements(function)
    ses = [s for s in statements if any(a.startswith("ses:") for a in _actions(s))]
    assert len(ses) == 1
    [statement] = ses
    assert set(_actions(statement)) == {"ses:SendEmail", "ses:SendRawEmail"}
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
    # The origin secret only where CloudFront's header is checked: the two HTTP functions.
    expected = [SIGNING_ARN, STATE_ARN] + ([ORIGIN_ARN] if function in HTTP_FUNCTIONS else [])
    assert _actions(keys) == ["secretsmanager:GetSecretValue"] and sorted(keys["Resource"]) == sorted(expected)
    secret_statements = [
        st for st in s.statements(function) if any(a.startswith("secretsmanager:") for a in _actions(st))
    ]
    assert secret_statements == [keys]
    env = s.environment(function)
    assert env["COUNTERSIGN_SIGNING_KEY"] == SIGNING_ARN and env["COUNTERSIGN_STATE_KEYS"] == STATE_ARN
    assert env.get("COUNTERSIGN_ORIGIN_SECRET") == (ORIGIN_ARN if function in HTTP_FUNCTIONS else None)
    for name in SECRETS:
        secret = resources[name]
        assert secret["Type"] == "AWS::SecretsManager::Secret"
        assert secret["Properties"]["GenerateSecretString"] == {"PasswordLength": 64, "ExcludePunctuation": True}
        assert "SecretString" not in secret["Properties"]
        assert secret["DeletionPolicy"] == secret["UpdateReplacePolicy"] == "Retain"


def test_the_secret_loader_is_cached_for_the_cold_start():
    source = (PACKAGE / "infra_secrets.py").read_text()
    assert "parameters.get_secret(arn, max_age=3600)" in source
    for function in FUNCTIONS:
        assert stack().environment(function)["POWERTOOLS_PARAMETERS_MAX_AGE"] == "3600"


# -- environment, parameters, outputs ---------------------------------------------------------------


def test_environment_and_outputs_follow_the_parameters():
    default, custom = stack(), stack(DomainName="confirm.example.com",
                                     CertificateArn="arn:aws:acm:us-east-1:123456789012:certificate/abc")
    for s, origin in ((default, "https://d111111abcdef8.cloudfront.net"), (custom, "https://confirm.example.com")):
        for function in FUNCTIONS:
            env = s.environment(function)
            assert env["COUNTERSIGN_PUBLIC_URL"] == origin
            assert env["COUNTERSIGN_STORE"] == "dynamodb://countersign-Table-X"
            assert env["COUNTERSIGN_PACKS"] == "budget,mail"
            assert env["COUNTERSIGN_BASE_PATH"] == "/"
        outputs = {k: s.resolve(v["Value"]) for k, v in s.template["Outputs"].items()}
        assert outputs["McpUrl"] == f"{origin}/mcp" and outputs["ConfirmPageUrl"] == f"{origin}/confirm"
        for function in FUNCTIONS:  # named, for the key reload after a rotation (README)
            assert outputs[f"{function}Name"] == f"countersign-{function}-X"
        assert outputs["NotifierDLQUrl"].startswith("https://sqs.")
    assert stack(Packs="mail").environment("ApiFunction")["COUNTERSIGN_PACKS"] == "mail"


def test_the_settings_accept_the_template_environment(tmp_path):
    """What settings.load makes of the template's values (ARNs are resolved later, at build)."""
    from countersign import settings as settings_mod

    for function in FUNCTIONS:
        env = stack().environment(function)
        loaded = settings_mod.load(env)
        assert loaded.store == env["COUNTERSIGN_STORE"] and loaded.mail == "ses:countersign@example.com"
        assert loaded.signing_key == SIGNING_ARN and loaded.state_keys == (STATE_ARN,)
        assert loaded.packs == ("budget", "mail") and loaded.public_url == "https://d111111abcdef8.cloudfront.net"
        assert loaded.origin_secret == (ORIGIN_ARN if function in HTTP_FUNCTIONS else None)
        assert loaded.ses_configuration_set == CONFIGURATION_SET
        assert (loaded.limit_connection, loaded.limit_address, loaded.limit_page) == (30, 120, 60)


# -- the HTTP API -----------------------------------------------------------------------------------


def test_http_api_routes_and_throttling(resources):
    s = stack()
    stage = s.resolve(resources["HttpApiStage"]["Properties"])
    assert stage["StageName"] == "$default" and stage["AutoDeploy"] is True
    assert stage["DefaultRouteSettings"] == {"ThrottlingRateLimit": "50", "ThrottlingBurstLimit": "100"}
    assert "authorization" not in stage["AccessLogSettings"]["Format"].lower()
    routes = {}
    for res in resources.values():
        if res["Type"] == "AWS::ApiGatewayV2::Route":
            integration = res["Properties"]["Target"]["Fn::Sub"].split("${")[1].rstrip("}")
            # The alias "live", never the function itself: a canary deploy shifts what it serves.
            uri = resources[integration]["Properties"]["IntegrationUri"]["Ref"].removesuffix(".Alias")
            assert resources[integration]["Properties"]["PayloadFormatVersion"] == "2.0"
            routes[res["Properties"]["RouteKey"]] = uri
    assert routes == {"ANY /mcp": "McpFunction", "ANY /api/{proxy+}": "ApiFunction",
                      "ANY /oauth/{proxy+}": "McpFunction", "ANY /.well-known/{proxy+}": "McpFunction"}
    permissions = sorted((s.resolve(r["Properties"]["FunctionName"]), s.resolve(r["Properties"]["SourceArn"]))
                         for r in resources.values() if r["Type"] == "AWS::Lambda::Permission")
    api = f"arn:aws:execute-api:{REGION}:{ACCOUNT}:abc123/*/*"
    assert permissions == sorted([  # every route invokes its function's alias: a canary shifts them all
        (s.refs["ApiFunction.Alias"], f"{api}/api/*"),
        (s.refs["McpFunction.Alias"], f"{api}/.well-known/*"),
        (s.refs["McpFunction.Alias"], f"{api}/mcp"),
        (s.refs["McpFunction.Alias"], f"{api}/oauth/*"),
    ])


# -- the page and the one origin ----------------------------------------------------------------------


def test_private_bucket_read_only_by_this_distribution(resources):
    s = stack()
    bucket = resources["SiteBucket"]["Properties"]
    assert bucket["PublicAccessBlockConfiguration"] == dict.fromkeys(
        ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"), True)
    assert bucket["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    [statement] = s.resolve(resources["SiteBucketPolicy"]["Properties"]["PolicyDocument"])["Statement"]
    assert statement["Principal"] == {"Service": "cloudfront.amazonaws.com"} and statement["Action"] == "s3:GetObject"
    assert statement["Condition"] == {
        "StringEquals": {"AWS:SourceArn": f"arn:aws:cloudfront::{ACCOUNT}:distribution/E2EXAMPLE"}
    }


def test_one_origin_for_page_api_and_mcp(resources):
    config = stack().resolve(resources["Distribution"]["Properties"]["DistributionConfig"])
    origins = {o["Id"]: o for o in config["Origins"]}
    assert origins["site"]["OriginAccessControlId"] == "OAC123"
    assert origins["site"]["S3OriginConfig"] == {"OriginAccessIdentity": ""}  # mandatory with OAC
    assert origins["api"]["DomainName"] == f"abc123.execute-api.{REGION}.amazonaws.com"
    assert origins["api"]["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    default = config["DefaultCacheBehavior"]
    assert default["TargetOriginId"] == "site" and default["CachePolicyId"] == CACHING_OPTIMIZED
    assert default["ViewerProtocolPolicy"] == "redirect-to-https"
    assert default["FunctionAssociations"] == [{"EventType": "viewer-request", "FunctionARN": "arn:cf-function"}]
    behaviours = {b["PathPattern"]: b for b in config["CacheBehaviors"]}
    assert set(behaviours) == {"/api/*", "/mcp", "/oauth/*", "/.well-known/*"}
    for behaviour in behaviours.values():
        assert behaviour["TargetOriginId"] == "api"
        assert behaviour["CachePolicyId"] == CACHING_DISABLED
        assert behaviour["OriginRequestPolicyId"] == ALL_VIEWER_EXCEPT_HOST
        assert {"POST", "GET", "DELETE"} <= set(behaviour["AllowedMethods"])
        assert behaviour["ViewerProtocolPolicy"] == "https-only"
    for behaviour in [default, *behaviours.values()]:
        assert behaviour["ResponseHeadersPolicyId"] == "policy-id"
    assert "CustomErrorResponses" not in config  # they would turn the API's 404s into the page


SECRET_REFERENCE = re.compile(
    r"^\{\{resolve:secretsmanager:(?P<id>arn:[^{}]+?):SecretString(?P<rest>(?::[^:{}]*){0,3})\}\}$"
)


def test_cloudfront_proves_itself_to_the_api_with_the_origin_secret(resources):
    """Only the API origin carries X-Countersign-Origin, and its value is a dynamic reference to
    the secret ApiFunction reads (never a literal): the whole secret string, the current version
    unless OriginSecretVersion pins one (which is what makes a deploy re-resolve it)."""
    from countersign.surfaces.api.signin import ORIGIN_HEADER

    def origins(s):
        return {o["Id"]: o for o in s.resolve(resources["Distribution"]["Properties"]["DistributionConfig"]["Origins"])}

    default = origins(stack())
    assert "OriginCustomHeaders" not in default["site"]
    [header] = default["api"]["OriginCustomHeaders"]
    assert header["HeaderName"].lower() == ORIGIN_HEADER
    match = SECRET_REFERENCE.match(header["HeaderValue"])
    assert match and match["id"] == ORIGIN_ARN == stack().environment("ApiFunction")["COUNTERSIGN_ORIGIN_SECRET"]
    assert match["rest"] == ""  # no JSON key, no version: AWSCURRENT at the last change

    version = "a1b2c3d4-5678-90ab-cdef-EXAMPLE11111"
    [pinned] = origins(stack(OriginSecretVersion=version))["api"]["OriginCustomHeaders"]
    match = SECRET_REFERENCE.match(pinned["HeaderValue"])
    # {{resolve:secretsmanager:secret-id:SecretString:json-key:version-stage:version-id}}, key and stage empty
    assert match and match["id"] == ORIGIN_ARN and match["rest"] == f":::{version}"
    assert "{{resolve:" not in json.dumps(resources["ApiFunction"])  # the function reads it itself, by ARN


@pytest.mark.parametrize("value", ["", "a1b2c3d4-5678-90ab-cdef-EXAMPLE11111", "EXAMPLE1-90ab-cdef-fedc-ba987EXAMPLE"])
def test_origin_secret_version_accepts_version_ids(template, value):
    pattern = template["Parameters"]["OriginSecretVersion"]["AllowedPattern"]
    assert re.fullmatch(pattern, value)
    for wrong in ("AWSCURRENT:", "}}", "a b", "x" * 65):
        assert not re.fullmatch(pattern, wrong), wrong


def test_security_headers_match_the_local_server(resources):
    config = resources["SecurityHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"]
    security = config["SecurityHeadersConfig"]
    assert security["ContentSecurityPolicy"]["ContentSecurityPolicy"] == local.CONTENT_SECURITY_POLICY
    assert security["FrameOptions"]["FrameOption"] == "DENY"
    assert security["ReferrerPolicy"]["ReferrerPolicy"] == "no-referrer"
    assert "ContentTypeOptions" in security
    custom = {i["Header"].lower(): i["Value"] for i in config["CustomHeadersConfig"]["Items"]}
    expected = {k.decode(): v.decode() for k, v in local.SECURITY_HEADERS}
    for name in ("cross-origin-opener-policy", "cross-origin-resource-policy", "permissions-policy"):
        assert custom[name] == expected[name]
    assert all(i["Override"] for i in config["CustomHeadersConfig"]["Items"])


def test_page_routes_match_the_local_server(resources):
    code = resources["SpaRoutesFunction"]["Properties"]["FunctionCode"]
    routes = set(json.loads(re.search(r"PAGE_ROUTES = (\{.*?\});", code).group(1)))
    assert routes == set(local.PAGE_ROUTES)
    assert resources["SpaRoutesFunction"]["Properties"]["FunctionConfig"]["Runtime"] == "cloudfront-js-2.0"


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the CloudFront function's JavaScript")
def test_page_routes_function_rewrites_only_page_routes(resources):
    code = resources["SpaRoutesFunction"]["Properties"]["FunctionCode"]
    script = code + """
const uris = ["/", "/confirm", "/history", "/settings", "/signin", "/app.js", "/app.css", "/index.html",
              "/confirm/x", "/nope", "/api/session", "/mcp"];
console.log(JSON.stringify(Object.fromEntries(uris.map(u => [u, handler({request: {uri: u}}).uri]))));
"""
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    page = "/index.html"
    assert got == {"/": page, "/confirm": page, "/history": page, "/settings": page, "/signin": page,
                   "/app.js": "/app.js", "/app.css": "/app.css", "/index.html": page, "/confirm/x": "/confirm/x",
                   "/nope": "/nope", "/api/session": "/api/session", "/mcp": "/mcp"}


def test_stateful_resources_are_retained(resources):
    for name in ("Table", *SECRETS, "SiteBucket"):
        assert resources[name]["DeletionPolicy"] == "Retain", name


def test_custom_domain_serves_from_its_certificate(resources):
    custom = stack(
        DomainName="confirm.example.com", CertificateArn="arn:aws:acm:us-east-1:123456789012:certificate/abc"
    )
    config = custom.resolve(resources["Distribution"]["Properties"]["DistributionConfig"])
    assert config["Aliases"] == ["confirm.example.com"]
    assert config["ViewerCertificate"]["AcmCertificateArn"].startswith("arn:aws:acm:us-east-1:")
    default = stack().resolve(resources["Distribution"]["Properties"]["DistributionConfig"])
    assert "Aliases" not in default and default["ViewerCertificate"] == {"CloudFrontDefaultCertificate": True}
    # A DomainName without its certificate is ignored, never half-applied.
    half = stack(DomainName="confirm.example.com")
    assert half.environment("McpFunction")["COUNTERSIGN_PUBLIC_URL"] == "https://d111111abcdef8.cloudfront.net"
    assert "Aliases" not in half.resolve(resources["Distribution"]["Properties"]["DistributionConfig"])
