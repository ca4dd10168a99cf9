"""template.yaml as an operator needs it: alarms to a topic on every failure that matters, each
documented; reserved concurrency and a table ceiling; deletion protection and optional backups;
canary deploys rolled back by the alarms (checked on SAM's own transform of the template); SES
feedback wired to the notifier.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess

import pytest

from tests.deploy.example_stack import ALARM_TOPIC, FUNCTIONS, HTTP_FUNCTIONS, PACKAGE, stack
from tests.deploy.tools import SAM_VENV, tool_env
from tests.support.aws import REPO_ROOT, TEMPLATE_PATH

DOCS = REPO_ROOT / "docs" / "alarms.md"
CONCURRENCY = {"McpFunction": "40", "ApiFunction": "20", "NotifierFunction": "5", "SweeperFunction": "2"}


def alarms(resources) -> dict[str, dict]:
    return {name: r for name, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"}


@functools.cache
def default_stack():
    return stack()


def metrics_of(alarm: dict) -> list[tuple[str, str, dict]]:
    """(namespace, metric name, dimensions) of every metric an alarm reads, resolved."""
    s = default_stack()
    props = s.resolve(alarm["Properties"])
    if "MetricName" in props:
        found = [(props["Namespace"], props["MetricName"], props.get("Dimensions", []))]
    else:
        found = [(m["MetricStat"]["Metric"]["Namespace"], m["MetricStat"]["Metric"]["MetricName"],
                  m["MetricStat"]["Metric"].get("Dimensions", [])) for m in props["Metrics"] if "MetricStat" in m]
    return [(ns, name, {d["Name"]: d["Value"] for d in dims}) for ns, name, dims in found]


@functools.cache
def emitted_metric_names() -> frozenset[str]:
    """Every metric name the package counts (a quoted snake_case name passed to a metric or event)."""
    from countersign import notify
    from countersign.notify import push, slack, webhooks
    from countersign.platform import telemetry
    from countersign.surfaces.background import feedback, notifier
    from countersign.surfaces.http import challenge, request_limits

    names = set(telemetry.CARD_EVENTS) | set(notify.EVENTS) | set(slack.EVENTS) | set(webhooks.EVENTS)
    names |= set(push.EVENTS)
    names |= {notifier.NOT_DELIVERED, feedback.BOUNCED, feedback.COMPLAINED, feedback.SOFT_BOUNCE}
    names |= {challenge.CARRIED, request_limits.COUNT_SKIPPED}
    source = "".join(p.read_text() for p in PACKAGE.rglob("*.py"))
    for name in ("card_recovered", "signing_key_missing"):
        assert f'"{name}"' in source, name
        names.add(name)
    return frozenset(names)


def test_every_failure_the_issue_names_has_an_alarm_to_the_topic(resources):
    found = alarms(resources)
    read = {name: metrics_of(alarm) for name, alarm in found.items()}
    what = {name: {(ns, metric) for ns, metric, _ in metrics} for name, metrics in read.items()}
    expected = {
        "RestApi5xxAlarm": {("AWS/ApiGateway", "5XXError"), ("AWS/ApiGateway", "Count")},
        # (with the MCP 401s the functions carry past API Gateway as 200s: test_the_4xx_alarm_…)
        "RestApi4xxAlarm": {("AWS/ApiGateway", "4XXError"), ("AWS/ApiGateway", "Count"),
                            ("countersign", "refusal_carried")},
        "TableSystemErrorsAlarm": {("AWS/DynamoDB", "SystemErrors")},
        "TableThrottlesAlarm": {("AWS/DynamoDB", "ThrottledRequests")},
        "SesBounceRateAlarm": {("AWS/SES", "Reputation.BounceRate")},
        "SesComplaintRateAlarm": {("AWS/SES", "Reputation.ComplaintRate")},
        "CardsLeftRunningAlarm": {("countersign", "card_recovered")},
        "NotificationsFailingAlarm": {("countersign", "email_failed"), ("countersign", "notification_not_delivered")},
        "SlackFailingAlarm": {("countersign", "slack_failed")},
        "WebhooksFailingAlarm": {("countersign", "webhook_failed"), ("countersign", "webhook_disabled")},
        "SmokeCanaryAlarm": {("CloudWatchSynthetics", "SuccessPercent")},
        "NotifierDLQAlarm": {("AWS/SQS", "ApproximateNumberOfMessagesVisible")},
        "DriftRefusalsAlarm": {("countersign", "card_refused_drift"), ("countersign", "card_confirmed")},
        "SigningKeyMissingAlarm": {("countersign", "signing_key_missing")},
        "PushFailingAlarm": {("countersign", "push_failed")},
    }
    for function in FUNCTIONS:
        short = function.removesuffix("Function")
        expected[f"{short}ErrorsAlarm"] = {("AWS/Lambda", "Errors")}
        expected[f"{short}ThrottlesAlarm"] = {("AWS/Lambda", "Throttles")}
    # A sweeper whose schedule stopped; a notifier that falls behind the table's stream.
    expected["SweeperHeartbeatAlarm"] = {("AWS/Lambda", "Invocations")}
    expected["NotifierIteratorAgeAlarm"] = {("AWS/Lambda", "IteratorAge")}
    assert what == expected
    s = stack()
    for name, alarm in found.items():
        props = s.resolve(alarm["Properties"])
        assert props["AlarmActions"] == [ALARM_TOPIC] and props["OKActions"] == [ALARM_TOPIC], name
        # Silence is healthy for every alarm but the heartbeats (the sweeper's, the smoke canary's),
        # where it is the failure.
        heartbeat = name in ("SweeperHeartbeatAlarm", "SmokeCanaryAlarm")
        assert props["TreatMissingData"] == ("breaching" if heartbeat else "notBreaching"), name
        assert f"docs/alarms.md#{name.lower()}" in props["AlarmDescription"], name


def test_the_4xx_alarm_counts_the_refusals_carried_past_api_gateway_as_4xx(resources):
    """An MCP 401 leaves the function as a 200 (restored by CloudFront's ChallengeFunction), so
    API Gateway's 4XXError misses it: the alarm adds the functions' own count of them, read as
    none where no refusal was carried in the period (FILL), over every request API Gateway saw."""
    props = stack().resolve(resources["RestApi4xxAlarm"]["Properties"])
    by_id = {m["Id"]: m for m in props["Metrics"]}
    assert by_id["rate"]["Expression"] == "IF(requests >= 50, 100 * (refused + FILL(carried, 0)) / requests, 0)"
    assert [m["Id"] for m in props["Metrics"] if m.get("ReturnData", True)] == ["rate"]
    carried = by_id["carried"]["MetricStat"]
    assert carried["Metric"] == {"Namespace": "countersign", "MetricName": "refusal_carried",
                                 "Dimensions": [{"Name": "service", "Value": "countersign"}]}
    assert (carried["Period"], carried["Stat"]) == (by_id["refused"]["MetricStat"]["Period"], "Sum")
    [api] = [w for w in dashboard_widgets(resources) if w["properties"].get("title", "").startswith("REST API")]
    assert ["countersign", "refusal_carried", "service", "countersign",
            {"label": "4xx carried as 200 (MCP 401s)"}] in api["properties"]["metrics"]


def test_a_stopped_sweeper_schedule_alarms(resources):
    """The sweeper runs every minute: fewer than one invocation in 10 minutes, or no data at all
    (a disabled or deleted schedule publishes nothing), is the alarm."""
    props = stack().resolve(resources["SweeperHeartbeatAlarm"]["Properties"])
    assert (props["Namespace"], props["MetricName"], props["Statistic"]) == ("AWS/Lambda", "Invocations", "Sum")
    assert props["Dimensions"] == [{"Name": "FunctionName", "Value": "countersign-SweeperFunction-X"}]
    assert (props["Period"], props["EvaluationPeriods"], props["Threshold"]) == (600, 1, 1)
    assert props["ComparisonOperator"] == "LessThanThreshold" and props["TreatMissingData"] == "breaching"
    [event] = resources["SweeperFunction"]["Properties"]["Events"].values()
    assert event["Properties"]["Schedule"] == "rate(1 minute)"  # 10 expected in each period
    age = stack().resolve(resources["NotifierIteratorAgeAlarm"]["Properties"])
    assert (age["MetricName"], age["Statistic"], age["Threshold"]) == ("IteratorAge", "Maximum", 600000)
    assert age["Dimensions"] == [{"Name": "FunctionName", "Value": "countersign-NotifierFunction-X"}]


def dashboard_widgets(resources) -> list[dict]:
    """The dashboard's widgets, its ``${Name.Attr}`` references kept as text; a variable of the
    Fn::Sub (an alarm that exists only under a condition) as its text when the condition holds."""
    body, variables = resources["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    for name, value in variables.items():
        condition, present, absent = value["Fn::If"]
        assert absent == "" and condition in resources_conditions(resources), name
        body = body.replace(f"${{{name}}}", present["Fn::Sub"])
    return json.loads(body)["widgets"]


def resources_conditions(resources) -> set[str]:
    return {r["Condition"] for r in resources.values() if "Condition" in r}


def test_the_dashboard_shows_every_alarm(resources):
    [widget] = [w for w in dashboard_widgets(resources) if w["type"] == "alarm"]
    shown = widget["properties"]["alarms"]
    assert len(shown) == len(set(shown))
    assert sorted(shown) == sorted(f"${{{name}.Arn}}" for name in alarms(resources))


def test_each_alarm_reads_the_right_dimensions(resources):
    from countersign.store.dynamodb import DynamoDBStore  # noqa: F401  (the store's calls, below)
    from tests.deploy.example_stack import store_operations

    operations = {a.split(":")[1] for a in store_operations()} - {"ConditionCheckItem"}
    operations |= {"TransactWriteItems"}
    for name, alarm in alarms(resources).items():
        metrics = metrics_of(alarm)
        for namespace, metric, dims in metrics:
            if namespace == "AWS/ApiGateway":
                # REST API: 4XXError/5XXError by ApiName and Stage (an HTTP API's 4xx/5xx by ApiId)
                assert dims == {"ApiName": "countersign-api", "Stage": "origin"}, name
                assert metric in ("4XXError", "5XXError", "Count"), name
            elif namespace == "AWS/Lambda":
                function = next(f for f in FUNCTIONS if name.startswith(f.removesuffix("Function")))
                want = {"FunctionName": f"countersign-{function}-X"}
                if metric == "Errors" and function in HTTP_FUNCTIONS:  # the canary gate: on the alias
                    want["Resource"] = f"countersign-{function}-X:live"
                assert dims == want, name
            elif namespace == "AWS/DynamoDB":
                assert dims["TableName"] == "countersign-Table-X", name
            elif namespace == "countersign":
                assert dims == {"service": "countersign"}, name  # Powertools' default dimension
                assert metric in emitted_metric_names(), f"{name}: nothing emits {metric}"
            elif namespace == "AWS/SQS":
                assert dims == {"QueueName": "countersign-NotifierDLQ-X"}
            elif namespace == "CloudWatchSynthetics":
                assert dims == {"CanaryName": "countersign-smoke"}, name
            else:
                assert namespace == "AWS/SES" and dims == {}, name
        if name.startswith("Table"):  # every operation the store calls is summed
            assert {d["Operation"] for _, _, d in metrics} == operations, name


def test_every_alarm_is_documented_with_what_to_do(resources):
    text = DOCS.read_text()
    headings = {h.strip().lower() for h in re.findall(r"^### `?(\w+)`?", text, re.M)}
    for name in alarms(resources):
        assert name.lower() in headings, f"docs/alarms.md has no section for {name}"
    sections = re.split(r"^### ", text, flags=re.M)[1:]
    for section in sections:
        assert "**What to do**" in section, section.splitlines()[0]
    assert "alarms.md" in (REPO_ROOT / "docs" / "README.md").read_text()


def test_the_alarm_topic_emails_the_address_given_only(resources, template):
    subscription = resources["AlarmEmailSubscription"]
    assert subscription["Condition"] == "HasAlarmEmail"
    assert subscription["Properties"] == {"TopicArn": {"Ref": "AlarmTopic"}, "Protocol": "email",
                                          "Endpoint": {"Ref": "AlarmEmail"}}
    assert not stack().condition("HasAlarmEmail") and stack(AlarmEmail="ops@example.com").condition("HasAlarmEmail")
    pattern = template["Parameters"]["AlarmEmail"]["AllowedPattern"]
    assert re.fullmatch(pattern, "") and re.fullmatch(pattern, "ops@example.com")
    assert not re.fullmatch(pattern, "ops")


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_each_function_has_reserved_concurrency(function):
    """Reserved when asked (infra/deploy asks when the account's quota allows it); by default none,
    so a deploy on a new account with a small quota does not fail."""
    reserving = stack(ReserveConcurrency="true")
    assert str(reserving.resolve(stack().functions()[function]["Properties"]["ReservedConcurrentExecutions"])) \
        == CONCURRENCY[function]
    assert stack(ReserveConcurrency="true", McpConcurrency="7").resolve(
        stack().functions()["McpFunction"]["Properties"]["ReservedConcurrentExecutions"]) == "7"
    assert stack().resolve({"x": stack().functions()[function]["Properties"]["ReservedConcurrentExecutions"]}) == {}
    # An account too small to reserve any: the property disappears (Ref AWS::NoValue).
    from tests.deploy.cfn import NO_VALUE

    off = stack(ReserveConcurrency="false")
    assert off.resolve(off.functions()[function]["Properties"]["ReservedConcurrentExecutions"]) is NO_VALUE
    total = sum(int(v) for v in CONCURRENCY.values())
    assert total <= 900, "the defaults must leave Lambda's 100 unreserved in a 1,000 account"


def test_the_table_is_protected_and_capped(resources):
    props = stack().resolve(resources["Table"]["Properties"])
    assert props["DeletionProtectionEnabled"] is True
    assert props["OnDemandThroughput"] == {"MaxReadRequestUnits": "400", "MaxWriteRequestUnits": "200"}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert resources["Table"]["DeletionPolicy"] == "Retain"


def test_backups_by_default_and_a_vault_lock_when_asked_for(resources):
    backup = {n: r for n, r in resources.items() if r["Type"].startswith("AWS::Backup::") or n == "BackupRole"}
    assert set(backup) == {"BackupVault", "BackupPlan", "BackupRole", "BackupSelection"}
    assert all(r["Condition"] == "HasBackupPlan" for r in backup.values())
    # On by default (35 days, as long as point-in-time recovery reaches); 0 turns it off.
    assert stack().condition("HasBackupPlan") and not stack(BackupRetentionDays="0").condition("HasBackupPlan")
    vault = resources["BackupVault"]["Properties"]
    assert "LockConfiguration" not in stack().resolve(vault)  # BackupVaultLock=none
    assert stack(BackupVaultLock="governance").resolve(vault)["LockConfiguration"] == {"MinRetentionDays": "35"}
    assert stack(BackupVaultLock="compliance").resolve(vault)["LockConfiguration"] == {
        "MinRetentionDays": "35", "ChangeableForDays": 3}
    assert not stack(BackupRetentionDays="0", BackupVaultLock="compliance").condition("LocksBackupVault")
    s = stack(BackupRetentionDays="35")
    s.attributes["BackupRole.Arn"] = "arn:aws:iam::123456789012:role/backup"
    s.refs.update(BackupPlan="plan-id", BackupVault="countersign-table")
    [rule] = s.resolve(resources["BackupPlan"]["Properties"])["BackupPlan"]["BackupPlanRule"]
    assert rule["Lifecycle"] == {"DeleteAfterDays": "35"} and rule["TargetBackupVault"] == "countersign-table"
    selection = s.resolve(resources["BackupSelection"]["Properties"])["BackupSelection"]
    assert selection["Resources"] == ["arn:aws:dynamodb:eu-west-1:123456789012:table/countersign-Table-X"]
    assert resources["BackupVault"]["DeletionPolicy"] == "Retain"


def test_ses_feedback_reaches_the_notifier(resources):
    s = stack()
    config = resources["SesConfigurationSet"]["Properties"]
    assert config["SuppressionOptions"] == {"SuppressedReasons": ["BOUNCE", "COMPLAINT"]}
    destination = resources["SesEventDestination"]["Properties"]
    assert destination["ConfigurationSetName"] == {"Ref": "SesConfigurationSet"}
    assert destination["EventDestination"]["MatchingEventTypes"] == ["bounce", "complaint"]
    assert destination["EventDestination"]["SnsDestination"] == {"TopicARN": {"Ref": "SesEventsTopic"}}
    event = resources["NotifierFunction"]["Properties"]["Events"]["SesFeedback"]
    assert event == {"Type": "SNS", "Properties": {"Topic": {"Ref": "SesEventsTopic"}}}
    for function in FUNCTIONS:  # every sender names the set; the policy allows it
        assert s.environment(function)["COUNTERSIGN_SES_CONFIGURATION_SET"] == s.refs["SesConfigurationSet"]


def translated(*parameters: str) -> dict:
    python = SAM_VENV / "bin" / "python"
    done = subprocess.run([str(python), str(REPO_ROOT / "tests" / "deploy" / "sam_translate.py"),
                           str(TEMPLATE_PATH), *parameters], capture_output=True, text=True, timeout=120,
                          env=tool_env())
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)["Resources"]


def test_canary_deploys_are_rolled_back_by_the_alarms():
    """SAM's transform: each HTTP function gets the alias ``live``, which the REST API's methods
    and its invoke permission name (so traffic shifting applies), and a CodeDeploy deployment
    group on the alarms, rolling back on an alarm or a failure."""
    out = translated()
    for function, alarm in (("McpFunction", "McpErrorsAlarm"), ("ApiFunction", "ApiErrorsAlarm")):
        short = function.removesuffix("Function")
        alias = f"{function}Aliaslive"
        assert out[alias]["Type"] == "AWS::Lambda::Alias" and out[alias]["Properties"]["Name"] == "live"
        assert out[f"{short}Method"]["Properties"]["Integration"]["Uri"]["Fn::Sub"][1] == {"Alias": {"Ref": alias}}
        assert out[f"{short}InvokePermission"]["Properties"]["FunctionName"] == {"Ref": alias}
        group = out[f"{function}DeploymentGroup"]["Properties"]
        assert group["AlarmConfiguration"] == {"Enabled": True, "Alarms": [{"Name": {"Ref": alarm}},
                                                                           {"Name": {"Ref": "RestApi5xxAlarm"}}]}
        assert set(group["AutoRollbackConfiguration"]["Events"]) >= {"DEPLOYMENT_FAILURE", "DEPLOYMENT_STOP_ON_ALARM"}
        assert "Canary10Percent5Minutes" in json.dumps(group["DeploymentConfigName"])
    for function in ("NotifierFunction", "SweeperFunction"):  # their events; no alias, no canary
        assert f"{function}Aliaslive" not in out
    # The type is the DeploymentType parameter (its default above).
    for function in ("McpFunction", "ApiFunction"):
        preference = stack().functions()[function]["Properties"]["DeploymentPreference"]
        assert preference["Type"] == {"Ref": "DeploymentType"}


def test_the_docs_tail_the_log_groups_the_functions_write_to(resources):
    """Every function writes to the template's own log group (LoggingConfig.LogGroup), so the
    shell helper in docs/alarms.md asks the function for its group instead of guessing
    /aws/lambda/<name>, which stays empty."""
    for function in FUNCTIONS:
        group = resources[function]["Properties"]["LoggingConfig"]["LogGroup"]
        assert resources[group["Ref"]]["Type"] == "AWS::Logs::LogGroup", function
    text = DOCS.read_text()
    [helper] = re.findall(r"^logs\(\) \{.*\}$", text, re.M)
    assert "/aws/lambda/" not in helper and "$(group $1)" in helper
    assert "--query LoggingConfig.LogGroup" in text
