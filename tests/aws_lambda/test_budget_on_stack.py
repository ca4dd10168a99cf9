"""The budget toolset's held write on the stack in miniature: the DynamoDB store (moto, table from
template.yaml), the ``mcp`` handler driven by the real MCP client, and the ``api`` handler driven
with API Gateway REST API (1.0) events as the confirm page sends them through CloudFront."""

from __future__ import annotations

import json

import pytest
from mangum import Mangum

from countersign.identity import accounts
from countersign.identity.sessions import mint_signin_token
from countersign.store.hashes import secret_hash
from countersign.surfaces.api.app import create_api
from countersign.surfaces.mcp.server import build_server
from countersign.surfaces.mcp.transport import lambda_handler
from countersign.toolkit import ActionContext
from countersign.toolsets.budget import TOOLSET as BUDGET
from countersign.toolsets.budget.model import MONTH
from tests.aws_lambda.conftest import instance_runtime
from tests.support.apigw import LambdaInstance, LambdaTransport, http_event, response_body, set_cookies
from tests.support.aws import record_requests
from tests.support.harness import accept, mcp_client

pytestmark = pytest.mark.anyio

COOKIE = "__Host-cs_session"
DRIFT = "The budget changed between the preview and the answer"  # the budget's drift sentence, pinned as written


class Stack:
    """A fresh tenant with the demo budget, two ``mcp`` instances and one ``api`` instance, each
    built as its own Lambda instance builds at import."""

    def __init__(self, env):
        self.env = env
        self.public = env["COUNTERSIGN_PUBLIC_URL"]
        self.runtime = instance_runtime(env)  # the operator's view of the same table
        store = self.runtime.store
        self.workspace, self.person = accounts.create_workspace(store.workspaces, "Acme", "owner@example.com", "Olive")
        self.token = accounts.create_connection(store.workspaces, store.connections, self.workspace.id, self.person.id,
                                                "Lambda agent").token
        BUDGET.demo(store.docs, ActionContext.reading(store.docs, store.workspaces, self.workspace, self.person, None,
                                                      self.runtime.desk.now()))
        self.mcp = [self._mcp_instance() for _ in range(2)]
        api_runtime = instance_runtime(env)
        self.api = LambdaInstance(Mangum(create_api(api_runtime, signin_floor=0.0), lifespan="off"))
        self.session_id = self.csrf = None

    def _mcp_instance(self) -> LambdaInstance:
        runtime = instance_runtime(self.env)
        return LambdaInstance(lambda_handler(build_server(runtime.desk, runtime.state_keys), runtime.store, "/"))

    def client(self, instance: int, **kwargs):
        return mcp_client(f"{self.public}/mcp", self.token, transport=LambdaTransport([self.mcp[instance]]), **kwargs)

    def call(self, method: str, path: str, body=None) -> dict:
        headers = {"origin": self.public, "content-type": "application/json"}
        if self.csrf:
            headers["x-csrf-token"] = self.csrf
        if self.session_id:
            headers["cookie"] = f"{COOKIE}={self.session_id}"
        raw = None if body is None else json.dumps(body).encode()
        return self.api.invoke(http_event(method, path, headers=headers, body=raw))

    def sign_in(self) -> None:
        token = mint_signin_token(self.runtime.store.sessions, self.person)
        done = self.call("POST", "/api/signin/complete", {"token": token})
        assert done["statusCode"] == 200, response_body(done)
        [cookie] = set_cookies(done)
        assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "Secure" in cookie
        self.session_id = cookie.split(";", 1)[0].split("=", 1)[1]
        self.csrf = body_of(done)["csrfToken"]

    def budgeted(self, month: str, category_id: str) -> int:
        doc = self.runtime.store.docs.get_doc(self.workspace.id, MONTH, month)
        return int(((doc.data if doc else {}).get("budgeted") or {}).get(category_id, 0))

    def trail(self, card_id: str) -> list:
        return self.runtime.store.cards.audit_trail(self.workspace.id, card_id)

    def close(self) -> None:
        for instance in [*self.mcp, self.api]:
            instance.close()


def body_of(result: dict):
    raw = response_body(result)
    return json.loads(raw) if raw else None


@pytest.fixture
def stack(aws):
    s = Stack(aws)
    yield s
    s.close()


@pytest.fixture
def calls(monkeypatch) -> list[tuple[str, dict]]:
    """Every DynamoDB request made (operation, parameters), from where a test clears it."""
    return record_requests(monkeypatch)


