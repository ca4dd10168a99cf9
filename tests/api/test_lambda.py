"""The confirm API as the ``api`` Lambda runs it: Mangum, API Gateway REST API (payload 1.0) events, and a
DynamoDB store (moto) built from template.yaml's table."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time

import pytest
from mangum import Mangum

from countersign import settings as settings_mod
from countersign.gate.ask import request_card
from countersign.identity import accounts
from countersign.identity.principal import Principal
from countersign.runtime import build
from countersign.surfaces.api.app import create_api
from tests.support.apigw import LambdaInstance, http_event, response_body, set_cookies
from tests.support.aws import REPO_ROOT, moto_dynamodb_store
from tests.support.sample_toolset import TOOLSET as NOTES, seed_notes

pytestmark = pytest.mark.anyio

PUBLIC = "https://confirm.example.com"
COOKIE = "__Host-cs_session"
ORIGIN_SECRET = "Zq8" * 21 + "x"  # what GenerateSecretString makes: 64 letters and digits


class Mailbox:
    """A sender that keeps (recipient, sign-in link) instead of delivering."""

    from_address = "countersign@example.com"

    def __init__(self):
        self.sent: list[tuple[str, str]] = []

    def send(self, email) -> None:
        link = next(word for word in email.text.split() if "/signin#token=" in word)
        self.sent.append((email.to, link))


class Stack:
    """One API Lambda instance on a moto table, and a way to speak to it as the page does."""

    def __init__(self, store, tmp_path, floor: float = 0.0, origin_secret: str | None = None, secret_loader=None):
        env = {
            "COUNTERSIGN_DATA": str(tmp_path),
            "COUNTERSIGN_PUBLIC_URL": PUBLIC,
            "COUNTERSIGN_SIGNING_KEY": secrets.token_urlsafe(32),
            "COUNTERSIGN_STATE_KEYS": secrets.token_urlsafe(48),
        }
        if origin_secret is not None:
            env["COUNTERSIGN_ORIGIN_SECRET"] = origin_secret
        self.runtime = build(settings_mod.load(env), toolsets=[NOTES], store=store, secret_loader=secret_loader)
        self.mailbox = Mailbox()
        self.instance = LambdaInstance(
            Mangum(create_api(self.runtime, self.mailbox, signin_floor=floor), lifespan="off")
        )
        self.workspace, self.person = accounts.create_workspace(store.workspaces, "Acme", "owner@example.com", "Olive")
        self.connection = accounts.create_connection(
            store.workspaces, store.connections, self.workspace.id, self.person.id, "Lambda agent"
        ).connection
        seed_notes(store, self.workspace.id)
        self.session_id = self.csrf = None

    def call(self, method: str, path: str, body=None, *, query: str = "", base64_body: bool = False,
             headers: dict | None = None, page: bool = True, source_ip: str = "198.51.100.7") -> dict:
        sent = {"origin": PUBLIC, "content-type": "application/json"} if page else {}
        if page and self.csrf:
            sent["x-csrf-token"] = self.csrf
        if page and self.session_id:
            sent["cookie"] = f"{COOKIE}={self.session_id}; other=1"
        sent.update(headers or {})
        raw = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        return self.instance.invoke(http_event(method, path, headers=sent, body=raw, query=query,
                                               base64_body=base64_body, source_ip=source_ip))

    def file(self, text: str) -> str:
        import anyio

        principal = Principal(self.runtime.store.workspaces.get_workspace(self.workspace.id), self.person,
                              self.connection)
        held = anyio.run(request_card, self.runtime.desk, principal, "publish_note", {"note_id": "n1", "text": text})
        return held["confirmationId"]

    def close(self):
        self.instance.close()


def body_of(result: dict):
    raw = response_body(result)
    return json.loads(raw) if raw else None


@pytest.fixture
def stack(tmp_path):
    with moto_dynamodb_store() as store:
        s = Stack(store, tmp_path)
        yield s
        s.close()


@pytest.fixture
def fronted(tmp_path):
    """The api function as deployed: COUNTERSIGN_ORIGIN_SECRET is the OriginVerifySecret's ARN,
    read at start-up (here from a stand-in for Secrets Manager)."""
    arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:OriginVerifySecret-AbCdEf"
    read = []

    def loader(name: str) -> str:
        read.append(name)
        return {arn: ORIGIN_SECRET}.get(name) or secrets.token_urlsafe(48)

    with moto_dynamodb_store() as store:
        s = Stack(store, tmp_path, origin_secret=arn, secret_loader=loader)
        assert s.runtime.origin_secret == ORIGIN_SECRET and read.count(arn) == 1
        # One instant for the whole test: the limits count per window, and 21 requests on a busy
        # machine could straddle a window's end and all pass.
        at = s.runtime.desk.now()
        s.runtime.desk.clock = lambda: at
        yield s
        s.close()


def ask_signin(stack, **kw) -> int:
    email = f"{secrets.token_hex(4)}@example.com"
    return stack.call("POST", "/api/signin/request", {"email": email}, **kw)["statusCode"]


EDGE = "130.176.0.1"  # behind CloudFront every viewer arrives from an edge address


def test_signin_session_confirm_and_decline_through_mangum(stack):
    asked = stack.call("POST", "/api/signin/request", {"email": "OWNER@example.com"}, base64_body=True)
    assert asked["statusCode"] == 202
    assert body_of(asked) == {"message": "If that address belongs to a member, a sign-in link is on its way."}
    # Mangum waits for the work after the answer: the email is out when the invocation returns.
    [(to, link)] = stack.mailbox.sent
    assert to == "owner@example.com" and link.startswith(f"{PUBLIC}/signin#token=")
    token = link.split("#token=", 1)[1]

    done = stack.call("POST", "/api/signin/complete", {"token": token})
    assert done["statusCode"] == 200, done
    [cookie] = set_cookies(done)
    session_id = cookie.split(";", 1)[0].split("=", 1)[1]
    assert cookie == f"{COOKIE}={session_id}; Path=/; Secure; HttpOnly; SameSite=Lax"
    stack.session_id, stack.csrf = session_id, body_of(done)["csrfToken"]
    assert stack.call("POST", "/api/signin/complete", {"token": token})["statusCode"] == 400

    session = stack.call("GET", "/api/session")
    assert session["statusCode"] == 200 and body_of(session)["person"]["email"] == "owner@example.com"
    for name, value in (("cache-control", "no-store"), ("x-content-type-options", "nosniff"),
                        ("x-frame-options", "DENY"), ("referrer-policy", "no-referrer")):
        assert session["headers"][name] == value

    first, second = stack.file("one"), stack.file("two")
    listed = body_of(stack.call("GET", "/api/cards", query="limit=1"))
    assert [c["id"] for c in listed["cards"]] == [first] and listed["nextCursor"]
    rest = body_of(stack.call("GET", "/api/cards", query=f"limit=1&cursor={listed['nextCursor']}"))
    assert [c["id"] for c in rest["cards"]] == [second] and rest["nextCursor"] is None

    refused = stack.call("POST", f"/api/cards/{first}/confirm", headers={"x-csrf-token": "wrong"})
    assert refused["statusCode"] == 403 and body_of(refused)["error"]["code"] == "csrf"

    confirmed = stack.call("POST", f"/api/cards/{first}/confirm", base64_body=True)
    assert confirmed["statusCode"] == 200, confirmed
    assert body_of(confirmed)["state"] == "completed"
    assert stack.runtime.store.docs.get_doc(stack.workspace.id, "note", "n1").data["text"] == "one"
    again = stack.call("POST", f"/api/cards/{first}/confirm")
    assert again["statusCode"] == 409 and body_of(again)["error"]["code"] == "already_answered"

    # The second card was drawn before the first ran: its note moved.
    changed = stack.call("POST", f"/api/cards/{second}/confirm")
    assert changed["statusCode"] == 409 and body_of(changed)["error"]["code"] == "changed"

    third = stack.file("three")
    declined = stack.call("POST", f"/api/cards/{third}/decline", {"reason": "later"}, base64_body=True)
    assert declined["statusCode"] == 200 and body_of(declined)["reason"] == "later"
    history = body_of(stack.call("GET", "/api/history"))
    assert {c["id"] for c in history["cards"]} == {first, second, third}

    big = stack.call("POST", "/api/connections", {"name": "x" * 70_000})
    assert big["statusCode"] == 413

    out = stack.call("POST", "/api/signout")
    assert out["statusCode"] == 204
    assert stack.call("GET", "/api/session")["statusCode"] == 401


def test_rate_limit_follows_the_connecting_address(stack):
    for _ in range(20):
        assert ask_signin(stack, source_ip="203.0.113.9") == 202
    assert ask_signin(stack, source_ip="203.0.113.9") == 429
    assert ask_signin(stack, source_ip="203.0.113.10") == 202


def test_through_cloudfront_the_limit_follows_the_viewer_address(fronted):
    """CloudFront proves itself with the origin header: its viewer address is then the key, so
    twenty people behind one edge all get through, and each of them is limited on their own."""
    cloudfront = {"x-countersign-origin": ORIGIN_SECRET}
    for i in range(20):
        viewer = {**cloudfront, "cloudfront-viewer-address": f"192.0.2.{i}:5{i:04d}"}
        assert ask_signin(fronted, source_ip=EDGE, headers=viewer) == 202
    assert (
        ask_signin(fronted, source_ip=EDGE, headers={**cloudfront, "cloudfront-viewer-address": "192.0.2.1:4000"})
        == 202
    )
    same = {**cloudfront, "cloudfront-viewer-address": "192.0.2.99:443"}
    assert [ask_signin(fronted, source_ip=f"130.176.0.{2 + i}", headers=same) for i in range(21)] == [202] * 20 + [429]
    # IPv6 viewers: the port is the part after the last colon.
    v6 = {**cloudfront, "cloudfront-viewer-address": "2001:db8::7:443"}
    assert ask_signin(fronted, source_ip=EDGE, headers=v6) == 202


@pytest.mark.parametrize(
    "proof",
    [None, "", "wrong" * 13, ORIGIN_SECRET[:-1], ORIGIN_SECRET + "x", ORIGIN_SECRET.lower()],
    ids=["none", "empty", "wrong", "short", "long", "case"],
)
def test_a_forged_viewer_address_is_limited_by_the_connecting_address(fronted, proof):
    """Anyone can call the execute-api URL directly and invent a viewer address each time:
    without the right origin header the connecting address is the key, at the normal limit."""
    forger = "203.0.113.66"
    codes = []
    for i in range(21):
        headers = {"cloudfront-viewer-address": f"198.18.{i // 250}.{i % 250}:443"}
        if proof is not None:
            headers["x-countersign-origin"] = proof
        codes.append(ask_signin(fronted, source_ip=forger, headers=headers))
    assert codes == [202] * 20 + [429]
    # CloudFront's own requests are unaffected.
    trusted = {"x-countersign-origin": ORIGIN_SECRET, "cloudfront-viewer-address": "192.0.2.50:443"}
    assert ask_signin(fronted, source_ip=forger, headers=trusted) == 202


def test_without_an_origin_secret_the_viewer_header_is_never_trusted(stack):
    """No COUNTERSIGN_ORIGIN_SECRET (the local server, a stack without one): whatever the headers
    say, the connecting address is the key."""
    assert stack.runtime.origin_secret is None
    at = stack.runtime.desk.now()
    stack.runtime.desk.clock = lambda: at  # one window for the 21 requests (see fronted)
    codes = [ask_signin(stack, source_ip=EDGE, headers={"x-countersign-origin": ORIGIN_SECRET,
                                                        "cloudfront-viewer-address": f"192.0.2.{i}:443"})
             for i in range(21)]
    assert codes == [202] * 20 + [429]


def test_the_origin_secret_behind_an_arn_must_be_long_enough(tmp_path):
    from countersign.settings import ConfigError

    arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:OriginVerifySecret-AbCdEf"
    with moto_dynamodb_store() as store:
        with pytest.raises(ConfigError, match="COUNTERSIGN_ORIGIN_SECRET"):
            Stack(store, tmp_path, origin_secret=arn,
                  secret_loader=lambda name: "short" if name == arn else secrets.token_urlsafe(48))


def test_signin_answers_are_padded_to_the_floor_known_or_not(tmp_path):
    with moto_dynamodb_store() as store:
        stack = Stack(store, tmp_path, floor=0.2)
        timings = {"known": [], "unknown": []}
        for kind, address in (("known", "owner@example.com"), ("unknown", "stranger@example.com")) * 2:
            started = time.perf_counter()
            assert stack.call("POST", "/api/signin/request", {"email": address})["statusCode"] == 202
            timings[kind].append(time.perf_counter() - started)
        stack.close()
    assert len(stack.mailbox.sent) == 2
    # Under Mangum the invocation waits for the email, so every answer is padded to the floor
    # whether the address is known or not (a lower bound the code sleeps to; no upper bound is asserted).
    assert min(timings["known"]) >= 0.2 and min(timings["unknown"]) >= 0.2


def test_the_api_function_does_not_import_mcp(tmp_path):
    """Import ``countersign.handlers.api`` as a cold Lambda would (DynamoDB on moto) and serve two
    events: no MCP SDK, no toolset and no pydantic v1 is loaded."""
    script = """
