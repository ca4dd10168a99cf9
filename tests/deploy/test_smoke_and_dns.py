"""What the template adds for a first deploy and for the smoke test: SenderDomain's SES identity
and its DKIM records (as an output, or in Route 53 with a hosted zone), DomainName's alias records,
a domain refused without its certificate, and the optional canary that runs ``countersign smoke``
every 5 minutes with its alarm on the dashboard."""

from __future__ import annotations

import re

from tests.deploy.example_stack import SMOKE_ARN, stack
from tests.support.aws import REPO_ROOT

CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/abc"


def outputs(s) -> dict:
    return {k: s.resolve(v["Value"]) for k, v in s.template["Outputs"].items()
            if "Condition" not in v or s.condition(v["Condition"])}


def made(s) -> set[str]:
    return {name for name, r in s.template["Resources"].items() if "Condition" not in r or s.condition(r["Condition"])}


def test_the_stack_makes_the_ses_identity_and_prints_its_dkim_records(template):
    identity = template["Resources"]["SenderDomainIdentity"]
    assert identity["Type"] == "AWS::SES::EmailIdentity"
    s = stack()
    props = s.resolve(identity["Properties"])
    assert props["EmailIdentity"] == "example.com" and props["DkimAttributes"] == {"SigningEnabled": True}
    assert props["ConfigurationSetAttributes"] == {"ConfigurationSetName": "SesConfigurationSet-AbC123"}
    assert outputs(s)["SesDkimRecords"] == (
        "token1._domainkey.example.com CNAME token1.dkim.amazonses.com; "
        "token2._domainkey.example.com CNAME token2.dkim.amazonses.com; "
        "token3._domainkey.example.com CNAME token3.dkim.amazonses.com")
    assert not {"DkimRecord1", "DkimRecord2", "DkimRecord3", "DomainRecord"} & made(s)  # no zone: printed, not made
    existing = stack(SenderIdentity="existing")
    assert "SenderDomainIdentity" not in made(existing) and "SesDkimRecords" not in outputs(existing)


def test_with_a_hosted_zone_the_stack_makes_the_dns_records():
    s = stack(HostedZoneId="Z0123456789ABC", DomainName="confirm.example.com", CertificateArn=CERTIFICATE)
    assert {"DkimRecord1", "DkimRecord2", "DkimRecord3", "DomainRecord", "DomainRecordIpv6"} <= made(s)
    dkim = s.resolve(s.template["Resources"]["DkimRecord2"]["Properties"])
    assert dkim == {"HostedZoneId": "Z0123456789ABC", "Name": "token2._domainkey.example.com", "Type": "CNAME",
                    "TTL": "1800", "ResourceRecords": ["token2.dkim.amazonses.com"]}
    for name, kind in (("DomainRecord", "A"), ("DomainRecordIpv6", "AAAA")):
        record = s.resolve(s.template["Resources"][name]["Properties"])
        assert record == {"HostedZoneId": "Z0123456789ABC", "Name": "confirm.example.com", "Type": kind,
                          "AliasTarget": {"DNSName": "d111111abcdef8.cloudfront.net", "HostedZoneId": "Z2FDTNDATAQYW2"}}
    assert "DomainRecord" not in made(stack(HostedZoneId="Z0123456789ABC"))  # no custom domain: nothing to point


def test_a_domain_without_its_certificate_is_refused_not_ignored(template):
    rules = template["Rules"]
    domain = rules["DomainNeedsCertificate"]
    assert domain["RuleCondition"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "DomainName"}, ""]}]}
    [needs] = domain["Assertions"]
    assert needs["Assert"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "CertificateArn"}, ""]}]}
    assert "us-east-1" in needs["AssertDescription"]
    [needs] = rules["CertificateNeedsDomain"]["Assertions"]
    assert needs["Assert"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "DomainName"}, ""]}]}


def test_the_smoke_canary_is_off_by_default_and_runs_countersign_smoke_when_on(template):
    smoke = {"SmokeSecret", "SmokeFunction", "SmokeLogGroup", "SmokeCanaryRole", "SmokeCanary", "SmokeCanaryAlarm"}
    assert not smoke & made(stack())
    s = stack(SmokeTest="true")
    assert smoke <= made(s) and outputs(s)["SmokeSecretArn"] == SMOKE_ARN
    assert s.function_property("SmokeFunction", "Handler") == "countersign.handlers.smoke.handler"
    env = s.resolve(s.functions()["SmokeFunction"]["Properties"]["Environment"])["Variables"]
    assert env == {"COUNTERSIGN_SMOKE_URL": "https://d111111abcdef8.cloudfront.net",
                   "COUNTERSIGN_SMOKE_SECRET": SMOKE_ARN,
                   # and the REST API's own URL, which must refuse it (AWS WAF)
                   "COUNTERSIGN_SMOKE_ORIGIN_URL": "https://abc123.execute-api.eu-west-1.amazonaws.com/origin"}
    # It reaches the stack only through its public URL: it may read its credentials, nothing else.
    [statement] = s.statements("SmokeFunction")
    assert statement == {"Sid": "SmokeCredentials", "Effect": "Allow", "Action": "secretsmanager:GetSecretValue",
                         "Resource": SMOKE_ARN}
    assert re.search(r'^build-SmokeFunction:\n\tbash "\$\(INFRA\)build_function.sh" mcp ',
                     (REPO_ROOT / "infra" / "Makefile").read_text(), re.M)
    canary = s.resolve(template["Resources"]["SmokeCanary"]["Properties"])
    assert canary["Schedule"] == {"Expression": "rate(5 minutes)"} and canary["StartCanaryAfterCreation"] is True
    assert canary["RunConfig"]["EnvironmentVariables"] == {"SMOKE_FUNCTION": "countersign-SmokeFunction-X"}
    assert canary["ArtifactS3Location"] == "s3://countersign-logbucket-x/canary"
    assert 'raise Exception("countersign smoke failed: "' in canary["Code"]["Script"]
    role = s.resolve(template["Resources"]["SmokeCanaryRole"]["Properties"])
    [invoke] = [st for st in role["Policies"][0]["PolicyDocument"]["Statement"] if st["Sid"] == "RunSmoke"]
    assert invoke["Resource"] == "arn:aws:lambda:eu-west-1:123456789012:function:countersign-SmokeFunction-X"
    alarm = s.resolve(template["Resources"]["SmokeCanaryAlarm"]["Properties"])
    assert (alarm["Namespace"], alarm["MetricName"], alarm["Threshold"], alarm["EvaluationPeriods"]) == (
        "CloudWatchSynthetics", "SuccessPercent", 100, 2)
    assert alarm["TreatMissingData"] == "breaching"  # a canary that stopped proves nothing


def test_the_dashboard_lists_the_smoke_alarm_only_when_it_exists(template):
    body, variables = template["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    assert '"${PushFailingAlarm.Arn}"${SmokeAlarm}]' in body
    assert variables == {"SmokeAlarm": {"Fn::If": ["HasSmokeCanary", {"Fn::Sub": ', "${SmokeCanaryAlarm.Arn}"'}, ""]}}
