"""The example deployment the template tests resolve template.yaml against.

:func:`stack` is a :class:`tests.deploy.cfn.Stack` (CloudFormation's intrinsic functions,
evaluated) with example parameters and example names and ARNs for the resources, so the checks see
what a deployed stack would. Also here: the functions and their kinds, the example ARNs the checks
compare with, and the IAM actions of a statement and of the store's DynamoDB calls.
"""

from __future__ import annotations

import re

from tests.deploy.cfn import ACCOUNT, REGION, Stack
from tests.support.aws import REPO_ROOT

HTTP_FUNCTIONS = {"McpFunction": "countersign.handlers.mcp.handler", "ApiFunction": "countersign.handlers.api.handler"}
# Not behind the REST API: the table's stream (OUTBOX inserts) and a schedule (every minute).
BACKGROUND_FUNCTIONS = {"NotifierFunction": "countersign.handlers.notifier.handler",
                        "SweeperFunction": "countersign.handlers.sweeper.handler"}
FUNCTIONS = {**HTTP_FUNCTIONS, **BACKGROUND_FUNCTIONS}
KIND = {"McpFunction": "mcp", "ApiFunction": "api", "NotifierFunction": "notifier", "SweeperFunction": "sweeper"}
PACKAGE = REPO_ROOT / "functions" / "countersign"
TABLE_ARN = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/countersign-Table-X"
SIGNING_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:SigningKeySecret-AbCdEf"
STATE_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:StateKeysSecret-GhIjKl"
ORIGIN_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:OriginVerifySecret-MnOpQr"
SMOKE_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:SmokeSecret-StUvWx"
VAPID_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:VapidKeySecret-YzAbCd"
SECRETS = ("SigningKeySecret", "StateKeysSecret", "OriginVerifySecret", "VapidKeySecret")
CONFIGURATION_SET = "SesConfigurationSet-AbC123"
ALARM_TOPIC = f"arn:aws:sns:{REGION}:{ACCOUNT}:countersign-AlarmTopic-X"
TOPIC_KEY = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/0000aaaa-1111-2222-3333-444455556666"
EDGE_WEB_ACL = f"arn:aws:wafv2:us-east-1:{ACCOUNT}:global/webacl/countersign-edge/a1b2c3d4"
ORIGIN_WEB_ACL = f"arn:aws:wafv2:{REGION}:{ACCOUNT}:regional/webacl/countersign-origin/e5f6a7b8"


def stack(**parameters) -> Stack:
    return Stack(
        parameters={"FromAddress": "countersign@example.com", "SenderDomain": "example.com", **parameters},
        refs={
            "Table": "countersign-Table-X",
            "SigningKeySecret": SIGNING_ARN,
            "StateKeysSecret": STATE_ARN,
            "OriginVerifySecret": ORIGIN_ARN,
            "VapidKeySecret": VAPID_ARN,
            "RestApi": "abc123",
            "RestApiStage": "origin",
            "RestApiDeployment8801860b": "dep123",
            "ApiGatewayAccount": "countersign-ApiGatewayAccount-X",
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
            "TopicKey": TOPIC_KEY,
            "LogBucket": "countersign-logbucket-x",
            "SenderDomainIdentity": "example.com",
            "SmokeFunction": "countersign-SmokeFunction-X",
            "SmokeSecret": SMOKE_ARN,
            "SmokeCanary": "countersign-smoke",
            "SmokeLogGroup": "countersign-SmokeLogGroup-X",
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
            "RestApiAccessLogGroup.Arn": "arn:aws:logs:eu-west-1:123456789012:log-group:access",
            "RestApi.RootResourceId": "root123",
            "OriginWebAcl.Arn": ORIGIN_WEB_ACL,
            "ChallengeFunction.FunctionARN": "arn:cf-challenge",
            "ApiGatewayCloudWatchRole.Arn": f"arn:aws:iam::{ACCOUNT}:role/countersign-ApiGatewayCloudWatchRole-X",
            "NotifierDLQ.QueueName": "countersign-NotifierDLQ-X",
            "LogBucket.Arn": "arn:aws:s3:::countersign-logbucket-x",
            "LogBucket.DomainName": "countersign-logbucket-x.s3.amazonaws.com",
            "EdgeWebAcl.Arn": EDGE_WEB_ACL,
            **{f"SenderDomainIdentity.DkimDNSTokenName{i}": f"token{i}._domainkey.example.com" for i in (1, 2, 3)},
            **{f"SenderDomainIdentity.DkimDNSTokenValue{i}": f"token{i}.dkim.amazonses.com" for i in (1, 2, 3)},
            "SmokeFunction.Arn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:countersign-SmokeFunction-X",
            "SmokeCanaryRole.Arn": f"arn:aws:iam::{ACCOUNT}:role/countersign-SmokeCanaryRole-X",
            "SmokeCanaryAlarm.Arn": f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:countersign-SmokeCanaryAlarm-X",
        },
    )


def statement_actions(statement) -> list[str]:
    action = statement["Action"]
    return action if isinstance(action, list) else [action]


def store_operations() -> set[str]:
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


def rest_api_routes(resources: dict) -> dict[tuple[str, str], str]:
    """The REST API's methods as ``(HTTP method, path) -> function``: each method's resource path
    (its PathParts up to the root) and the function whose alias its integration invokes."""

    def path_of(resource_id) -> str:
        if isinstance(resource_id, dict) and "Fn::GetAtt" in resource_id:  # RestApi.RootResourceId
            return ""
        resource = resources[resource_id["Ref"]]["Properties"]
        return f"{path_of(resource['ParentId'])}/{resource['PathPart']}"

    routes = {}
    for res in resources.values():
        if res["Type"] != "AWS::ApiGateway::Method":
            continue
        props = res["Properties"]
        uri, variables = props["Integration"]["Uri"]["Fn::Sub"]
        assert uri.endswith("/functions/${Alias}/invocations"), uri
        routes[(props["HttpMethod"], path_of(props["ResourceId"]))] = variables["Alias"]["Ref"].removesuffix(".Alias")
    return routes
