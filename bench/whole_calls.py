"""DynamoDB requests per *whole* call, on the stack in miniature (moto; table from template.yaml),
with the request limits off and on (the template's defaults), in the same run.

    .venv/bin/python bench/whole_calls.py        (bench/store.py runs it too, after its primitives)

Each Lambda instance is built as it is at import (``tests/aws_lambda``): the ``mcp`` handler
composed as handlers/mcp.py composes it (the request limits outside the endpoint) and driven by
the real MCP client through API Gateway REST API (1.0) events, the ``api`` handler driven as the
confirm page calls it. Every request any boto3 client makes to DynamoDB during the step is counted
(the step's own HTTP request to the handler and everything it does), by operation. The lightest
read of the same toolset is measured in the same run as the baseline. Goals (issue 45, limits on):
held call <= 3, click <= 4, 2026 question + answer <= 6. It prints; it asserts nothing.

The steps run on instances that have served their token (or session) before, as a warm Lambda
instance serving an agent has: each remembers whose the credential is and reads it with its member
(and the request's counters, with the limits on) in one request (``countersign.store.callers``).
Then a new instance's first use of the token: the client connects (two reads for the token, then a
note of its use), lists the tools and makes one read; and the same for an agent connected with
OAuth (an access token of its grant, on an instance serving the OAuth endpoints as the ``mcp``
function does), then its next call.
"""

from __future__ import annotations

import collections
import contextlib
import os
import secrets
import sys
import tempfile

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)

os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECURITY_TOKEN", "AWS_SESSION_TOKEN"):
    os.environ[name] = "testing"
os.environ.pop("AWS_PROFILE", None)

import anyio  # noqa: E402
import botocore.client  # noqa: E402

COUNTS: collections.Counter[str] = collections.Counter()
TRACE: list[str] = []  # with --trace: what each request touched (the key's first part)
_original = botocore.client.BaseClient._make_api_call


def _counting(self, operation_name, api_params):
    if self.meta.service_model.service_name == "dynamodb":
        COUNTS[operation_name] += 1
        if "--trace" in sys.argv:
            TRACE.append(f"{operation_name} {_keys(api_params)}")
    return _original(self, operation_name, api_params)


botocore.client.BaseClient._make_api_call = _counting  # type: ignore[method-assign]


def _keys(params: dict) -> str:
    def short(key) -> str:
        pk = (key or {}).get("pk", {}).get("S", "?")
        return pk.split("#", 1)[0] + ("#" + (key or {}).get("sk", {}).get("S", "")[:12] if "sk" in (key or {}) else "")
    if "Key" in params:
        return short(params["Key"])
    if "RequestItems" in params:
        return " ".join(short(k) for t in params["RequestItems"].values() for k in t["Keys"])
    if "TransactItems" in params:
        return f"{len(params['TransactItems'])} items"
    if "KeyConditionExpression" in params:
        return params.get("IndexName", "table") + " " + str(params.get("ExpressionAttributeValues", {}))[:60]
    return short(params.get("Item"))


class Steps:
    def __init__(self):
        self.rows: list[tuple[str, dict[str, int]]] = []

    async def count(self, label: str, step):
        COUNTS.clear()
        TRACE.clear()
        out = await step() if callable(step) else await step
        self.rows.append((label, dict(COUNTS)))
        if TRACE:
            print(label, *TRACE, sep="\n    ")
            TRACE.clear()
        return out

    def click(self, label: str, call):
        """A step that is one HTTP request to the api handler (synchronous)."""
        COUNTS.clear()
        TRACE.clear()
        out = call()
        self.rows.append((label, dict(COUNTS)))
        if TRACE:
            print(label, *TRACE, sep="\n    ")
            TRACE.clear()
        return out


def print_both(runs: dict[str, Steps]) -> None:
    """One row per step: its requests under each setting, then what the last setting's were."""
    (off_name, off), (on_name, on) = runs.items()
    width = max(len(s) for s, _ in on.rows) + 2
    print(f"{'whole step':<{width}}{off_name:>12}{on_name:>12}  detail ({on_name})")
    for (label, calls_off), (label_on, calls_on) in zip(off.rows, on.rows, strict=True):
        assert label == label_on, (label, label_on)
        detail = ", ".join(f"{op} x{k}" if k > 1 else op for op, k in sorted(calls_on.items()))
        print(f"{label:<{width}}{sum(calls_off.values()):>12}{sum(calls_on.values()):>12}  {detail}")


