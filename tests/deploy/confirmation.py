"""The rehearsal's first act, for the ``rehearsal`` fixture (tests/deploy/conftest.py): a whole
confirmation across the four functions (tests/deploy/test_rehearsal.py says what it proves), then
the upkeep act (tests/deploy/upkeep.py) and the protection act (tests/deploy/protection.py).
"""

from __future__ import annotations

import json
import re

import anyio

from countersign.store.dynamodb import DynamoDBStore
from tests.deploy import oauth_flow, protection, upkeep
from tests.deploy.rehearsal import FROM_ADDRESS, OWNER, MotoStack, mail_text
from tests.support.apigw import LambdaTransport, http_event, response_body, set_cookies
from tests.support.harness import mcp_client
from tests.support.streams import filtered_event

FUNCTIONS = ("McpFunction", "ApiFunction", "NotifierFunction", "SweeperFunction")


def rehearse(stack: MotoStack) -> dict:
    """Run the whole confirmation once, then the upkeep and protection acts; return what they left."""
    instances = {function: stack.start(function) for function in FUNCTIONS}  # all import in parallel
    mcp, api, notifier = instances["McpFunction"], instances["ApiFunction"], instances["NotifierFunction"]
    record: dict = {"instances": instances, "stack": stack}
    stream = stack.stream()
    stream.skip()  # the event source mapping starts at LATEST

    workspace = stack.cli("workspace", "create", "--store", f"dynamodb://{stack.stack.refs['Table']}",
                          "--name", "Acme", "--owner-email", OWNER, "--owner-name", "Olive")
    connection = stack.cli("connection", "create", "--store", f"dynamodb://{stack.stack.refs['Table']}",
                           "--email", OWNER, "--name", "Claude on laptop")
    assert connection["mcp_url"] == f"{stack.public_url}/mcp"
    record.update(workspace=workspace, connection=connection, token=connection["token"])
    for instance in instances.values():
        ready = instance.wait_ready()
        assert ready["ready"], ready.get("error")

    async def call(token: str, tool: str, arguments: dict) -> dict:
        async with mcp_client(connection["mcp_url"], token, transport=LambdaTransport([mcp])) as client:
            result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        return result.structured_content

    def agent(tool: str, arguments: dict, token: str = connection["token"]) -> dict:
        return anyio.run(call, token, tool, arguments)

    # The agent asks; the write is held as a card, its notification written with it. The MCP
    # function answers at once and emails nobody: the table's stream carries the notification's
    # INSERT (the only record the template's filter passes) to the notifier, which emails the owner.
    held = agent("suppress_domain", {"domain": "globex.com"})
    assert held["status"] == "pending", held
    card_id = held["confirmationId"]
    assert held["confirmationUrl"] == f"{stack.public_url}/confirm?card={card_id}"
    record.update(held=held, card_id=card_id)
    assert [m for m in stack.sent_mail() if m["To"] == OWNER] == []
    event = filtered_event(stream, stream.read())
    assert [upkeep.card_of(r) for r in event["Records"]] == [card_id]
    record["notified"] = notifier.invoke_event(event, event["Records"][0]["eventID"])
    [card_mail] = [m for m in stack.sent_mail() if m["To"] == OWNER]
    assert FROM_ADDRESS in card_mail["From"] and f"{stack.public_url}/confirm" in mail_text(card_mail)

    # The person signs in by email link, as the page does.
    page = {"origin": stack.public_url, "content-type": "application/json"}
    asked = api.invoke(http_event("POST", "/api/signin/request", headers=page, body=json.dumps({"email": OWNER}),
                                  base64_body=True))
    assert asked["statusCode"] == 202, asked
    # Which address the sign-in rate limit counted (the table, read from outside the functions).
    limits = stack.dynamodb.scan(TableName=stack.stack.refs["Table"], FilterExpression="begins_with(pk, :p)",
                                 ExpressionAttributeValues={":p": {"S": "LIMIT#signin-address:"}})["Items"]
    record["limit_keys"] = sorted(item["pk"]["S"] for item in limits)
    [signin_mail] = [m for m in stack.sent_mail() if "sign-in" in m["Subject"]]
    link = re.search(r"https://\S+/signin#token=(\S+)", mail_text(signin_mail))
    assert link, mail_text(signin_mail)
    signin_token = link.group(1)
    done = api.invoke(http_event("POST", "/api/signin/complete", headers=page,
                                 body=json.dumps({"token": signin_token})))
    assert done["statusCode"] == 200, done
    [cookie] = set_cookies(done)
    session_id = cookie.split(";", 1)[0].split("=", 1)[1]
    csrf = json.loads(response_body(done))["csrfToken"]
    signed_in = {**page, "cookie": cookie.split(";", 1)[0], "x-csrf-token": csrf}
    record.update(signin_token=signin_token, session_id=session_id, csrf=csrf)

    listed = api.invoke(http_event("GET", "/api/cards", headers=signed_in))
    assert listed["statusCode"] == 200 and [c["id"] for c in json.loads(response_body(listed))["cards"]] == [card_id]
    confirmed = api.invoke(http_event("POST", f"/api/cards/{card_id}/confirm", headers=signed_in))
    assert confirmed["statusCode"] == 200, response_body(confirmed)
    assert json.loads(response_body(confirmed))["state"] == "completed"

    # The agent polls and sees the action ran.
    status = agent("get_confirmation_status", {"confirmation_id": card_id})
    assert status["status"] == "completed", status
    record["status"] = status

    record["upkeep"] = upkeep.rehearse(stack, instances, stream, agent)
    record["oauth"] = oauth_flow.rehearse(stack, instances, signed_in)
    record["protection"] = protection.rehearse(stack, instances, stream, agent, OWNER, signed_in,
                                               connection["token"], record["upkeep"]["token"])

    # What must never reach a log line, then the proof that it would be redacted if it did.
    store = DynamoDBStore(stack.stack.refs["Table"], client=stack.dynamodb)
    ticket = store.cards.get_card(workspace["workspace_id"], card_id, 0).ticket
    record["secrets"] = {
        "connection token": connection["token"], "sign-in token": signin_token, "session id": session_id,
        "csrf token": csrf, "ticket": ticket, "ticket payload": ticket.split(".")[0],
        "ticket signature": ticket.split(".")[1], "signing key": stack.key_values["signing"],
        "state key": stack.key_values["state"], "origin secret": stack.key_values["origin"],
        "second connection token": record["upkeep"]["token"],
        "removed colleague's token": record["upkeep"]["colleague_token"],
        **{f"OAuth token {n}": token for n, token in enumerate(record["oauth"]["tokens"])},
    }
    for instance in instances.values():
        instance.log(f"ticket={ticket} Authorization: Bearer {connection['token']} key {stack.key_values['state']}")
        instance.log(f"confirmation code {signin_token[:11]} for the sign-in link #token={signin_token}")
    record["calls"] = {function: instance.calls() for function, instance in instances.items()}
    return record