async def _restaurants(client) -> tuple[str, dict]:
    """The month and the Restaurants row, as an agent finds them through the reads."""
    listed = (await client.call_tool("list_categories", {})).structured_content
    month = listed["month"]
    [cat_id] = [c["id"] for g in listed["groups"] for c in g["categories"] if c["name"] == "Restaurants"]
    got = (await client.call_tool("get_month", {"month": month})).structured_content
    [row] = [c for c in got["categories"] if c["id"] == cat_id]
    return month, row


async def test_held_budget_write_confirmed_on_the_page(stack):
    assert stack.runtime.store.__class__.__name__ == "DynamoDBStore"
    async with stack.client(0) as agent:  # declares no elicitation: the write is held as a card
        month, row = await _restaurants(agent)
        before = row["budgeted_milliunits"]
        target = before + 25_000
        held = (await agent.call_tool("set_category_budget", {"category_id": row["id"], "month": month,
                                                              "amount": target / 1000})).structured_content
    assert held["status"] == "pending", held
    card_id = held["confirmationId"]
    assert held["confirmationUrl"] == f"{stack.public}/confirm?card={card_id}"
    assert held["title"] == f"Budget Restaurants for {month}: {before / 1000:.2f} → {target / 1000:.2f}?"
    assert stack.budgeted(month, row["id"]) == before  # nothing written while it waits

    stack.sign_in()
    listed = stack.call("GET", "/api/cards")
    assert listed["statusCode"] == 200 and card_id in [c["id"] for c in body_of(listed)["cards"]]
    confirmed = stack.call("POST", f"/api/cards/{card_id}/confirm")
    assert confirmed["statusCode"] == 200, response_body(confirmed)
    assert body_of(confirmed)["state"] == "completed"
    assert stack.budgeted(month, row["id"]) == target

    async with stack.client(1) as agent:  # another instance answers the poll
        status = (await agent.call_tool("get_confirmation_status", {"confirmation_id": card_id})).structured_content
        after = (await agent.call_tool("get_month", {"month": month})).structured_content
    assert status["status"] == "completed" and status["answeredVia"] == "page"
    result = status["result"]
    assert result["category_id"] == row["id"] and result["month"] == month
    assert result["budgeted_milliunits"] == target and result["budgeted"] == f"{target / 1000:.2f}"
    assert [s["tool"] for s in status["next"]] == ["undo_operation"]
    assert result["operation_id"] in status["next"][0]["description"]
    [now_row] = [c for c in after["categories"] if c["id"] == row["id"]]
    assert now_row["budgeted_milliunits"] == target
    assert all(i.invocations > 0 for i in stack.mcp)

    trail = stack.trail(card_id)
    assert [e.event for e in trail] == ["filed", "completed"]
    assert [e.channel for e in trail[1:]] == ["page"]
    assert trail[1].actor == f"person:{stack.person.id}"


async def test_drift_at_the_click_is_refused_on_dynamodb(stack):
    async with stack.client(0) as agent:
        month, row = await _restaurants(agent)
        before = row["budgeted_milliunits"]
        held = (await agent.call_tool("set_category_budget", {"category_id": row["id"], "month": month,
                                                              "amount": (before + 25_000) / 1000})).structured_content
    assert held["status"] == "pending", held
    card_id = held["confirmationId"]

    # Meanwhile a 2026 client, whose person answers in the client, budgets the same category and month.
    moved_to = before + 40_000
    async with stack.client(1, answer=accept()) as other:
        done = (await other.call_tool("set_category_budget", {"category_id": row["id"], "month": month,
                                                              "amount": moved_to / 1000})).structured_content
        ops_before = (await other.call_tool("list_operations", {})).structured_content["operations"]
    assert done["status"] == "completed", done
    assert stack.budgeted(month, row["id"]) == moved_to
    month_doc = stack.runtime.store.docs.get_doc(stack.workspace.id, MONTH, month)

    stack.sign_in()
    refused = stack.call("POST", f"/api/cards/{card_id}/confirm")
    assert refused["statusCode"] == 409, response_body(refused)
    error = body_of(refused)["error"]
    assert error["code"] == "changed" and DRIFT in error["message"]

    # The refused card wrote nothing: the month doc and the operation log are as the drift left them.
    assert stack.budgeted(month, row["id"]) == moved_to
    assert stack.runtime.store.docs.get_doc(stack.workspace.id, MONTH, month) == month_doc
    async with stack.client(0) as agent:
        ops_after = (await agent.call_tool("list_operations", {})).structured_content["operations"]
        status = (await agent.call_tool("get_confirmation_status", {"confirmation_id": card_id})).structured_content
    assert ops_after == ops_before
    assert status["status"] == "declined" and DRIFT in status["reason"]
    events = [e.event for e in stack.trail(card_id)]
    assert events[0] == "filed" and "running" not in events and "completed" not in events


