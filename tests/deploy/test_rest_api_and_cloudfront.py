"""What template.yaml puts in front of the functions: the REST API (methods on the functions' live
aliases, throttling, access log) and the one CloudFront origin for page, API and MCP (the private
page bucket, cache behaviours, the origin secret CloudFront proves itself with, security headers and
page routes as the local server has them, a custom domain only with its certificate). AWS WAF on
the REST API and the refusals carried past it: test_origin.py.

Resolved with :func:`tests.deploy.example_stack.stack` (example parameters, names and ARNs).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from countersign.surfaces.local import page
from tests.deploy.cfn import ACCOUNT, REGION
from tests.deploy.example_stack import ORIGIN_ARN, rest_api_routes, stack

CACHING_OPTIMIZED = "658327ea-f89d-4fab-a63d-7e88639e58f6"
CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
ALL_VIEWER_EXCEPT_HOST = "b689b0a8-53d0-40ab-baf2-68738e2966ac"


# -- the REST API -----------------------------------------------------------------------------------


def test_rest_api_methods_and_throttling(resources):
    s = stack()
    api = s.resolve(resources["RestApi"]["Properties"])
    assert api["EndpointConfiguration"] == {"Types": ["REGIONAL"]}  # no second, API Gateway-owned CloudFront
    assert api["BinaryMediaTypes"] == ["*/*"]  # bodies pass as bytes both ways (gzip, base64 events)
    stage = s.resolve(resources["RestApiStage"]["Properties"])
    assert stage["StageName"] == "origin" and stage["TracingEnabled"] is True
    [settings] = stage["MethodSettings"]
    assert settings == {"ResourcePath": "/*", "HttpMethod": "*", "ThrottlingRateLimit": "50",
                        "ThrottlingBurstLimit": "100", "LoggingLevel": "ERROR", "DataTraceEnabled": False,
                        "MetricsEnabled": False}
    log_format = stage["AccessLogSetting"]["Format"]
    assert "authorization" not in log_format.lower() and "$context.wafResponseCode" in log_format
    assert "header" not in log_format.lower() and "querystring" not in log_format.lower()
    # API Gateway's execution log lands in the stack's own group (retention, key), errors only.
    execution = s.resolve(resources["RestApiExecutionLogGroup"]["Properties"])
    assert execution["LogGroupName"] == "API-Gateway-Execution-Logs_abc123/origin"
    assert rest_api_routes(resources) == {
        ("ANY", "/mcp"): "McpFunction", ("ANY", "/api/{proxy+}"): "ApiFunction",
        ("ANY", "/slack/{proxy+}"): "ApiFunction",  # Slack's signed callbacks: the API's app serves them
        ("ANY", "/oauth/{proxy+}"): "McpFunction", ("ANY", "/.well-known/{proxy+}"): "McpFunction"}
    for res in resources.values():
        if res["Type"] == "AWS::ApiGateway::Method":
            integration = res["Properties"]["Integration"]
            assert integration["Type"] == "AWS_PROXY" and integration["IntegrationHttpMethod"] == "POST"
            assert integration["TimeoutInMillis"] == 29000  # a REST API's most; the functions stop at 20 s
    permissions = sorted((s.resolve(r["Properties"]["FunctionName"]), s.resolve(r["Properties"]["SourceArn"]))
                         for r in resources.values() if r["Type"] == "AWS::Lambda::Permission")
    api_arn = f"arn:aws:execute-api:{REGION}:{ACCOUNT}:abc123/*/*"
    assert permissions == sorted([  # every method invokes its function's alias: a canary shifts them all
        (s.refs["ApiFunction.Alias"], f"{api_arn}/api/*"),
        (s.refs["ApiFunction.Alias"], f"{api_arn}/slack/*"),
        (s.refs["McpFunction.Alias"], f"{api_arn}/.well-known/*"),
        (s.refs["McpFunction.Alias"], f"{api_arn}/mcp"),
        (s.refs["McpFunction.Alias"], f"{api_arn}/oauth/*"),
    ])


def test_rest_api_logs_through_the_accounts_role(resources):
    """A REST API's logs need API Gateway's account-level CloudWatch role: made and set by default
    (retained - other APIs may come to use it), left alone when the account has one already."""
    made = stack()
    assert made.condition("CreatesApiGatewayLogsRole")
    for name in ("ApiGatewayCloudWatchRole", "ApiGatewayAccount"):
        assert resources[name]["Condition"] == "CreatesApiGatewayLogsRole"
        assert resources[name]["DeletionPolicy"] == "Retain"
    role = made.resolve(resources["ApiGatewayCloudWatchRole"]["Properties"])
    assert role["ManagedPolicyArns"] == [
        "arn:aws:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"]
    # The stage names the account setting, so it is made after it (the stage's logs need it).
    assert "countersign-ApiGatewayAccount-X" in made.resolve(resources["RestApiStage"]["Properties"])["Description"]
    existing = stack(ApiGatewayLogsRole="existing")
    assert not existing.condition("CreatesApiGatewayLogsRole")
    assert "ApiGatewayAccount" not in existing.resolve(resources["RestApiStage"]["Properties"])["Description"]


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
    assert origins["api"]["OriginPath"] == "/origin"  # the REST API's stage
    assert origins["api"]["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    default = config["DefaultCacheBehavior"]
    assert default["TargetOriginId"] == "site" and default["CachePolicyId"] == CACHING_OPTIMIZED
    assert default["ViewerProtocolPolicy"] == "redirect-to-https"
    assert default["FunctionAssociations"] == [{"EventType": "viewer-request", "FunctionARN": "arn:cf-function"}]
    behaviours = {b["PathPattern"]: b for b in config["CacheBehaviors"]}
    assert set(behaviours) == {"/api/*", "/slack/*", "/mcp", "/oauth/*", "/.well-known/*"}
    for behaviour in behaviours.values():
        assert behaviour["TargetOriginId"] == "api"
        assert behaviour["CachePolicyId"] == CACHING_DISABLED
        assert behaviour["OriginRequestPolicyId"] == ALL_VIEWER_EXCEPT_HOST
        assert {"POST", "GET", "DELETE"} <= set(behaviour["AllowedMethods"])
        assert behaviour["ViewerProtocolPolicy"] == "https-only"
        # a refusal API Gateway would strip of its WWW-Authenticate gets it back (test_origin.py)
        assert behaviour["FunctionAssociations"] == [{"EventType": "viewer-response",
                                                      "FunctionARN": "arn:cf-challenge"}]
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
    assert security["ContentSecurityPolicy"]["ContentSecurityPolicy"] == page.CONTENT_SECURITY_POLICY
    assert security["FrameOptions"]["FrameOption"] == "DENY"
    assert security["ReferrerPolicy"]["ReferrerPolicy"] == "no-referrer"
    assert "ContentTypeOptions" in security
    custom = {i["Header"].lower(): i["Value"] for i in config["CustomHeadersConfig"]["Items"]}
    expected = {k.decode(): v.decode() for k, v in page.SECURITY_HEADERS}
    for name in ("cross-origin-opener-policy", "cross-origin-resource-policy", "permissions-policy"):
        assert custom[name] == expected[name]
    assert all(i["Override"] for i in config["CustomHeadersConfig"]["Items"])


def test_page_routes_match_the_local_server(resources):
    code = resources["SpaRoutesFunction"]["Properties"]["FunctionCode"]
    routes = set(json.loads(re.search(r"PAGE_ROUTES = (\{.*?\});", code).group(1)))
    assert routes == set(page.PAGE_ROUTES)
    assert resources["SpaRoutesFunction"]["Properties"]["FunctionConfig"]["Runtime"] == "cloudfront-js-2.0"


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the CloudFront function's JavaScript")
def test_page_routes_function_rewrites_only_page_routes(resources):
    code = resources["SpaRoutesFunction"]["Properties"]["FunctionCode"]
    script = code + """
