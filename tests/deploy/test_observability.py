"""Logs, metrics and traces: redaction (countersign.logs: no ticket, token, code or key in a log
line), the card events the desk reports for metrics and the Tracer only inside Lambda
(countersign.platform.telemetry).

Nothing here calls ``telemetry.setup()`` in the test process (it takes over the root
logger's handlers, as a Lambda function should); that runs in subprocesses and in the
rehearsal's worker processes.
"""

from __future__ import annotations

import io
import json
import logging
import os
import secrets
import string
import subprocess
import sys
import uuid

import anyio
import pytest

from countersign import settings as settings_mod
from countersign.core.card_states import Refusal, RefusalReason
from countersign.core.codes import new_code
from countersign.core.ids import new_id, new_secret_token
from countersign.core.tickets import Keyring, new_secret
from countersign.gate import clicks
from countersign.gate.ask import request_card
from countersign.identity import accounts
from countersign.identity.principal import Principal
from countersign.logs.filters import RedactFilter, redact_local_logs
from countersign.logs.redaction import REDACTED, redact
from countersign.platform import telemetry
from countersign.runtime import build
from tests.support.aws import REPO_ROOT
from tests.support.sample_toolset import TOOLSET as NOTES, seed_notes

R = REDACTED


def _ticket() -> str:
    keyring = Keyring.from_secrets([new_secret()])
    return keyring.sign(
        {
            "card_id": new_id("c_"),
            "workspace": new_id("w_"),
            "person": new_id("p_"),
            "connection": new_id("k_"),
            "tool": "suppress_domain",
            "fingerprint": "f" * 64,
            "arguments_digest": "d" * 64,
            "preview_digest": "p" * 64,
            "issued_at": 1_800_000_000,
            "expires_at": 1_800_086_400,
        }
    )


def _secrets() -> dict[str, str]:
    """One of each secret the product makes, made by the product's own generators."""
    alnum = string.ascii_letters + string.digits
    return {
        "ticket": _ticket(),
        "connection token": new_secret_token(accounts.CONNECTION_TOKEN_PREFIX),
        "sign-in token / session id": new_secret_token(),
        "csrf token": secrets.token_urlsafe(32),
        "signing key": new_secret(),
        "state key": secrets.token_urlsafe(48),
        "generated secret": "".join(secrets.choice(alnum) for _ in range(64)),
    }


@pytest.mark.parametrize("kind", sorted(_secrets()))
@pytest.mark.parametrize("shape", [
    "{}", "value={}", "Authorization: Bearer {}", "'authorization': 'Bearer {}'", '{{"token": "{}"}}',
    "https://confirm.example.com/signin#token={}", "__Host-cs_session={}; other=1", "failed for {} today",
])
def test_every_secret_kind_is_redacted_in_every_shape(kind, shape):
    for _ in range(20):  # random values: many draws of each
        value = _secrets()[kind]
        out = redact(shape.format(value))
        assert value not in out and R in out, out
        if "." in value:
            assert not any(part in out for part in value.split(".")), out


@pytest.mark.parametrize("shape", ["code={}", '"code": "{}"', "your confirmation code {} works", "codes: {}"])
def test_confirmation_codes_are_redacted(shape):
    for _ in range(50):
        code = new_code()
        out = redact(shape.format(code))
        assert code not in out and R in out, out


@pytest.mark.parametrize("text", [
    "card c_01m8n204hkrs959ks6v5ygbc1t confirmed by person:p_01m8n2cb5a76yg097ppy4e9zth",
    "statusCode: 200", '"code": "already_answered"', "error code 409", "email to owner@example.com failed",
    f"fingerprint {'ab12' * 16}",
    pytest.param(f"request {uuid.uuid4()}", id="request <a fresh uuid4>"),  # one id in every process of a run
    "Root=1-5759e988-bd862e3fe1be46a994272793",
    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:SigningKeySecret-AbCdEf",
    "POST /api/cards/c_01m8n204hkrs959ks6v5ygbc1t/confirm 200", "a basic idea", "tokens left: 5",
])
def test_what_is_not_secret_stays_readable(text):
    assert redact(text) == text


