"""template.yaml's background functions: the notifier on the table's stream (OUTBOX inserts, a
dead-letter queue for batches it gave up on) and the sweeper on a schedule; and, for every
function, its own requirements, what its cold start must not import and that none emails right
after filing.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.deploy.cfn import ACCOUNT, REGION
from tests.deploy.example_stack import FUNCTIONS, KIND, PACKAGE, TABLE_ARN, stack, statement_actions
from tests.support.aws import REPO_ROOT

WEB = {"mcp", "mcp-types", "uvicorn", "fastapi", "starlette", "mangum", "sse-starlette"}


def _requirement_names(kind):
    lines = (REPO_ROOT / "infra" / f"requirements-{kind}.txt").read_text().splitlines()
    return {
        re.split(r"[\[=<>]", line.strip())[0].lower() for line in lines if line.strip() and not line.startswith("#")
    }


def test_each_function_has_its_own_requirements_and_only_mcp_gets_the_sdk():
    names = {kind: _requirement_names(kind) for kind in KIND.values()}
    mcp, api = names["mcp"], names["api"]
    assert {"mcp", "mcp-types"} <= mcp and not {"mcp", "mcp-types", "uvicorn"} & api
    for kind in ("notifier", "sweeper"):  # no MCP SDK, no web framework: a plain handler
        assert not WEB & names[kind], f"requirements-{kind}.txt brings {WEB & names[kind]}"
        assert {"pydantic", "pynacl", "aws-lambda-powertools"} <= names[kind]
    for kind, found in names.items():
        assert {"boto3", "botocore"} <= found, kind  # pinned: never mixed with the runtime's boto3
    pins = {}
    for kind in KIND.values():
        for line in (REPO_ROOT / "infra" / f"requirements-{kind}.txt").read_text().splitlines():
            if "==" in line:
                name, version = line.split("==")
                assert pins.setdefault(name, version) == version, f"{name} pinned differently per function"


# What each entry module must not import at its cold start: the MCP SDK costs ~1.5 s of import,
# and the background functions need no web framework either.
NEVER_IMPORTED = {
    "ApiFunction": ("mcp", "mcp_types"),
    "NotifierFunction": ("mcp", "mcp_types", "fastapi", "starlette", "mangum", "uvicorn"),
    "SweeperFunction": ("mcp", "mcp_types", "fastapi", "starlette", "mangum", "uvicorn"),
}


@pytest.mark.parametrize("function", sorted(NEVER_IMPORTED))
def test_the_handler_imports_without_what_it_does_not_need(tmp_path, function):
    """The check as a one-liner in a fresh interpreter, with the function's template environment
    (literal keys instead of ARNs; a DynamoDB endpoint on a closed local port: import makes no call)."""
    import os
    import secrets
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("COUNTERSIGN_", "POWERTOOLS_", "AWS_"))}
    env.update(stack().environment(function))
    env.update(COUNTERSIGN_SIGNING_KEY=secrets.token_urlsafe(48), COUNTERSIGN_STATE_KEYS=secrets.token_urlsafe(48),
               COUNTERSIGN_DATA=str(tmp_path), AWS_DEFAULT_REGION=REGION, AWS_ACCESS_KEY_ID="testing",
               AWS_SECRET_ACCESS_KEY="testing", AWS_ENDPOINT_URL="http://127.0.0.1:9", AWS_EC2_METADATA_DISABLED="true")
    if function == "ApiFunction":
        env.update(COUNTERSIGN_ORIGIN_SECRET=secrets.token_urlsafe(48))
    module = FUNCTIONS[function].rsplit(".", 1)[0]
    check = (f"import {module} as m, sys; "
             f"bad = [n for n in sys.modules if n.split('.')[0] in {NEVER_IMPORTED[function]!r}]; "
             "assert not bad, bad; assert callable(m.handler); "
             "assert m.runtime.desk.on_filed is None, 'emails inline'")
    done = subprocess.run([sys.executable, "-c", check], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_no_function_emails_right_after_filing(function):
    """On AWS the table's stream drives the notifier: every entry module builds its runtime with
    deliver_inline=False (an inline email from the MCP function would be a second one)."""
    source = (PACKAGE / "handlers" / f"{KIND[function]}.py").read_text()
    assert re.search(r"runtime = build\(load\(\), deliver_inline=False[,)]", source)


# -- the stream, the dead-letter queue and the schedule -------------------------------------------


def test_the_notifier_reads_only_new_notifications_from_the_stream(resources):
    from tests.support.streams import filter_patterns, passes_filter, stream_event_source

    s = stack()
    assert resources["Table"]["Properties"]["StreamSpecification"] == {"StreamViewType": "NEW_IMAGE"}
    source = s.resolve(stream_event_source())
    assert source["FunctionName"] == "countersign-NotifierFunction-X"
    assert source["EventSourceArn"] == f"{TABLE_ARN}/stream/2026-12-01T00:00:00.000"
    assert source["StartingPosition"] == "LATEST"
    assert 1 <= source["BatchSize"] <= 25
    assert source["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert source["BisectBatchOnFunctionError"] is True
    assert (source["MaximumRetryAttempts"], source["MaximumRecordAgeInSeconds"]) == (5, 3600)
    assert source["DestinationConfig"] == {
        "OnFailure": {"Destination": f"arn:aws:sqs:{REGION}:{ACCOUNT}:countersign-NotifierDLQ-X"}
    }
    assert filter_patterns() == [
        {"eventName": ["INSERT"], "dynamodb": {"NewImage": {"sk": {"S": ["OUTBOX"]}}}},
        {"eventName": ["INSERT", "MODIFY"], "dynamodb": {"NewImage": {"sk": {"S": ["WHEVENT"]},
                                                                       "done": {"BOOL": [False]}}}},
    ]

    def record(event, pk, sk, **more):
        return {"eventName": event, "dynamodb": {"Keys": {"pk": {"S": pk}, "sk": {"S": sk}},
                                                 "NewImage": {"pk": {"S": pk}, "sk": {"S": sk}, **more}}}

    assert passes_filter(record("INSERT", "OUTBOX#c_1", "OUTBOX"))
    # a webhook event not yet fanned out, new or written over a deadline's lapse (a withdrawal's)
    assert passes_filter(record("INSERT", "WHEVENT#c_1.filed", "WHEVENT", done={"BOOL": False}))
    assert passes_filter(record("MODIFY", "WHEVENT#c_1.lapsed", "WHEVENT", done={"BOOL": False}))
    for other in (record("MODIFY", "OUTBOX#c_1", "OUTBOX"), record("INSERT", "CARD#c_1", "CARD"),
                  record("INSERT", "RATE#p_1", "EMAIL"), record("REMOVE", "OUTBOX#c_1", "OUTBOX"),
                  record("MODIFY", "WHEVENT#c_1.filed", "WHEVENT", done={"BOOL": True}),
                  record("INSERT", "WHOOK#wh_1", "LOG#000000001000#msg_1", done={"BOOL": False})):
        assert not passes_filter(other), other
    # The key the filter names is the key the store writes.
    from countersign.store.dynamodb import codec

    assert codec.outbox_key("c_1") == {"pk": {"S": "OUTBOX#c_1"}, "sk": {"S": "OUTBOX"}}


def test_the_dead_letter_queue_is_encrypted_and_kept_long(resources):
    queue = resources["NotifierDLQ"]
    assert queue["Type"] == "AWS::SQS::Queue"
    props = stack().resolve(queue["Properties"])
    assert props == {"MessageRetentionPeriod": 1209600, "SqsManagedSseEnabled": True}
    key = "arn:aws:kms:eu-west-1:123456789012:key/0123abcd-0000-0000-0000-000000000000"
    assert stack(KmsKeyArn=key).resolve(queue["Properties"]) == {"MessageRetentionPeriod": 1209600,
                                                                 "KmsMasterKeyId": key}
    # Only the notifier's on-failure destination may send to it: exactly that, on that queue.
    for function in FUNCTIONS:
        sqs = [st for st in stack().statements(function) if any(a.startswith("sqs:") for a in statement_actions(st))]
        if function != "NotifierFunction":
            assert sqs == [], function
            continue
        [statement] = sqs
        assert statement_actions(statement) == ["sqs:SendMessage"]
        assert statement["Resource"] == f"arn:aws:sqs:{REGION}:{ACCOUNT}:countersign-NotifierDLQ-X"


def test_the_sweeper_runs_every_minute_without_retries(resources):
    props = resources["SweeperFunction"]["Properties"]
    [event] = props["Events"].values()
    assert event == {"Type": "Schedule", "Properties": {
        "Schedule": "rate(1 minute)", "Description": event["Properties"]["Description"], "Enabled": True}}
    assert props["EventInvokeConfig"] == {"MaximumEventAgeInSeconds": 60, "MaximumRetryAttempts": 0}
    events = {name: list(resources[name]["Properties"].get("Events", {}).values()) for name in FUNCTIONS}
    assert events["McpFunction"] == events["ApiFunction"] == []  # reached through the REST API's methods
    # SES's bounces and complaints (an SNS topic; countersign.surfaces.background.feedback); the
    # table's stream through an event source mapping of its own (NotifierStreamMapping).
    assert [e["Type"] for e in events["NotifierFunction"]] == ["SNS"]


def test_leases_outlast_every_function_and_the_sweep_interval_is_the_schedule(resources):
    s = stack()
    for function in FUNCTIONS:
        env = s.environment(function)
        assert int(env["COUNTERSIGN_RUN_LEASE"]) > s.function_property(function, "Timeout"), function
        assert env["COUNTERSIGN_SWEEP_INTERVAL"] == "60"
    [event] = resources["SweeperFunction"]["Properties"]["Events"].values()
    assert event["Properties"]["Schedule"] == "rate(1 minute)"


def in_a_fresh_interpreter(code: str) -> None:
    """Run ``code`` in a new Python process (nothing imported yet); it asserts what it checks."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_mcp_function_never_imports_py_webauthn():
    """Passkeys belong to the confirm API (docs/passkeys.md): everything the MCP handler imports,
    the gate and its passkey policy included, and the runtime built with every toolset, load no
    py_webauthn (nor cbor2, which only it needs)."""
    in_a_fresh_interpreter(
        "import sys, tempfile\n"
        "from countersign.surfaces.mcp.transport import lambda_app\n"
        "from countersign.surfaces.mcp.server import build_server\n"
        "from countersign.surfaces.oauth.endpoints import OAuthEndpoints\n"
        "from countersign.runtime import build\n"
        "from countersign.settings import load\n"
        "import countersign.gate.ask, countersign.gate.runner\n"
        "runtime = build(load({'COUNTERSIGN_DATA': tempfile.mkdtemp()}), deliver_inline=False)\n"
        "assert 'set_passkey_policy' in runtime.registry.actions\n"
        "found = sorted(m for m in ('webauthn', 'cbor2', 'OpenSSL') if m in sys.modules)\n"
        "assert not found, found\n"
    )