const uris = ["/", "/confirm", "/history", "/settings", "/signin", "/app.js", "/app.css", "/index.html",
              "/confirm/x", "/nope", "/api/session", "/mcp", "/settings/passkeys", "/settings/x"];
console.log(JSON.stringify(Object.fromEntries(uris.map(u => [u, handler({request: {uri: u}}).uri]))));
"""
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    page = "/index.html"
    assert got == {"/": page, "/confirm": page, "/history": page, "/settings": page, "/signin": page,
                   "/app.js": "/app.js", "/app.css": "/app.css", "/index.html": page, "/confirm/x": "/confirm/x",
                   "/nope": "/nope", "/api/session": "/api/session", "/mcp": "/mcp",
                   "/settings/passkeys": page, "/settings/x": "/settings/x"}


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


def test_the_page_is_versioned_and_every_request_logged(resources):
    """The site bucket keeps the page an upload replaced (30 days) and logs access to a log bucket;
    CloudFront writes its standard logs there too, without cookies; the logs expire with the
    functions' (LogRetentionDays) and the log bucket takes only TLS and the site bucket's logs."""
    s = stack()
    site = s.resolve(resources["SiteBucket"]["Properties"])
    assert site["VersioningConfiguration"] == {"Status": "Enabled"}
    assert site["LoggingConfiguration"] == {"DestinationBucketName": "countersign-logbucket-x",
                                            "LogFilePrefix": "s3-site/"}
    [rule] = site["LifecycleConfiguration"]["Rules"]
    assert rule["NoncurrentVersionExpiration"] == {"NoncurrentDays": 30}
    logging = s.resolve(resources["Distribution"]["Properties"]["DistributionConfig"])["Logging"]
    assert logging == {"Bucket": "countersign-logbucket-x.s3.amazonaws.com", "Prefix": "cloudfront/",
                       "IncludeCookies": False}
    logs = s.resolve(resources["LogBucket"]["Properties"])
    assert logs["PublicAccessBlockConfiguration"] == dict.fromkeys(
        ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"), True)
    # CloudFront's standard logging writes with ACLs: the only bucket where they are enabled.
    assert logs["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerPreferred"}]}
    assert logs["LifecycleConfiguration"]["Rules"][0]["ExpirationInDays"] == "30"
    assert resources["LogBucket"]["DeletionPolicy"] == "Retain"
    allow, tls = s.resolve(resources["LogBucketPolicy"]["Properties"]["PolicyDocument"])["Statement"]
    assert allow["Principal"] == {"Service": "logging.s3.amazonaws.com"} and allow["Action"] == "s3:PutObject"
    assert allow["Condition"]["ArnLike"] == {"aws:SourceArn": "arn:aws:s3:::countersign-sitebucket-x"}
    assert tls["Effect"] == "Deny" and tls["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_topics_are_encrypted_with_a_key_alarms_and_ses_may_use(resources):
    from tests.deploy.example_stack import TOPIC_KEY

    s = stack()
    for topic in ("AlarmTopic", "SesEventsTopic"):
        assert s.resolve(resources[topic]["Properties"])["KmsMasterKeyId"] == TOPIC_KEY
    key = "arn:aws:kms:eu-west-1:123456789012:key/0123abcd-0000-0000-0000-000000000000"
    assert stack(KmsKeyArn=key).resolve(resources["SesEventsTopic"]["Properties"])["KmsMasterKeyId"] == key
    assert not stack(KmsKeyArn=key).condition("MakesTopicKey")
    policy = s.resolve(resources["TopicKey"]["Properties"])
    assert policy["EnableKeyRotation"] is True
    [publishers] = [st for st in policy["KeyPolicy"]["Statement"] if st["Sid"] == "AlarmsAndSesPublish"]
    assert publishers["Principal"] == {"Service": ["cloudwatch.amazonaws.com", "ses.amazonaws.com"]}
    assert publishers["Condition"] == {"StringEquals": {"aws:SourceAccount": "123456789012"}}