def test_a_logger_line_never_carries_a_secret_in_message_args_extra_or_exception():
    stream = io.StringIO()
    log = telemetry.make_logger(service=f"countersign-redaction-{uuid.uuid4().hex[:6]}", stream=stream,
                                level="DEBUG")
    found = _secrets()
    code = new_code()
    for name, value in found.items():
        log.info("plain %s: %s", name, value)
        log.info("in extra", extra={"detail": f"Bearer {value}", "nested": {"items": [f"ticket={value}"]}})
        try:
            raise ValueError(f"bad {name} {value}")
        except ValueError:
            log.exception("an exception")
    log.warning("your code %s", code)
    child = logging.getLogger(f"{log.service}.child")  # a package module's own stdlib logger
    child.error("child logger token=%s", found["connection token"])
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 * len(found) + 2
    for line in lines:
        record = json.loads(line)  # still JSON after redaction
        assert record["service"] == log.service
    text = "\n".join(lines)
    leaked = [
        name
        for name, value in found.items()
        if value in text or any(p in text for p in value.split(".") if len(p) > 16)
    ]
    assert not leaked and code not in text, leaked
    assert text.count(R) >= 3 * len(found) + 2


def test_redact_filter_covers_plain_handlers_too():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactFilter())
    log = logging.getLogger(f"redact-filter-{uuid.uuid4().hex[:6]}")
    log.addHandler(handler)
    log.propagate = False
    ticket = _ticket()
    try:
        raise RuntimeError(f"ticket {ticket}")
    except RuntimeError:
        log.exception("failed with %s", ticket)
    assert ticket not in stream.getvalue() and R in stream.getvalue()


def test_the_local_servers_lines_are_redacted_through_the_handlers_it_has(monkeypatch):
    """What ``countersign serve`` writes through: the root's handler (the MCP SDK installs one)
    and uvicorn's, its access log formatting ``record.args`` itself, which must keep their shape."""
    from uvicorn.logging import AccessFormatter

    root_out, access_out = io.StringIO(), io.StringIO()
    root_handler, access_handler = logging.StreamHandler(root_out), logging.StreamHandler(access_out)
    access_handler.setFormatter(AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s'))
    access = logging.getLogger("uvicorn.access")
    monkeypatch.setattr(logging.getLogger(), "handlers", [root_handler])
    monkeypatch.setattr(access, "handlers", [access_handler])
    monkeypatch.setattr(access, "propagate", False)
    monkeypatch.setattr(access, "level", logging.INFO)
    redact_local_logs()
    redact_local_logs()  # once is enough: a second call adds nothing
    assert len(root_handler.filters) == len(access_handler.filters) == 1
    token, ticket = new_secret_token(accounts.CONNECTION_TOKEN_PREFIX), _ticket()
    logging.getLogger(f"mcp.local-{uuid.uuid4().hex[:6]}").warning("Tool failed: Bearer %s, ticket %s", token, ticket)
    access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", f"/api/x?token={token}", "1.1", 404)
    assert token not in root_out.getvalue() and ticket not in root_out.getvalue()
    assert "Tool failed: Bearer [redacted]" in root_out.getvalue()
    assert access_out.getvalue() == '127.0.0.1:5000 - "GET /api/x?token=[redacted] HTTP/1.1" 404 Not Found\n'


# -- the desk's card events (the metric names) -----------------------------------------------------


@pytest.fixture
def desk_world(tmp_path):
    runtime = build(
        settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path)}), toolsets=[NOTES], on_filed=lambda card: None
    )
    events: list[str] = []
    runtime.desk.on_event = events.append
    workspace, person = accounts.create_workspace(runtime.store.workspaces, "Acme", "owner@example.com")
    connection = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, workspace.id,
                                            person.id, "agent").connection
    seed_notes(runtime.store, workspace.id)
    principal = Principal(runtime.store.workspaces.get_workspace(workspace.id), person, connection)

    def file(text: str, note: str = "n1") -> str:
        held = anyio.run(request_card, runtime.desk, principal, "publish_note", {"note_id": note, "text": text})
        return held["confirmationId"]

    return runtime, workspace, person, events, file


