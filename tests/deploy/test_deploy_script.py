"""``infra/deploy`` run against stand-ins for ``sam`` and ``aws`` on PATH: tiny scripts that record
their arguments and answer canned JSON-free text, as the real CLIs would with ``--output text``.
This checks the script's behaviour (the order of its steps, the quota check before deploying, the
refusals, the DNS records it prints), not the product's code; nothing leaves the machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.support.aws import REPO_ROOT

SCRIPT = REPO_ROOT / "infra" / "deploy"
CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/abc"

STUB = textwrap.dedent('''\
    #!{python}
    """A stand-in for the `{name}` CLI: records its arguments, answers from world.json."""
    import json, os, re, sys
    here = os.path.dirname(os.path.abspath(__file__))
    world = json.load(open(os.path.join(here, "world.json")))
    args = sys.argv[1:]
    with open(os.path.join(here, "calls.jsonl"), "a") as log:
        log.write(json.dumps(["{name}", *args]) + "\\n")
    deployed = os.path.join(here, "deployed")
    if "{name}" == "sam":
        if args[:1] == ["deploy"]:
            open(deployed, "w").close()
        sys.exit(0)
    def option(flag):
        return args[args.index(flag) + 1] if flag in args else None
    command = " ".join(args[:2])
    if command == "sts get-caller-identity":
        print("123456789012")
    elif command == "lambda get-account-settings":
        print(f"{{world['quota']}}\\t{{world['unreserved']}}")
    elif command == "lambda get-function-concurrency":
        print(world.get("reserved", {{}}).get(option("--function-name"), "None"))
    elif command == "cloudformation describe-stacks":
        if not (world.get("exists") or os.path.exists(deployed)):
            print("An error occurred (ValidationError): Stack does not exist", file=sys.stderr)
            sys.exit(254)
        key = re.search(r"OutputKey=='(\\w+)'", option("--query")).group(1)
        print(world["outputs"].get(key, ""))
    elif command == "acm describe-certificate":
        print("\\t".join(world["certificate"]))
    elif command == "sesv2 get-email-identity":
        print(world.get("verified", "False"))
    elif command == "sesv2 get-account":
        print(world.get("production", "False"))
    elif command in ("s3 sync", "s3 cp"):
        pass
    elif command == "apigateway get-account":
        print(world.get("apigateway_role", "None"))
    elif command == "cloudfront create-invalidation":
        print("I2EXAMPLE")
    else:
        print(f"stub aws: unexpected call {{args}}", file=sys.stderr)
        sys.exit(1)
''')

OUTPUTS = {
    "PublicUrl": "https://d111111abcdef8.cloudfront.net",
    "ConfirmPageUrl": "https://d111111abcdef8.cloudfront.net/confirm",
    "DistributionDomainName": "d111111abcdef8.cloudfront.net",
    "SiteBucketName": "countersign-sitebucket-x",
    "DistributionId": "E2EXAMPLE",
    "TableName": "countersign-Table-X",
    "AlarmTopicArn": "arn:aws:sns:eu-west-1:123456789012:countersign-AlarmTopic-X",
    "SesDkimRecords": ("aaa._domainkey.example.com CNAME aaa.dkim.amazonses.com; "
                       "bbb._domainkey.example.com CNAME bbb.dkim.amazonses.com; "
                       "ccc._domainkey.example.com CNAME ccc.dkim.amazonses.com"),
    "McpFunctionName": "countersign-McpFunction-X",
    "OriginApiUrl": "https://abc123.execute-api.eu-west-1.amazonaws.com/origin",
}


@pytest.fixture
def deploy(tmp_path):
    """Run infra/deploy with the stubs first on PATH: (exit status, output, the calls in order)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sam", "aws"):
        stub = bin_dir / name
        stub.write_text(STUB.format(python=sys.executable, name=name))
        stub.chmod(0o755)

    def run(*args: str, world: dict | None = None, config: str | None = None):
        (bin_dir / "world.json").write_text(json.dumps({"quota": 1000, "unreserved": 1000, "outputs": OUTPUTS,
                                                        **(world or {})}))
        (bin_dir / "calls.jsonl").unlink(missing_ok=True)
        (bin_dir / "deployed").unlink(missing_ok=True)
        argv = ["bash", str(SCRIPT)]
        if config is not None:
            path = tmp_path / "deploy.conf"
            path.write_text(textwrap.dedent(config))
            argv += ["--config", str(path)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
        done = subprocess.run([*argv, *args], capture_output=True, text=True, env=env, timeout=60, check=False)
        calls_file = bin_dir / "calls.jsonl"
        calls = [json.loads(line) for line in calls_file.read_text().splitlines()] if calls_file.exists() else []
        return done.returncode, done.stdout + done.stderr, calls

    return run


CONFIG = """\
    stack=countersign
    region=eu-west-1
    # a comment, and a blank line

    FromAddress=countersign@example.com
    SenderDomain=example.com   # trailing comment
    AlarmEmail=ops@example.com
    """


def steps(calls: list[list[str]]) -> list[str]:
    return [" ".join(c[:3]) for c in calls]


def test_one_command_checks_builds_deploys_uploads_and_prints_the_dns_records(deploy):
    status, said, calls = deploy(config=CONFIG)

    assert status == 0, said
    order = steps(calls)
    first = {name: order.index(name) for name in ("aws sts get-caller-identity", "aws lambda get-account-settings",
                                                   "sam build", "sam deploy --stack-name", "aws s3 sync",
                                                   "aws cloudfront create-invalidation")}
    assert list(first) == sorted(first, key=first.get), order  # checks, build, deploy, upload, in that order
    [deploy_call] = [c for c in calls if c[:2] == ["sam", "deploy"]]
    overrides = deploy_call[deploy_call.index("--parameter-overrides") + 1:]
    assert overrides == ["FromAddress=countersign@example.com", "SenderDomain=example.com",
                         "AlarmEmail=ops@example.com", "ReserveConcurrency=true"]
    assert deploy_call[2:12] == ["--stack-name", "countersign", "--region", "eu-west-1", "--capabilities",
                                 "CAPABILITY_IAM", "--resolve-s3", "--no-fail-on-empty-changeset",
                                 "--no-confirm-changeset", "--parameter-overrides"]
    assert "reserved concurrency: 67 of the account's 1000 (leaves 933 unreserved)" in said
    assert ("countersign is deployed: https://d111111abcdef8.cloudfront.net (MCP endpoint: "
            "https://d111111abcdef8.cloudfront.net/mcp)") in said
    assert ("DNS for SES: add these three records to the zone of example.com (SES verifies it within minutes to 72 "
            "hours):\n      aaa._domainkey.example.com  CNAME  aaa.dkim.amazonses.com\n"
            "      bbb._domainkey.example.com  CNAME  bbb.dkim.amazonses.com\n"
            "      ccc._domainkey.example.com  CNAME  ccc.dkim.amazonses.com\n") in said
    assert "SES production access" in said and "confirm the subscription email AWS sent to ops@example.com" in said
    assert "countersign workspace create --store dynamodb://countersign-Table-X" in said
    assert ("countersign smoke --url https://d111111abcdef8.cloudfront.net --origin-url "
            "https://abc123.execute-api.eu-west-1.amazonaws.com/origin --credentials smoke.json") in said


def test_an_accounts_own_api_gateway_logs_role_is_kept(deploy):
    """A REST API logs through API Gateway's account-level CloudWatch role: an account that has one
    (not this stack's) keeps it; the stack's own, from an earlier deploy, stays the stack's."""
    theirs = "arn:aws:iam::123456789012:role/their-apigateway-logs"
    status, said, calls = deploy(config=CONFIG, world={"apigateway_role": theirs})
    assert status == 0, said
    [deploy_call] = [c for c in calls if c[:2] == ["sam", "deploy"]]
    assert deploy_call[-1] == "ApiGatewayLogsRole=existing"
    assert f"API Gateway's CloudWatch role: the account's own ({theirs})" in said
    ours = "arn:aws:iam::123456789012:role/countersign-ApiGatewayCloudWatchRole-X"
    status, said, calls = deploy(config=CONFIG, world={"apigateway_role": ours, "exists": True,
                                                      "outputs": {**OUTPUTS, "ApiGatewayLogsRoleArn": ours}})
    assert status == 0, said
    [deploy_call] = [c for c in calls if c[:2] == ["sam", "deploy"]]
    assert not any(o.startswith("ApiGatewayLogsRole=") for o in deploy_call)


def test_a_small_quota_reserves_nothing_and_asking_for_it_refuses_before_any_build(deploy):
    small = {"quota": 10, "unreserved": 10}
    status, said, calls = deploy(config=CONFIG, world=small)
    assert status == 0, said
    [deploy_call] = [c for c in calls if c[:2] == ["sam", "deploy"]]
    assert deploy_call[-1] == "ReserveConcurrency=false"
    assert "reserved concurrency: none (the account's quota is 10 with 10 unreserved; reserving 67" in said

    status, said, calls = deploy("--reserve-concurrency", "true", config=CONFIG, world=small)
    assert status == 2
    assert "ReserveConcurrency was asked for, but reserving 67 of the account's Lambda concurrency quota (10" in said
    assert "Nothing was deployed." in said
    assert not [c for c in calls if c[0] == "sam"] and "aws lambda get-account-settings" in steps(calls)

    status, said, calls = deploy("--reserve-concurrency", "false", config=CONFIG, world=small)
    assert status == 0 and "aws lambda get-account-settings" not in steps(calls)


def test_a_redeploy_counts_what_the_stack_reserves_already(deploy):
    world = {"quota": 1000, "unreserved": 120, "exists": True, "reserved": {"countersign-McpFunction-X": "40"}}
    status, said, calls = deploy(config=CONFIG, world=world)
    assert status == 0, said
    assert "reserved concurrency: 67 of the account's 1000 (leaves 93 unreserved)" not in said
    assert "reserving 67\n    would leave 93, and Lambda keeps 100" in said
    assert ["aws", "lambda", "get-function-concurrency", "--function-name", "countersign-McpFunction-X",
            "--query", "ReservedConcurrentExecutions", "--output", "text"] in calls


def test_a_domain_without_a_certificate_is_refused_before_anything_runs(deploy):
    status, said, calls = deploy("--param", "DomainName=confirm.example.com", config=CONFIG)
    assert status == 2
    assert "DomainName=confirm.example.com needs CertificateArn" in said
    assert "aws acm request-certificate --region us-east-1 --domain-name confirm.example.com " \
           "--validation-method DNS" in said
    assert not [c for c in calls if c[0] == "sam"]


def test_a_certificate_not_yet_issued_prints_its_validation_record_and_deploys_nothing(deploy):
    pending = {"certificate": ["PENDING_VALIDATION", "_x1.confirm.example.com.", "_y1.acm-validations.aws."]}
    status, said, calls = deploy("--param", "DomainName=confirm.example.com", "--param",
                                 f"CertificateArn={CERTIFICATE}", config=CONFIG, world=pending)
    assert status == 3
    assert "The certificate for confirm.example.com is PENDING_VALIDATION, not ISSUED" in said
    assert "    _x1.confirm.example.com.  CNAME  _y1.acm-validations.aws.\n" in said
    assert ["aws", "acm", "describe-certificate", "--region", "us-east-1", "--certificate-arn", CERTIFICATE] == \
        [c for c in calls if c[1] == "acm"][0][:7]
    assert not [c for c in calls if c[0] == "sam"]


def test_with_a_hosted_zone_and_an_issued_certificate_the_records_are_made_not_printed(deploy):
    issued = {"certificate": ["ISSUED", "_x1.confirm.example.com.", "_y1.acm-validations.aws."],
              "production": "True"}
    status, said, calls = deploy("--param", "DomainName=confirm.example.com", "--param",
                                 f"CertificateArn={CERTIFICATE}", "--param", "HostedZoneId=Z0123456789ABC",
                                 "--stack", "cs-prod", config=CONFIG, world=issued)
    assert status == 0, said
    assert "certificate for confirm.example.com: issued" in said
    assert "the DKIM records of example.com are in Route 53 zone Z0123456789ABC" in said
    assert "DNS for confirm.example.com: alias records (A and AAAA) to the distribution are in Route 53 zone " \
           "Z0123456789ABC." in said
    assert "dkim.amazonses.com" not in said and "SES production access" not in said
    [deploy_call] = [c for c in calls if c[:2] == ["sam", "deploy"]]
    assert deploy_call[3] == "cs-prod" and "HostedZoneId=Z0123456789ABC" in deploy_call
    assert ["aws", "s3", "sync", "web/", "s3://countersign-sitebucket-x/"] == [c for c in calls if c[1] == "s3"][0][:5]


def test_a_custom_domain_without_a_zone_gets_its_cname_and_a_verified_domain_no_dkim(deploy):
    issued = {"certificate": ["ISSUED", "-", "-"], "verified": "True"}
    status, said, _ = deploy("--param", "DomainName=confirm.example.com", "--param", f"CertificateArn={CERTIFICATE}",
                             config=CONFIG, world=issued)
    assert status == 0, said
    assert "      confirm.example.com  CNAME  d111111abcdef8.cloudfront.net\n" in said
    assert "DNS for SES" not in said


def test_required_parameters_and_odd_arguments_are_refused(deploy):
    status, said, calls = deploy("--region", "eu-west-1")
    assert status == 2 and "FromAddress and SenderDomain are required" in said and calls == []
    status, said, calls = deploy("--param", "lowercase=1", config=CONFIG)
    assert status == 2 and "not a template parameter: 'lowercase=1'" in said and calls == []
    status, said, calls = deploy("--reserve-concurrency", "maybe", config=CONFIG)
    assert status == 2 and "--reserve-concurrency is auto, true or false, not 'maybe'" in said and calls == []
    status, said, _ = deploy("--no-build", "--confirm-changeset", config=CONFIG)
    assert status == 0 and "2/5 sam build: skipped (--no-build)" in said


def test_the_example_config_names_only_template_parameters(template):
    text = (REPO_ROOT / "infra" / "deploy.example.conf").read_text()
    names = [line.split("=")[0].lstrip("# ") for line in text.splitlines()
             if "=" in line and not line.startswith("# ") or line.startswith("# ") and "=" in line.split()[1]]
    parameters = {n for n in names if n[:1].isupper()}
    assert parameters and parameters <= set(template["Parameters"]), parameters - set(template["Parameters"])


def test_shellcheck_finds_nothing():
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed; `bash -n` below still checks the syntax")
    done = subprocess.run([shellcheck, str(SCRIPT), str(REPO_ROOT / "infra" / "upload-site.sh")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


def test_the_script_parses():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], check=False).returncode == 0
    assert os.access(SCRIPT, os.X_OK)