def test_the_confirm_api_loads_py_webauthn_only_for_a_ceremony():
    """The confirm API's cold start (its app built on a runtime with every toolset) loads no
    py_webauthn, cbor2 or cryptography's key types: most of its requests are page loads and
    clicks. The first ceremony loads py_webauthn, and works."""
    in_a_fresh_interpreter(
        "import sys, tempfile\n"
        "from countersign.surfaces.api.app import create_api\n"
        "from countersign.runtime import build\n"
        "from countersign.settings import load\n"
        "create_api(build(load({'COUNTERSIGN_DATA': tempfile.mkdtemp()}), deliver_inline=False))\n"
        "found = sorted(m for m in ('webauthn', 'cbor2', 'cryptography.hazmat.primitives.asymmetric.ec')"
        " if m in sys.modules)\n"
        "assert not found, found\n"
        "from countersign.identity.passkeys.ceremony import RelyingParty, authentication_options\n"
        "options = authentication_options(RelyingParty.of('http://localhost:8000'), b'c' * 32)\n"
        "assert options['rpId'] == 'localhost' and options['userVerification'] == 'required', options\n"
        "assert 'webauthn' in sys.modules\n"
    )


# In a fresh interpreter with no system zone database (PYTHONTZPATH empty: zoneinfo then reads only
# the tzdata package, as on a minimal image), with every distribution outside the bundle blocked.
_ZONES_CHECK = r"""
import importlib.abc, importlib.metadata, json, os, re, sys
keep = set(json.loads(os.environ["ALLOWED"])) | {"countersign"}
canonical = lambda name: re.sub(r"[-_.]+", "-", name).lower()
blocked = {m for m, dists in importlib.metadata.packages_distributions().items()
           if not any(canonical(d) in keep for d in dists)}
class NotInTheBundle(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(name, name=name)
sys.meta_path.insert(0, NotInTheBundle())
from countersign.notify.quiet_hours import quiet_until
from countersign.store.workspaces import QuietHours, check_quiet_hours, BadInput
quiet = QuietHours("22:00", "07:00", "Europe/Berlin")
try:
    check_quiet_hours(quiet)
except BadInput as refused:
    print("refused:", refused)
    raise SystemExit(3)
# 2026-12-06 23:30 in Berlin (22:30 UTC): quiet until 07:00 Berlin, 06:00 UTC
print(quiet_until(quiet, 1796596200))
"""


