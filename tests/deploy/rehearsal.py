"""A deployed stack in miniature, for tests/deploy/test_rehearsal.py.

* AWS is one moto server on 127.0.0.1 (DynamoDB with the table built from template.yaml, SES
  with the sender's domain verified, Secrets Manager holding the two generated keys and the
  CloudFront origin secret).
* Each function is a :class:`ProcessInstance`: its own Python process (tests/deploy/worker.py)
  with exactly the environment template.yaml resolves for it, ``AWS_ENDPOINT_URL`` pointing at
  the moto server. Its import (settings, keys from Secrets Manager, store client) is the cold
  start; events to the HTTP functions are API Gateway REST API (1.0) events, as CloudFront forwards
  them (the execute-api Host, an edge as the connecting address, the viewer's address in
  ``CloudFront-Viewer-Address``, and the ``X-Countersign-Origin`` header the template's dynamic
  reference resolves to). The notifier gets the table's stream records (read from the moto
  server, the template's filter applied, tests/support/streams.py), the sweeper schedule events.
* The operator's first workspace and connection come from the real CLI, in a subprocess, with
  nothing but the table name, the public URL and (fake) AWS credentials.
"""

from __future__ import annotations

import email
import json
import os
import re
import secrets
import string
import subprocess
import sys
import threading
import urllib.request
from email import policy
from pathlib import Path

from tests.deploy.cfn import ACCOUNT, REGION, Stack
from tests.support.apigw import HOST, as_the_viewer_gets_it
from tests.support.aws import REPO_ROOT, create_table_from_template

WORKER = Path(__file__).with_name("worker.py")
# Each function's bundle: infra/requirements-KIND.txt (infra/Makefile).
KIND = {"McpFunction": "mcp", "ApiFunction": "api", "NotifierFunction": "notifier", "SweeperFunction": "sweeper"}
TABLE = "countersign-Table-1REHEARSAL0"
CLOUDFRONT = "d111111abcdef8.cloudfront.net"
FROM_ADDRESS = "countersign@example.com"
OWNER = "owner@example.com"
EDGE = "130.176.0.1"  # where CloudFront's requests to the API come from
CONFIGURATION_SET = "SesConfigurationSet-REHEARSAL"
_SECRET_REFERENCE = re.compile(
    r"^\{\{resolve:secretsmanager:(?P<id>.+?):SecretString"
    r"(?::(?P<key>[^:]*):(?P<stage>[^:]*):(?P<version>[^:}]*)|:(?P<key2>[^:]*)(?::(?P<stage2>[^:}]*))?)?\}\}$")


def resolve_secret_reference(text: str, secretsmanager) -> str:
    """What CloudFormation makes of ``{{resolve:secretsmanager:ID:SecretString[:key[:stage[:version]]]}}``
    (AWS docs: dynamic-references-secretsmanager). No JSON keys here: the whole secret string."""
    match = _SECRET_REFERENCE.match(text)
    assert match, f"not a secretsmanager dynamic reference CloudFormation would resolve: {text!r}"
    assert not (match["key"] or match["key2"]), "a JSON key: the secrets here are plain strings"
    stage, version = match["stage"] or match["stage2"], match["version"]
    options = {"VersionId": version} if version else {"VersionStage": stage} if stage else {}
    return secretsmanager.get_secret_value(SecretId=match["id"], **options)["SecretString"]


def requirement_closure(path: Path) -> set[str]:
    """Every distribution ``pip install -r path`` brings in (resolved in this virtualenv)."""
    import importlib.metadata as md

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    todo = [Requirement(line.split("#")[0].strip()) for line in path.read_text().splitlines()
            if line.split("#")[0].strip()]
    seen: set[str] = set()
    while todo:
        req = todo.pop()
        key = f"{canonicalize_name(req.name)}[{','.join(sorted(req.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        for raw in md.requires(req.name) or []:
            dep = Requirement(raw)
            if dep.marker is None or any(dep.marker.evaluate({"extra": e}) for e in (req.extras or {""})):
                todo.append(dep)
    return {key.split("[")[0] for key in seen}