async def run(stack, steps: Steps) -> None:
    from tests.aws_lambda.test_budget_on_stack import body_of
    from tests.support.harness import accept

    async with stack.client(0) as agent, stack.client(0, answer=accept()) as asking:
        await agent.list_tools()  # as an agent does first (the client also validates results against it)
        await asking.list_tools()
        listed = (await agent.call_tool("list_categories", {})).structured_content
        month = listed["month"]
        cats = [c["id"] for g in listed["groups"] for c in g["categories"] if not c.get("internal")]
        await steps.count("read: list_accounts (budget)", lambda: agent.call_tool("list_accounts", {}))
        await steps.count("read: get_month (budget)", lambda: agent.call_tool("get_month", {"month": month}))
        held = await steps.count("held call -> card: set_category_budget", lambda: agent.call_tool(
            "set_category_budget", {"category_id": cats[0], "month": month, "amount": 123.45}))
        card_id = held.structured_content["confirmationId"]
        await steps.count("held call -> card: apply_categories", lambda: agent.call_tool(
            "list_transactions", {"uncategorised": True, "limit": 1}))
        txn = (await agent.call_tool("list_transactions", {"uncategorised": True, "limit": 1})
               ).structured_content["transactions"][0]["id"]
        recat = await steps.count("held call -> card: apply_categories", lambda: agent.call_tool(
            "apply_categories", {"changes": [{"transaction_id": txn, "category_id": cats[1]}]}))
        steps.rows.pop(-2)  # (the read that found the transaction)
        stack.sign_in()
        done = steps.click("click: POST /api/cards/{id}/confirm (set_category_budget)",
                           lambda: stack.call("POST", f"/api/cards/{card_id}/confirm"))
        assert body_of(done)["state"] == "completed", body_of(done)
        done = steps.click("click: POST /api/cards/{id}/confirm (apply_categories)", lambda: stack.call(
            "POST", f"/api/cards/{recat.structured_content['confirmationId']}/confirm"))
        assert body_of(done)["state"] == "completed", body_of(done)
        bought = await steps.count("held call -> card: buy_credits (mail)", lambda: agent.call_tool(
            "buy_credits", {"credits": 500}))
        done = steps.click("click: POST /api/cards/{id}/confirm (buy_credits)", lambda: stack.call(
            "POST", f"/api/cards/{bought.structured_content['confirmationId']}/confirm"))
        assert body_of(done)["state"] == "completed", body_of(done)
        answered = await steps.count("2026 question + answer: set_category_budget", lambda: asking.call_tool(
            "set_category_budget", {"category_id": cats[2], "month": month, "amount": 67.89}))
        assert answered.structured_content.get("status") == "completed", answered.structured_content
        await steps.count("list_confirmations", lambda: agent.call_tool("list_confirmations", {}))

    async def first_call() -> None:  # a new instance: it has not seen this token yet
        async with stack.client(1) as fresh:
            await fresh.call_tool("list_accounts", {})

    await steps.count("new instance, first use of the token: connect, tools/list, list_accounts", first_call)
    await oauth_calls(stack, steps)


async def oauth_calls(stack, steps: Steps) -> None:
    """An agent connected with OAuth (an access token of a grant), on an instance that serves the
    OAuth endpoints as the ``mcp`` function does: its first call there, then the next."""
    from countersign.identity import accounts
    from countersign.identity.oauth.tokens import mint
    from countersign.store.authorizations import IssuedCode
    from tests.aws_lambda.conftest import instance_runtime
    from tests.support.apigw import LambdaTransport
    from tests.support.harness import mcp_client

    runtime = instance_runtime(stack.env)
    now = runtime.desk.now()
    made = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, stack.workspace.id,
                                      stack.person.id, "OAuth agent")
    code = IssuedCode(code_hash="-", client_id="bench-client", connection_id=made.connection.id,
                      workspace_id=stack.workspace.id, person_id=stack.person.id, redirect_uri="https://agent/cb",
                      redirect_uri_provided_explicitly=True, code_challenge="-", resource=f"{stack.public}/mcp",
                      expires_at=now + 60, scopes=("mcp",))
    minted = mint(code, now)
    runtime.store.grants.put_issued_tokens(list(minted.records))
    instance = mcp_instance(runtime, oauth=True)
    async with contextlib.AsyncExitStack() as exits:
        async def first_use():
            agent = await exits.enter_async_context(
                mcp_client(f"{stack.public}/mcp", minted.access_token, transport=LambdaTransport([instance])))
            await agent.list_tools()
            await agent.call_tool("list_accounts", {})
            return agent

        agent = await steps.count("OAuth agent, new instance: connect, tools/list, list_accounts", first_use)
        await steps.count("OAuth agent, its next call: list_accounts", lambda: agent.call_tool("list_accounts", {}))
    instance.close()


