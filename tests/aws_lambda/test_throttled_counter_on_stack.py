"""A held call whose request counter is throttled inside its card's transaction, on the stack in
miniature (DynamoDB on moto, the ``mcp`` function as handlers/mcp.py composes it: the request
limits outside the endpoint, the template's limits on): the agent gets its card, filed exactly
once, the request is not counted, and the function counts the skipped count
(``request_count_skipped``) instead of writing the counter again after the call."""

from __future__ import annotations

import pytest
from mangum import Mangum

from countersign.identity import accounts
from countersign.surfaces.http.request_limits import COUNT_SKIPPED, RequestLimit
from countersign.surfaces.mcp.server import build_server
from countersign.surfaces.mcp.transport import lambda_app
from countersign.toolkit import ActionContext
from countersign.toolsets.budget import TOOLSET as BUDGET
from tests.aws_lambda.conftest import instance_runtime
from tests.support.apigw import LambdaInstance, LambdaTransport
from tests.support.harness import mcp_client
from tests.support.throttle import Throttle

pytestmark = pytest.mark.anyio

LIMITS = {"COUNTERSIGN_LIMIT_CONNECTION": "30", "COUNTERSIGN_LIMIT_ADDRESS": "120"}  # template.yaml's


async def test_a_held_call_whose_counter_is_throttled_gets_its_card_once_and_is_not_counted(aws):
    env = {**aws, **LIMITS}
    runtime = instance_runtime(env)
    store = runtime.store
    workspace, person = accounts.create_workspace(store.workspaces, "Acme", "owner@example.com", "Olive")
    token = accounts.create_connection(store.workspaces, store.connections, workspace.id, person.id,
                                       "Lambda agent").token
    ctx = ActionContext.reading(store.docs, store.workspaces, workspace, person, None, runtime.desk.now())
    BUDGET.demo(store.docs, ctx)
    events: list[str] = []
    runtime.desk.on_event = events.append  # (what telemetry.wire sets on a Lambda function: its metric)
    app = lambda_app(build_server(runtime.desk, runtime.state_keys), store)
    instance = LambdaInstance(Mangum(RequestLimit(app, runtime, "mcp"), lifespan="off"))
    try:
        async with mcp_client(f"{env['COUNTERSIGN_PUBLIC_URL']}/mcp", token,
                              transport=LambdaTransport([instance])) as agent:
            listed = (await agent.call_tool("list_categories", {})).structured_content
            category = next(c["id"] for g in listed["groups"] for c in g["categories"] if not c.get("internal"))
            throttle = Throttle(store.client)
            result = await agent.call_tool("set_category_budget", {"category_id": category, "month": listed["month"],
                                                                  "amount": 12.5})
            held = result.structured_content
    finally:
        instance.close()
    assert held is not None and held["status"] == "pending", result
    assert len(throttle.sent) == 2 and throttle.sent[0].count("LIMIT") == 2 and "LIMIT" not in throttle.sent[1]
    pending, _ = store.cards.list_pending_cards(workspace.id, person.id, runtime.desk.now())
    assert [c.id for c in pending] == [held["confirmationId"]]
    assert [e.event for e in store.cards.audit_trail(workspace.id, held["confirmationId"])] == ["filed"]
    assert events.count(COUNT_SKIPPED) == 1 and events.count("card_filed") == 1
