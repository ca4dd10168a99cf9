"""The origin closed to everyone but CloudFront: AWS WAF on the REST API's stage blocks every
request without CloudFront's origin secret (the same value the distribution sends, and the previous
one once a rotation pinned a version), before any function runs; a refusal's ``WWW-Authenticate``,
which API Gateway would rename, is carried past it in a 200 and restored by the distribution's
viewer-response function (its JavaScript run under node, against the same cases as the Python
twin the tests' CloudFront uses); and the REST API's deployment is renamed whenever its methods
change, so the stage never serves an old snapshot.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess

import pytest

from countersign.cli.smoke import NOT_THROUGH_CLOUDFRONT
from countersign.surfaces.http.challenge import CARRIED, carry, carry_challenge, restore_challenge
from countersign.surfaces.http.origin import ORIGIN_HEADER
from tests.deploy.example_stack import ORIGIN_ARN, ORIGIN_WEB_ACL, stack

VERSION = "a1b2c3d4-5678-90ab-cdef-EXAMPLE11111"


def _acl(s):
    return s.resolve(s.template["Resources"]["OriginWebAcl"]["Properties"])


def _sent(s) -> str:
    """What CloudFront sends as X-Countersign-Origin (the distribution's dynamic reference)."""
    config = s.resolve(s.template["Resources"]["Distribution"]["Properties"]["DistributionConfig"])
    [header] = next(o for o in config["Origins"] if o["Id"] == "api")["OriginCustomHeaders"]
    return header["HeaderValue"]


def _matches(statement) -> list[str]:
    statements = statement["OrStatement"]["Statements"] if "OrStatement" in statement else [statement]
    out = []
    for one in statements:
        match = one["ByteMatchStatement"]
        assert match["FieldToMatch"] == {"SingleHeader": {"Name": ORIGIN_HEADER}}
        assert match["PositionalConstraint"] == "EXACTLY"
        assert match["TextTransformations"] == [{"Priority": 0, "Type": "NONE"}]
        out.append(match["SearchString"])
    return out


def test_aws_waf_blocks_every_request_without_cloudfronts_secret(resources):
    s = stack()
    acl = _acl(s)
    assert acl["Scope"] == "REGIONAL"
    assert acl["DefaultAction"] == {"Block": {"CustomResponse": {"ResponseCode": 403,
                                                                 "CustomResponseBodyKey": "not-through-cloudfront"}}}
    body = acl["CustomResponseBodies"]["not-through-cloudfront"]
    assert body["ContentType"] == "APPLICATION_JSON"
    # countersign smoke tells AWS WAF's refusal from the function's own 403 by this code
    assert json.loads(body["Content"])["error"]["code"] == NOT_THROUGH_CLOUDFRONT
    [rule] = acl["Rules"]
    assert rule["Action"] == {"Allow": {}}
    # exactly the value the distribution sends: never a literal, never a different version
    assert _matches(rule["Statement"]) == [_sent(s)]
    assert _sent(s) == f"{{{{resolve:secretsmanager:{ORIGIN_ARN}:SecretString}}}}"
    association = s.resolve(resources["OriginWebAclAssociation"]["Properties"])
    assert association == {"ResourceArn": "arn:aws:apigateway:eu-west-1::/restapis/abc123/stages/origin",
                           "WebACLArn": ORIGIN_WEB_ACL}
    assert "Condition" not in resources["OriginWebAcl"]  # always: it is the origin's only lock


def test_a_rotation_lets_both_values_in_and_the_new_one_first(resources):
    """With OriginSecretVersion pinned (after put-secret-value), AWS WAF accepts the pinned value
    CloudFront is about to send and the previous one edges still send while the deploy spreads;
    and CloudFormation updates the web ACL before the distribution (DependsOn)."""
    s = stack(OriginSecretVersion=VERSION)
    [rule] = _acl(s)["Rules"]
    pinned, previous = _matches(rule["Statement"])
    assert pinned == _sent(s) == f"{{{{resolve:secretsmanager:{ORIGIN_ARN}:SecretString:::{VERSION}}}}}"
    assert previous == f"{{{{resolve:secretsmanager:{ORIGIN_ARN}:SecretString::AWSPREVIOUS}}}}"
    assert resources["Distribution"]["DependsOn"] == "OriginWebAcl"


def _deployment_hash(resources) -> str:
    described = {name: res["Properties"] for name, res in sorted(resources.items())
                 if res["Type"] in ("AWS::ApiGateway::Resource", "AWS::ApiGateway::Method")}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:8]