@pytest.mark.parametrize("kind", sorted(set(KIND.values())))
def test_each_bundle_carries_the_time_zones_it_names(kind):
    """Quiet hours name an IANA zone (Europe/Berlin); Lambda's images are minimal and promise no
    system zone database, so each bundle brings its own (tzdata). Without it the same check refuses
    every zone, which the second run shows."""
    import json
    import os
    import sys

    from tests.deploy.rehearsal import requirement_closure

    closure = requirement_closure(REPO_ROOT / "infra" / f"requirements-{kind}.txt")
    assert "tzdata" in closure, f"requirements-{kind}.txt does not bring tzdata"

    def run(allowed: set[str]) -> subprocess.CompletedProcess:
        env = {**os.environ, "PYTHONTZPATH": "", "ALLOWED": json.dumps(sorted(allowed))}
        return subprocess.run([sys.executable, "-c", _ZONES_CHECK], env=env, capture_output=True, text=True,
                              timeout=60)

    with_bundle = run(closure)
    assert with_bundle.returncode == 0, with_bundle.stderr[-2000:] + with_bundle.stdout
    assert with_bundle.stdout.strip() == "1796623200"
    without = run(closure - {"tzdata"})
    assert without.returncode == 3 and "quiet_hours.zone" in without.stdout, (without.stdout, without.stderr[-800:])