# The two settings measured in each run: every limit off (the local default), and the template's
# defaults (RequestsPerConnection, RequestsPerAddress, PageRequestsPerAddress).
SETTINGS = {
    "limits off": {},
    "limits on": {"COUNTERSIGN_LIMIT_CONNECTION": "30", "COUNTERSIGN_LIMIT_ADDRESS": "120",
                  "COUNTERSIGN_LIMIT_PAGE": "60"},
}


def main() -> None:
    import logging

    from moto import mock_aws

    from tests.support.aws import REGION, boto_session, create_table_from_template

    with mock_aws(), tempfile.TemporaryDirectory() as tmp:
        client = boto_session().client("dynamodb", region_name=REGION)
        boto_session().client("sesv2", region_name=REGION).create_email_identity(EmailIdentity="example.com")
        env = {
            "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com",
            "COUNTERSIGN_MAIL": "ses:countersign@example.com", "COUNTERSIGN_SIGNING_KEY": secrets.token_urlsafe(32),
            "COUNTERSIGN_STATE_KEYS": secrets.token_urlsafe(48), "COUNTERSIGN_DATA": tmp,
        }
        logging.disable(logging.INFO)
        runs = {}
        for number, (name, limits) in enumerate(SETTINGS.items()):  # a table of its own for each
            table = create_table_from_template(client, f"countersign-bench-{number}")
            runs[name] = measure({**env, **limits, "COUNTERSIGN_STORE": f"dynamodb://{table}"})
        print("DynamoDB requests per whole call (moto; every request of the step), limits off and on")
        print_both(runs)


def measure(env: dict[str, str]) -> Steps:
    """Every step on a fresh tenant whose instances are built with ``env``."""
    from countersign.toolkit import ActionContext
    from countersign.toolsets.mail import TOOLSET as MAIL
    from tests.aws_lambda.conftest import instance_runtime
    from tests.aws_lambda.test_budget_on_stack import Stack

    class Composed(Stack):
        """The stack, its ``mcp`` instances composed as handlers/mcp.py composes them."""

        def _mcp_instance(self):
            return mcp_instance(instance_runtime(self.env))

    stack = Composed(env)
    store = stack.runtime.store
    MAIL.demo(store.docs, ActionContext.reading(store.docs, store.workspaces, stack.workspace, stack.person, None,
                                                stack.runtime.desk.now()))
    steps = Steps()
    try:
        anyio.run(run, stack, steps)
    finally:
        stack.close()
    return steps


def mcp_instance(runtime, oauth: bool = False):
    """An ``mcp`` function instance as handlers/mcp.py composes it: the request limits outside
    the stateless endpoint (and, with ``oauth``, the OAuth endpoints beside it)."""
    from mangum import Mangum

    from countersign.surfaces.http.request_limits import RequestLimit
    from countersign.surfaces.mcp.server import build_server
    from countersign.surfaces.mcp.transport import lambda_app
    from countersign.surfaces.oauth.endpoints import OAuthEndpoints
    from tests.support.apigw import LambdaInstance

    app = lambda_app(build_server(runtime.desk, runtime.state_keys), runtime.store,
                     oauth=OAuthEndpoints(runtime) if oauth else None)
    return LambdaInstance(Mangum(RequestLimit(app, runtime, "mcp"), lifespan="off"))


if __name__ == "__main__":
    main()
