"""checkov's policy checks over template.yaml as CloudFormation applies it (SAM's transform, offline:
tests/deploy/sam_translate.py), with no finding left unsuppressed and every suppression written
beside its reason in the resource's own metadata (``Metadata: checkov: skip: - id, comment``).

checkov lives in its own virtualenv (``.venv-checkov``, made by ``scripts/bootstrap --sam``, which
scripts/test runs) and never goes online here: ``--skip-download`` leaves out the vendor's
guidelines and severities, and where Linux allows it the scan runs without a network at all
(``unshare -rn``). One scan of the translated template takes about 12 s on a 2-core machine.

SAM's transform keeps every resource whatever the parameters (conditions are decided at deploy),
but checkov leaves out a resource whose condition is false with the parameters' defaults. So the
scan runs with the optional parts that are off by default turned on (:data:`SCANNED_WITH`: the
smoke canary, the Route 53 records) and covers the conditional ones too: the web ACL made in
us-east-1, the topics' key, the backup plan and its vault lock, the canary and its function.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.deploy.tools import tool_env
from tests.support.aws import REPO_ROOT, TEMPLATE_PATH, load_template

CHECKOV_VENV = REPO_ROOT / ".venv-checkov"
SAM_PYTHON = REPO_ROOT / ".venv-sam" / "bin" / "python"
# Parameter defaults the scanned template is given, so that checkov sees every optional resource.
SCANNED_WITH = {"SmokeTest": "true", "HostedZoneId": "Z0EXAMPLE", "DomainName": "confirm.example.com",
                "CertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/abc"}
# Findings worth acting on that the template fixes, so checkov must pass them (issue 45's review).
MUST_PASS = {
    ("CKV_AWS_68", "AWS::CloudFront::Distribution.Distribution"): "AWS WAF on the CloudFront distribution",
    ("CKV_AWS_86", "AWS::CloudFront::Distribution.Distribution"): "CloudFront standard logs",
    ("CKV_AWS_18", "AWS::S3::Bucket.SiteBucket"): "S3 access logs for the site bucket",
    ("CKV_AWS_21", "AWS::S3::Bucket.SiteBucket"): "versioning of the site bucket",
    ("CKV_AWS_26", "AWS::SNS::Topic.SesEventsTopic"): "an encrypted SES events topic (it names recipients)",
    ("CKV_AWS_26", "AWS::SNS::Topic.AlarmTopic"): "an encrypted alarm topic",
    # The REST API in front of the functions (its AWS WAF: tests/deploy/test_origin.py; checkov runs
    # no check of a stage's web ACL on CloudFormation).
    ("CKV_AWS_76", "AWS::ApiGateway::Stage.RestApiStage"): "the REST API's access log",
    ("CKV_AWS_73", "AWS::ApiGateway::Stage.RestApiStage"): "X-Ray tracing from API Gateway",
}


def _checkov() -> Path:
    path = CHECKOV_VENV / "bin" / "checkov"
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run `scripts/bootstrap --sam` (scripts/test does) to install checkov "
                    f"into .venv-checkov", pytrace=False)
    return path


def _offline(args: list[str]) -> list[str]:
    """``args`` without a network namespace of its own, where Linux lets an unprivileged user make one."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn", *args]
    return args


@pytest.fixture(scope="module")
def scan(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("checkov")
    translated = folder / "template.json"
    translate = REPO_ROOT / "tests" / "deploy" / "sam_translate.py"
    done = subprocess.run([str(SAM_PYTHON), str(translate), str(TEMPLATE_PATH)],
                          capture_output=True, text=True, timeout=120, env=tool_env())
    assert done.returncode == 0, done.stderr[-3000:]
    template = json.loads(done.stdout)
    for name, value in SCANNED_WITH.items():
        template["Parameters"][name]["Default"] = value
    translated.write_text(json.dumps(template))
    env = dict(tool_env(), BC_SKIP_MAPPING="TRUE", CHECKOV_RUN_SCA_PACKAGE_SCAN_V2="false", LOG_LEVEL="ERROR")
    args = [str(_checkov()), "--file", str(translated), "--framework", "cloudformation", "--skip-download",
            "--compact", "--output", "json"]
    done = subprocess.run(_offline(args), capture_output=True, text=True, timeout=300, env=env, cwd=folder)
    assert done.stdout.strip(), f"checkov printed nothing (exit {done.returncode}):\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout)
    report = report[0] if isinstance(report, list) else report
    assert report["check_type"] == "cloudformation" and report["summary"]["parsing_errors"] == 0
    return report


def test_checkov_finds_nothing_unsuppressed(scan):
    failed = [f"{f['check_id']} {f['resource']}: {f['check_name']}" for f in scan["results"]["failed_checks"]]
    assert failed == [], "checkov findings (fix them, or suppress one in its resource's Metadata with the reason):\n" \
        + "\n".join(failed)
    passed = {(f["check_id"], f["resource"]) for f in scan["results"]["passed_checks"]}
    for check, what in MUST_PASS.items():
        assert check in passed, f"{check} ({what}) must pass, not be suppressed"


def test_every_suppression_says_why_beside_the_resource(scan):
    """Each skip is in template.yaml, on the resource it concerns, with a reason a reviewer can
    weigh (not a placeholder), and checkov applied it (nothing suppressed that no longer fires)."""
    template = load_template()
    written = {}
    for name, resource in template["Resources"].items():
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", []):
            assert set(skip) == {"id", "comment"}, (name, skip)
            assert len(skip["comment"].split()) >= 8, f"{name} {skip['id']}: say why, in a sentence"
            written[(name, skip["id"])] = skip["comment"]
    applied = {(f["resource"].split(".", 1)[1], f["check_id"]) for f in scan["results"]["skipped_checks"]}
    assert applied == set(written), f"written but not applied: {set(written) - applied}; " \
                                    f"applied but not written: {applied - set(written)}"