def test_the_deployment_is_renamed_whenever_the_methods_change(resources):
    """CloudFormation makes a new API Gateway deployment only for a new logical id: the
    deployment's name carries a hash of every resource and method, so a change to them cannot
    reach the template without a new snapshot for the stage."""
    [name] = [n for n, r in resources.items() if r["Type"] == "AWS::ApiGateway::Deployment"]
    want = f"RestApiDeployment{_deployment_hash(resources)}"
    assert name == want, f"the REST API's resources or methods changed: rename {name} to {want} in template.yaml"
    assert resources["RestApiStage"]["Properties"]["DeploymentId"] == {"Ref": name}
    methods = sorted(n for n, r in resources.items() if r["Type"] == "AWS::ApiGateway::Method")
    assert sorted(resources[name]["DependsOn"]) == methods


# -- a refusal's WWW-Authenticate, carried past API Gateway ------------------------------------------

CHALLENGE = 'Bearer realm="countersign", resource_metadata="https://c.example/.well-known/oauth-protected-resource/mcp"'
CASES = [  # (origin status, origin headers) -> what the viewer gets
    (200, {"x-countersign-status": "401", "x-countersign-www-authenticate": CHALLENGE,
           "content-type": "application/json"}),
    (200, {"x-countersign-status": "403", "x-countersign-www-authenticate": 'Bearer error="insufficient_scope"'}),
    (200, {"content-type": "application/json"}),  # an ordinary answer: untouched
    (200, {"x-countersign-status": "200", "x-countersign-www-authenticate": "x"}),  # not a refusal: dropped only
    (200, {"x-countersign-status": "abc"}),
    (200, {"x-amzn-remapped-www-authenticate": "Bearer"}),  # API Gateway's renamed copy never reaches a viewer
    (302, {"location": "https://c.example/confirm"}),
]


def test_a_refusal_is_carried_in_a_200_only_when_it_challenges():
    refused = {"statusCode": 401, "headers": {"www-authenticate": CHALLENGE, "content-type": "application/json"},
               "multiValueHeaders": {}, "body": "{}", "isBase64Encoded": False}
    carried = carry(refused)
    assert carried["statusCode"] == 200 and carried["body"] == "{}"
    assert carried["headers"] == {"content-type": "application/json", "x-countersign-status": "401",
                                  "x-countersign-www-authenticate": CHALLENGE}
    assert restore_challenge(carried["statusCode"], carried["headers"]) == (
        401, {"content-type": "application/json", "www-authenticate": CHALLENGE})
    for untouched in ({"statusCode": 403, "headers": {"content-type": "application/json"}},   # no challenge
                      {"statusCode": 200, "headers": {"www-authenticate": "Bearer"}},         # not a refusal
                      {"statusCode": 502, "headers": {"www-authenticate": "Bearer"}}):
        assert carry(untouched) == untouched


def test_each_refusal_carried_in_a_200_is_counted_once_and_nothing_else_is():
    """API Gateway counts a carried refusal as a 200 (not in 4XXError): the function counts it
    (``refusal_carried``), which RestApi4xxAlarm adds back (test_operations.py)."""
    answers = [{"statusCode": 401, "headers": {"www-authenticate": CHALLENGE}, "body": "{}"},
               {"statusCode": 403, "headers": {"content-type": "application/json"}, "body": "{}"},
               {"statusCode": 200, "headers": {"www-authenticate": "Bearer"}, "body": "{}"},
               {"statusCode": 401, "headers": {"WWW-Authenticate": CHALLENGE}, "body": "{}"}]
    counted: list[str] = []
    handler = carry_challenge(lambda event, context: answers[event["n"]], counted.append)
    statuses = [handler({"n": n}, None)["statusCode"] for n in range(len(answers))]
    assert statuses == [200, 403, 200, 200] and counted == [CARRIED, CARRIED]
    assert carry_challenge(lambda event, context: answers[0])({}, None)["statusCode"] == 200  # (counted by no one)