import json, sys, time
from moto import mock_aws
with mock_aws():
    import boto3
    from tests.support.aws import create_table_from_template
    create_table_from_template(boto3.client("dynamodb", region_name="eu-west-1"), "countersign-api")
    started = time.perf_counter()
    import countersign.handlers.api as api
    took = time.perf_counter() - started
    from tests.support.apigw import LambdaContext, http_event
    result = api.handler(http_event("GET", "/api/session"), LambdaContext())
    invalid = api.handler(http_event("POST", "/api/signin/request", headers={"content-type": "application/json",
                                                                             "origin": "https://confirm.example.com"},
                                     body=json.dumps({"email": 5}).encode()), LambdaContext())
    print(json.dumps({"status": result["statusCode"], "seconds": took, "store": type(api.runtime.store).__name__,
                      "invalid": [invalid["statusCode"], json.loads(invalid["body"])],
                      "pydantic_v1": sys.modules.get("pydantic.v1") is not None,
                      "mcp": [m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types")
                              or m.startswith("countersign.surfaces.mcp") or m == "countersign.handlers.mcp"],
                      "toolsets_at_start": [m for m in sys.modules if m.startswith("countersign.toolsets.")],
                      "toolsets": [t.name for t in api.runtime.registry.toolsets]}))
"""
    env = dict(os.environ, COUNTERSIGN_STORE="dynamodb://countersign-api", COUNTERSIGN_DATA=str(tmp_path),
               COUNTERSIGN_PUBLIC_URL=PUBLIC, COUNTERSIGN_MAIL="ses:countersign@example.com",
               COUNTERSIGN_SIGNING_KEY=secrets.token_urlsafe(32), COUNTERSIGN_STATE_KEYS=secrets.token_urlsafe(48),
               AWS_DEFAULT_REGION="eu-west-1")
    env.pop("COUNTERSIGN_PACKS", None)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == 401
    assert report["store"] == "DynamoDBStore"
    # FastAPI would import pydantic.v1 (~30 ms) only to refuse v1 models; the handler marks it
    # absent, and a request body is still validated and refused with the field named
    assert report["pydantic_v1"] is False
    assert report["invalid"][0] == 422, report["invalid"]
    assert "email" in json.dumps(report["invalid"][1]), report["invalid"]
    assert report["mcp"] == [], report["mcp"]
    assert report["toolsets_at_start"] == []  # imported when a card is first shown or planned, not at every cold start
    # every toolset of the build (and the passkey policy action), none of them pulling in mcp
    assert report["toolsets"] == ["budget", "mail", "gateway", "passkeys", "standing_grants", "card_lifetimes",
                                  "quorum", "escalation", "smoke"]


def test_the_api_function_cold_start_loads_no_pyopenssl(tmp_path):
    """pyOpenSSL is in the API function's bundle for py_webauthn; botocore would import it at the
    DynamoDB client's creation only to take urllib3's standard-library SSLContext. A cold import of
    the handler (DynamoDB store, nothing asked of it) loads neither pyOpenSSL nor cryptography's
    x509, botocore has that same SSLContext, and py_webauthn still loads pyOpenSSL when needed."""
    script = """