def generated_secret() -> str:
    """What GenerateSecretString {PasswordLength: 64, ExcludePunctuation: true} produces."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(64))


def aws_env(endpoint: str) -> dict[str, str]:
    """Fake credentials, the region, every AWS client pointed at the moto server, nothing else."""
    return {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION, "AWS_ENDPOINT_URL": endpoint,
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def base_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    # This tree's package, whatever checkout the virtualenv's editable install points at.
    return {**{k: os.environ[k] for k in keep if k in os.environ}, "PYTHONPATH": str(REPO_ROOT / "functions")}


class MotoStack:
    def __init__(self, tmp: Path):
        from moto.server import ThreadedMotoServer

        self.tmp = tmp
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        host, port = self.server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        # The server shares this process's moto backends: start from empty ones.
        urllib.request.urlopen(urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST"), timeout=10)
        import boto3

        self.session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                             region_name=REGION)
        self.dynamodb = self.client("dynamodb")
        create_table_from_template(self.dynamodb, TABLE)
        self.client("sesv2").create_email_identity(EmailIdentity=FROM_ADDRESS.split("@")[1])
        # The template's SesConfigurationSet (moto accepts sends naming it; it publishes no events).
        self.client("sesv2").create_configuration_set(ConfigurationSetName=CONFIGURATION_SET)
        sm = self.client("secretsmanager")
        self.key_values = {"signing": generated_secret(), "state": generated_secret(), "origin": generated_secret(),
                           "vapid": generated_secret()}
        self.signing_arn = sm.create_secret(
            Name="SigningKeySecret-rehearsal", SecretString=self.key_values["signing"])["ARN"]
        self.state_arn = sm.create_secret(
            Name="StateKeysSecret-rehearsal", SecretString=self.key_values["state"])["ARN"]
        self.origin_arn = sm.create_secret(
            Name="OriginVerifySecret-rehearsal", SecretString=self.key_values["origin"])["ARN"]
        self.vapid_arn = sm.create_secret(
            Name="VapidKeySecret-rehearsal", SecretString=self.key_values["vapid"])["ARN"]
        self.stack = Stack(
            parameters={"FromAddress": FROM_ADDRESS, "SenderDomain": FROM_ADDRESS.split("@")[1]},
            refs={"Table": TABLE, "SigningKeySecret": self.signing_arn, "StateKeysSecret": self.state_arn,
                  "OriginVerifySecret": self.origin_arn, "VapidKeySecret": self.vapid_arn,
                  "RestApi": HOST.split(".")[0], "RestApiStage": "origin", "Distribution": "E1REHEARSAL",
                  "SesConfigurationSet": CONFIGURATION_SET},
            attributes={"Table.Arn": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{TABLE}",
                        "Table.StreamArn": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{TABLE}/stream/REHEARSAL",
                        "NotifierDLQ.Arn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:NotifierDLQ-REHEARSAL",
                        "Distribution.DomainName": CLOUDFRONT,
                        "SiteBucket.RegionalDomainName": "site.s3.eu-west-1.amazonaws.com",
                        "SiteOriginAccessControl.Id": "OACREHEARSAL"},
        )
        self.origin_headers = self.cloudfront_origin_headers()
        self.instances: list[ProcessInstance] = []

    def client(self, service: str):
        return self.session.client(service, endpoint_url=self.endpoint)

    def origin_web_acl_allows(self) -> list[str]:
        """The X-Countersign-Origin values AWS WAF on the REST API lets through (OriginWebAcl's
        rule, its dynamic references resolved as CloudFormation would from Secrets Manager)."""
        acl = self.stack.resolve(self.stack.template["Resources"]["OriginWebAcl"]["Properties"])
        [rule] = acl["Rules"]
        statement = rule["Statement"]
        matches = statement["OrStatement"]["Statements"] if "OrStatement" in statement else [statement]
        sm = self.client("secretsmanager")
        return [resolve_secret_reference(m["ByteMatchStatement"]["SearchString"], sm) for m in matches]

    def cloudfront_origin_headers(self) -> dict[str, str]:
        """The custom headers the distribution's API origin adds, as CloudFormation resolves them."""
        config = self.stack.template["Resources"]["Distribution"]["Properties"]["DistributionConfig"]
        [api] = [o for o in self.stack.resolve(config["Origins"]) if o["Id"] == "api"]
        sm = self.client("secretsmanager")
        return {
            h["HeaderName"].lower(): resolve_secret_reference(h["HeaderValue"], sm)
            if "{{resolve:" in h["HeaderValue"]
            else h["HeaderValue"]
            for h in api.get("OriginCustomHeaders", [])
        }

    @property
    def public_url(self) -> str:
        return f"https://{CLOUDFRONT}"

    def start(self, function: str) -> ProcessInstance:
        handler = self.stack.function_property(function, "Handler")
        env = {**base_env(), **self.stack.environment(function), **aws_env(self.endpoint)}
        # Only what the function's bundle holds is importable (tests/deploy/worker.py blocks the rest).
        kind = KIND[function]
        env["WORKER_ALLOWED"] = json.dumps(
            sorted(requirement_closure(REPO_ROOT / "infra" / f"requirements-{kind}.txt"))
        )
        instance = ProcessInstance(function, handler, env, self.tmp / f"{function}.log", self.origin_headers)
        self.instances.append(instance)
        return instance

    def stream(self):
        """The table's stream on the moto server, as the notifier's event source mapping reads it."""
        from tests.support.streams import TableStream

        return TableStream(self.session, TABLE, endpoint_url=self.endpoint)

    def cli(self, *args: str) -> dict:
        """``countersign ARGS`` as an operator runs it: their credentials, the table, the public URL."""
        env = {**base_env(), **aws_env(self.endpoint), "COUNTERSIGN_PUBLIC_URL": self.public_url,
               "COUNTERSIGN_DATA": str(self.tmp / "operator")}
        done = subprocess.run([sys.executable, "-m", "countersign.cli", *args], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"countersign {' '.join(args)} failed:\n{done.stderr}"
        return json.loads(done.stdout)

    def sent_mail(self) -> list[email.message.EmailMessage]:
        """Every message SES accepted (moto's backend lives in this process, behind the server)."""
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.ses.models import ses_backends

        out = []
        for message in ses_backends[DEFAULT_ACCOUNT_ID][REGION].sent_messages:
            raw = getattr(message, "raw_data", None)
            if raw is not None:
                out.append(email.message_from_string(raw, policy=policy.default))
        return out

    def logs_tail(self, lines: int = 40) -> str:
        """The last lines each function logged (stdout and stderr), for a failure's message."""
        out = []
        for instance in self.instances:
            for path in (instance.log_path, instance.stderr_path):
                text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
                tail = "\n".join(text.splitlines()[-lines:])
                out.append(f"--- {path.name} (last {lines} lines) ---\n{tail}")
        return "\n".join(out)

    def close(self):
        for instance in self.instances:
            instance.close()
        self.server.stop()


def mail_text(message: email.message.EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""


class ProcessInstance:
    """One warm Lambda instance in its own process (tests/deploy/worker.py)."""

    def __init__(self, function: str, handler: str, env: dict[str, str], log_path: Path,
                 origin_headers: dict[str, str] | None = None):
        self.function, self.handler, self.log_path = function, handler, log_path
        self.origin_headers = dict(origin_headers or {})
        self.stderr_path = log_path.with_suffix(".stderr")
        env = {**env, "WORKER_LOG": str(log_path)}
        self._stderr = open(self.stderr_path, "w")
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), handler, f"countersign-{function}"],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
        )
        self.lock = threading.Lock()
        self.ready: dict | None = None
        self.blocked = "WORKER_ALLOWED" in env
        self.invocations = 0
        self.request_ids: list[str] = []

    def wait_ready(self) -> dict:
        if self.ready is None:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(f"{self.function} died at import:\n{self.stderr_path.read_text()}")
            self.ready = json.loads(line)
        return self.ready

    def _ask(self, request: dict) -> dict:
        with self.lock:
            self.wait_ready()
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"{self.function} died:\n{self.stderr_path.read_text()[-4000:]}")
        return json.loads(line)

    def invoke(self, event: dict, *, through_cloudfront: bool = True) -> dict:
        """What CloudFront + the REST API hand the function: execute-api Host; the event's source
        address becomes the viewer's (``CloudFront-Viewer-Address``) and an edge connects, adding
        the distribution's origin headers. ``through_cloudfront=False``: a direct call to the
        execute-api URL, headers as the caller sent them."""
        event = json.loads(json.dumps(event))
        headers = event["headers"]
        headers["host"] = HOST
        if through_cloudfront:
            source = event["requestContext"]["identity"]
            headers.setdefault("cloudfront-viewer-address", f"{source['sourceIp']}:50123")
            source["sourceIp"] = EDGE
            headers.update(self.origin_headers)  # CloudFront replaces a viewer's own copy
        event["requestContext"]["domainName"] = HOST
        result = self.invoke_event(event, event["requestContext"]["requestId"])
        # and back through CloudFront: its viewer-response function (a refusal's WWW-Authenticate)
        return as_the_viewer_gets_it(result) if through_cloudfront else result

    def invoke_event(self, event: dict, correlation_id: str) -> dict:
        """Hand the function ``event`` as Lambda would; its log lines should carry ``correlation_id``."""
        self.invocations += 1
        self.request_ids.append(correlation_id)
        answer = self._ask({"op": "invoke", "event": event})
        if "error" in answer:
            raise AssertionError(f"{self.function} raised:\n{answer['error']}")
        return answer["result"]

    def calls(self) -> list[dict]:
        return self._ask({"op": "calls"})["calls"]

    def log(self, message: str) -> None:
        self._ask({"op": "log", "message": message})

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8") if self.log_path.exists() else ""

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.process.stdin.flush()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self._stderr.close()
