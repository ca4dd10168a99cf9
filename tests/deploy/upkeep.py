"""The rehearsal's second act, for tests/deploy/test_rehearsal.py: what the notifier and the
sweeper functions do besides emailing the first card, each in its own worker process.

A second workspace (made with the operator's CLI) and its agent, over the MCP function:

1. a card, withdrawn by the agent before the stream reaches the notifier: the notifier finds
   nothing waiting, sends nothing and releases the person's email slot;
2. a card whose stream record never reaches the notifier (as when its batch ran out of retries
   and only its metadata went to NotifierDLQ): the sweeper emails it;
3. a card whose runner died part-way (running, its first step committed, the lease lapsed; a
   dead process leaves exactly this in the table): the sweeper settles it as failed, saying
   which steps ran;
4. a colleague the operator adds (``member add``) and their agent's card; ``member remove``
   withdraws it, and the MCP function refuses the colleague's token at once (401).
"""

from __future__ import annotations

import time

from countersign.core.card_states import CardState
from countersign.store.cards import AuditEntry, CardCommit
from countersign.store.dynamodb import DynamoDBStore
from countersign.store.outbox import NOTIFY_DONE
from tests.support.apigw import http_event
from tests.support.streams import filtered_event, schedule_event

SECOND = "second@example.com"
COLLEAGUE = "colleague@example.com"
PING = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def card_of(record: dict) -> str:
    return record["dynamodb"]["Keys"]["pk"]["S"].removeprefix("OUTBOX#")


def cards_only(event: dict) -> dict:
    """``event`` without the digest checks earlier emails left (docs/channels.md, "the digest"):
    this act is about the cards' own notifications."""
    return {**event, "Records": [r for r in event["Records"] if not card_of(r).startswith("digest.")]}


def rehearse(stack, instances: dict, stream, agent) -> dict:
    """Run the act; ``agent(tool, arguments, token)`` calls a tool over the MCP function."""
    notifier, sweeper = instances["NotifierFunction"], instances["SweeperFunction"]
    table = stack.stack.refs["Table"]
    workspace = stack.cli("workspace", "create", "--store", f"dynamodb://{table}", "--name", "Initech",
                          "--owner-email", SECOND, "--owner-name", "Peter")
    token = stack.cli("connection", "create", "--store", f"dynamodb://{table}", "--email", SECOND,
                      "--name", "agent")["token"]
    store = DynamoDBStore(table, client=stack.dynamodb)
    out: dict = {"token": token}

    # 1. Withdrawn before the notifier ran: nothing is sent.
    withdrawn = agent("suppress_domain", {"domain": "initech.com"}, token)["confirmationId"]
    assert agent("cancel_confirmation", {"confirmation_id": withdrawn}, token)["status"] == "withdrawn"
    event = cards_only(filtered_event(stream, stream.read()))
    assert [card_of(r) for r in event["Records"]] == [withdrawn], [card_of(r) for r in event["Records"]]
    out["withdrawn_result"] = notifier.invoke_event(event, event["Records"][0]["eventID"])
    out["withdrawn_outcome"] = store.outbox.get_notification(withdrawn).outcome

    # 2. A record that never got through: only the outbox item knows the email is owed.
    lost = agent("suppress_domain", {"domain": "hooli.com"}, token)["confirmationId"]
    # 3. A runner that died after the first of two steps.
    stopped = agent("suppress_domain", {"domain": "piedpiper.com"}, token)["confirmationId"]
    card = store.cards.get_card(workspace["workspace_id"], stopped, int(time.time()))
    now = int(time.time())
    store.cards.commit_card(CardCommit(card, CardState.RUNNING, now, (
        AuditEntry(stopped, workspace["workspace_id"], now, "running", f"person:{card.person_id}", "page"),),
        run={"steps": ["suppress", "notify_list"], "done": 1}, lease_until=now, channel="page"))
    stream.read()  # their records: never handed to the notifier

    swept = schedule_event()
    out["sweep"] = sweeper.invoke_event(swept, swept["id"])
    out["lost"] = store.outbox.get_notification(lost)
    out["stopped"] = store.cards.get_card(workspace["workspace_id"], stopped, int(time.time()))
    out["second_mail"] = [m for m in stack.sent_mail() if m["To"] == SECOND]
    out["ids"] = {"withdrawn": withdrawn, "lost": lost, "stopped": stopped}
    assert out["lost"].state == NOTIFY_DONE, out["lost"]

    # 4. A colleague added, their agent's card, then the colleague removed.
    out["colleague"] = stack.cli("member", "add", COLLEAGUE, "--store", f"dynamodb://{table}", "--email", SECOND,
                                 "--name", "Milton")
    colleague_token = stack.cli("connection", "create", "--store", f"dynamodb://{table}", "--email", COLLEAGUE,
                                "--name", "Milton's agent")["token"]
    ping = http_event("POST", "/mcp", headers={**MCP_HEADERS, "authorization": f"Bearer {colleague_token}"}, body=PING)
    out["colleague_ping"] = instances["McpFunction"].invoke(ping)["statusCode"]
    waiting = agent("suppress_domain", {"domain": "chotchkies.com"}, colleague_token)["confirmationId"]
    stream.read()  # its notification: not this act's concern
    out["removed"] = stack.cli("member", "remove", COLLEAGUE, "--store", f"dynamodb://{table}")
    out["removed_card"] = store.cards.get_card(workspace["workspace_id"], waiting, int(time.time()))
    out["removed_ping"] = instances["McpFunction"].invoke(ping)["statusCode"]
    out["members_after"] = stack.cli("member", "list", "--store", f"dynamodb://{table}", "--email", SECOND)
    out["colleague_token"] = colleague_token
    return out