import sys
import countersign.handlers.api as api
assert type(api.runtime.store).__name__ == "DynamoDBStore"
loaded = sorted(m for m in ("OpenSSL", "cryptography.x509") if m in sys.modules)
assert not loaded, loaded
import botocore.httpsession, urllib3.util.ssl_
assert botocore.httpsession.SSLContext is urllib3.util.ssl_.SSLContext
import webauthn
assert "OpenSSL" in sys.modules
print("ok")
"""
    env = dict(os.environ, COUNTERSIGN_STORE="dynamodb://countersign-api", COUNTERSIGN_DATA=str(tmp_path),
               COUNTERSIGN_PUBLIC_URL=PUBLIC, COUNTERSIGN_MAIL="ses:countersign@example.com",
               COUNTERSIGN_SIGNING_KEY=secrets.token_urlsafe(32), COUNTERSIGN_STATE_KEYS=secrets.token_urlsafe(48),
               AWS_DEFAULT_REGION="eu-west-1", AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
               AWS_ENDPOINT_URL="http://127.0.0.1:9",  # a closed loopback port: the import asks nothing
               AWS_LAMBDA_FUNCTION_NAME="countersign-api")
    env.pop("COUNTERSIGN_PACKS", None)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


def test_an_unexpected_error_is_a_plain_500_with_the_headers(stack, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("database on fire: secret detail")

    stack.runtime.store.sessions.get_session = broken
    stack.session_id = "anything"
    result = stack.call("GET", "/api/session")
    assert result["statusCode"] == 500
    assert body_of(result) == {
        "error": {
            "code": "internal",
            "message": "Something went wrong on our side; nothing further was done. Try again.",
        }
    }
    assert result["headers"]["cache-control"] == "no-store" and result["headers"]["x-frame-options"] == "DENY"
    assert "secret detail" not in response_body(result).decode()