def test_a_warm_api_instance_reads_the_session_and_its_person_afresh(stack, calls):
    """The api instance remembers whose a session is, nothing more: the session and its person
    come in one read, a role changed after sign-in shows on the next request, and a session ended
    is refused on the next one."""
    stack.sign_in()
    calls.clear()
    assert body_of(stack.call("GET", "/api/session"))["person"]["role"] == "owner"
    operation, params = calls[0]
    keys = {k["pk"]["S"].split("#")[0] for t in params.get("RequestItems", {}).values() for k in t["Keys"]}
    assert operation == "BatchGetItem" and keys == {"SESSION", "WS"}
    assert not any(op == "GetItem" and p["Key"]["pk"]["S"].startswith("SESSION#") for op, p in calls)
    stack.runtime.store.workspaces.update_person(stack.workspace.id, stack.person.id, role="member")
    assert body_of(stack.call("GET", "/api/session"))["person"]["role"] == "member"
    stack.runtime.store.sessions.delete_session(secret_hash(stack.session_id))
    refused = stack.call("GET", "/api/session")
    assert refused["statusCode"] == 401 and body_of(refused)["error"]["code"] == "signed_out"


async def test_a_warm_api_instance_reads_a_clicks_card_with_its_session(stack, calls):
    """On an instance that knows the session, a click's first read is the session, its member and
    the card the path names, in one request: the click then runs on the card as read there, and a
    card it cannot use there (another workspace's, or one answered meanwhile) is refused as before."""
    async with stack.client(0) as agent:
        month, row = await _restaurants(agent)
        target = row["budgeted_milliunits"] + 25_000
        held = (await agent.call_tool("set_category_budget", {"category_id": row["id"], "month": month,
                                                              "amount": target / 1000})).structured_content
        other = (await agent.call_tool("set_category_budget", {"category_id": row["id"], "month": month,
                                                               "amount": (target + 1_000) / 1000})).structured_content
    stack.sign_in()
    assert stack.call("GET", "/api/session")["statusCode"] == 200  # the instance now knows whose it is
    calls.clear()
    confirmed = stack.call("POST", f"/api/cards/{held['confirmationId']}/confirm")
    click = list(calls)  # the click's own requests (the checks below read the table too)
    assert confirmed["statusCode"] == 200 and body_of(confirmed)["state"] == "completed", response_body(confirmed)
    assert stack.budgeted(month, row["id"]) == target
    operation, params = click[0]
    keys = {k["pk"]["S"].split("#")[0] for t in params.get("RequestItems", {}).values() for k in t["Keys"]}
    assert operation == "BatchGetItem" and keys == {"SESSION", "WS", "CARD"}
    assert not any(op == "GetItem" and p["Key"]["pk"]["S"].startswith("CARD#") for op, p in click)
    # then the card's connection, the budget's docs and the one commit: four requests in all
    assert [op for op, _ in click] == ["BatchGetItem", "GetItem", "BatchGetItem", "TransactWriteItems"]

    # answered meanwhile, on the same instance: the read with the session shows it declined
    declined = stack.call("POST", f"/api/cards/{other['confirmationId']}/decline", {})
    assert declined["statusCode"] == 200 and body_of(declined)["state"] == "declined"
    again = stack.call("POST", f"/api/cards/{other['confirmationId']}/confirm")
    assert again["statusCode"] == 409 and body_of(again)["error"]["code"] == "already_answered"
    # a card id of no card, or of another workspace's card, is not found
    assert stack.call("POST", "/api/cards/c_nothing/confirm")["statusCode"] == 404
    assert stack.call("POST", f"/api/cards/{await _held_elsewhere(stack)}/confirm")["statusCode"] == 404


async def _held_elsewhere(stack) -> str:
    """A card waiting in another workspace of the same table (its own agent's)."""
    workspace, person = accounts.create_workspace(stack.runtime.store.workspaces, "Elsewhere", "else@example.com")
    token = accounts.create_connection(stack.runtime.store.workspaces, stack.runtime.store.connections, workspace.id,
                                       person.id, "Their agent").token
    async with mcp_client(f"{stack.public}/mcp", token, transport=LambdaTransport([stack.mcp[1]])) as theirs:
        held = (await theirs.call_tool("buy_credits", {"credits": 100})).structured_content
    assert held["status"] == "pending", held
    return held["confirmationId"]