def test_the_viewer_response_function_restores_the_refusal_like_the_python_twin(resources):
    function = resources["ChallengeFunction"]["Properties"]
    assert function["FunctionConfig"]["Runtime"] == "cloudfront-js-2.0"
    code = function["FunctionCode"]
    # cloudfront-js-2.0: at most 10 KB, no modules, no network, no timers
    assert len(code.encode()) < 10_240
    assert not re.search(r"\b(require|import|fetch|setTimeout|async|await|XMLHttpRequest)\b", code)
    if shutil.which("node") is None:
        pytest.skip("node runs the CloudFront function's JavaScript")
    events = [{"response": {"statusCode": status, "statusDescription": "",
                            "headers": {k: {"value": v} for k, v in headers.items()}}} for status, headers in CASES]
    script = code + f"\nconsole.log(JSON.stringify({json.dumps(events)}.map(e => handler(e))));\n"
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    got = [(r["statusCode"], {k: v["value"] for k, v in r["headers"].items()}) for r in json.loads(done.stdout)]
    assert got == [restore_challenge(status, headers) for status, headers in CASES]
    assert got[0] == (401, {"www-authenticate": CHALLENGE, "content-type": "application/json"})
    assert json.loads(done.stdout)[0]["statusDescription"] == "Unauthorized"


# -- countersign smoke --origin-url: what only AWS can prove, checked after a deploy -------------------


def _direct(status: int, body: str):
    """An httpx2 client whose requests get ``status`` and ``body``, and the requests it was sent."""
    import httpx2

    sent = []

    def answer(request):
        sent.append(request)
        return httpx2.Response(status, content=body.encode(), headers={"content-type": "application/json"})

    return httpx2.AsyncClient(transport=httpx2.MockTransport(answer)), sent


@pytest.mark.anyio
async def test_smoke_tells_aws_wafs_refusal_from_the_functions(resources):
    from countersign.cli.smoke import StepFailed, check_origin_closed, check_origin_url
    from countersign.surfaces.http.origin import FORBIDDEN

    url = check_origin_url("https://abc123.execute-api.eu-west-1.amazonaws.com/origin/")
    assert url == "https://abc123.execute-api.eu-west-1.amazonaws.com/origin"
    waf_body = stack().resolve(resources["OriginWebAcl"]["Properties"])["CustomResponseBodies"][
        "not-through-cloudfront"]["Content"]
    client, sent = _direct(403, waf_body)
    async with client:
        assert await check_origin_closed(client, url) == "a direct request to the REST API refused by AWS WAF"
    [request] = sent
    assert str(request.url) == f"{url}/mcp" and request.method == "POST"
    assert ORIGIN_HEADER not in {k.lower() for k in request.headers}  # it goes around CloudFront
    for status, body, said in ((403, json.dumps(FORBIDDEN), "reached the function (its own 403): AWS WAF is not on"),
                               (200, "{}", "answered 200, not AWS WAF's 403"),
                               (502, "{}", "answered 502")):
        client, _ = _direct(status, body)
        async with client:
            with pytest.raises(StepFailed) as failed:
                await check_origin_closed(client, url)
        assert failed.value.step == "origin" and said in failed.value.message
    for wrong in ("http://abc123.execute-api.eu-west-1.amazonaws.com/origin", "https://x.example/?a=1", "ftp://x"):
        with pytest.raises(Exception, match="OriginApiUrl"):
            check_origin_url(wrong)