def test_the_desk_reports_each_card_event(desk_world):
    runtime, workspace, person, events, file = desk_world
    desk = runtime.desk
    first, second = file("one"), file("two")
    assert events == ["card_filed", "card_filed"]
    clicks.confirm_click(desk, workspace.id, person, first)
    assert events[-1] == "card_confirmed"
    with pytest.raises(Refusal) as refused:  # the note moved under the second card
        clicks.confirm_click(desk, workspace.id, person, second)
    assert refused.value.reason is RefusalReason.CHANGED and events[-1] == "card_refused_drift"
    third = file("three")
    clicks.decline_click(desk, workspace.id, person, third, "later")
    assert events[-1] == "card_declined"
    fourth = file("four", note="n2")
    desk.withdraw(runtime.store.cards.get_card(workspace.id, fourth, desk.now()), desk.now(), "connection:test")
    assert events[-1] == "card_withdrawn"
    fifth = file("five", note="n2")
    desk.clock = lambda: 4_000_000_000.0  # long after the deadline
    with pytest.raises(Refusal) as late:
        clicks.confirm_click(desk, workspace.id, person, fifth)
    assert late.value.reason is RefusalReason.EXPIRED and events[-1] == "card_expired"
    assert events.count("card_filed") == 5 and set(events) <= set(telemetry.CARD_EVENTS)


def test_a_failing_metrics_hook_never_breaks_a_card(desk_world):
    runtime, workspace, person, events, file = desk_world

    def broken(name):
        raise RuntimeError("metrics backend down")

    runtime.desk.on_event = broken
    card = clicks.confirm_click(runtime.desk, workspace.id, person, file("fine"))
    assert card.state.value == "completed"


def test_wire_connects_the_desk_and_the_card_notifier(tmp_path):
    runtime = build(settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path)}), toolsets=[NOTES])
    telemetry.wire(runtime)
    assert runtime.desk.on_event is telemetry.metric
    assert runtime.desk.on_filed.on_event is telemetry.metric  # the CardNotifier
    assert runtime.slack.on_event is telemetry.metric  # and the Slack notifier beside it


# -- setup in a fresh interpreter (it takes over logging, as in a Lambda instance) -----------------

SETUP_PROBE = """
import json, logging, sys
from countersign.logs.filters import RedactFilter
from countersign.platform import telemetry
telemetry.setup()
root = logging.getLogger()
print(json.dumps({
    "tracer": telemetry._tracer is not None,
    "namespace": telemetry._metrics.namespace,
    "root_redacts": all(any(isinstance(f, RedactFilter) for f in h.filters) for h in root.handlers),
    "root_handlers": len(root.handlers),
}))
"""


@pytest.mark.parametrize("on_lambda, xray_sdk", [(False, False), (True, False), (False, True), (True, True)])
def test_setup_tracer_only_inside_lambda_when_asked(on_lambda, xray_sdk):
    """The X-Ray SDK costs every cold start: built only on Lambda with COUNTERSIGN_XRAY_SDK=1
    (``Tracing: Active`` traces every invocation without it)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_LAMBDA", "POWERTOOLS_")) and k != telemetry.XRAY_SDK_ENV}
    env.update(POWERTOOLS_SERVICE_NAME="countersign", POWERTOOLS_METRICS_NAMESPACE="countersign")
    if on_lambda:
        # What the Lambda runtime sets; traces themselves stay off here (no X-Ray daemon).
        env.update(AWS_LAMBDA_FUNCTION_NAME="countersign-McpFunction", POWERTOOLS_TRACE_DISABLED="1")
    if xray_sdk:
        env[telemetry.XRAY_SDK_ENV] = "1"
    done = subprocess.run([sys.executable, "-c", SETUP_PROBE], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"tracer": on_lambda and xray_sdk, "namespace": "countersign", "root_redacts": True,
                      "root_handlers": 1}
