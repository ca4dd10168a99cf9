"""The rehearsal's third act, for tests/deploy/test_rehearsal.py: how the stack protects itself and
the people it emails, each function in its own worker process.

1. **Around CloudFront**: the same requests sent straight to the execute-api URL (no
   ``X-Countersign-Origin``, or a wrong one) are answered 403 by both HTTP functions, before any
   application code or store call.
2. **A bounce**: SES's configuration set publishes a permanent bounce for the owner's address to
   the SNS topic the notifier is subscribed to (the event as SES sends it, in the SNS record
   Lambda delivers); the address is suppressed; the agent's next card for the owner is done as
   ``email_suppressed`` with nothing sent; the page tells the owner (``emailNotice``).
3. **A burst**: one connection sends requests as fast as it can until it is answered 429 (the
   template's ``RequestsPerConnection`` per 10 s); right away another connection still files a
   card, and the page still lists the owner's cards.
4. **Compression**: an ``/api`` answer of 1 KiB or more is gzipped for a client that accepts it.
"""

from __future__ import annotations

import json
import time
import uuid

from tests.support.apigw import http_event, response_body
from tests.support.streams import filtered_event

PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def ses_bounce(address: str) -> dict:
    """A permanent bounce as SES's configuration set publishes it (event publishing, eventType)."""
    return {"eventType": "Bounce", "bounce": {
        "bounceType": "Permanent", "bounceSubType": "General", "timestamp": "2026-12-01T00:00:00.000Z",
        "feedbackId": f"0100-{uuid.uuid4()}", "reportingMTA": "dsn; a1-2.smtp-out.eu-west-1.amazonses.com",
        "bouncedRecipients": [{"emailAddress": address, "action": "failed", "status": "5.1.1",
                               "diagnosticCode": "smtp; 550 5.1.1 user unknown"}]},
        "mail": {"timestamp": "2026-12-01T00:00:00.000Z", "source": "countersign@example.com",
                 "messageId": f"0100-{uuid.uuid4()}", "destination": [address],
                 "tags": {"ses:configuration-set": ["SesConfigurationSet-REHEARSAL"]}}}


def sns_event(message: dict, topic: str) -> dict:
    """What Lambda hands a function subscribed to an SNS topic."""
    return {"Records": [{"EventSource": "aws:sns", "EventVersion": "1.0",
                         "EventSubscriptionArn": f"{topic}:{uuid.uuid4()}",
                         "Sns": {"Type": "Notification", "MessageId": str(uuid.uuid4()), "TopicArn": topic,
                                 "Subject": None, "Message": json.dumps(message),
                                 "Timestamp": "2026-12-01T00:00:01.000Z", "SignatureVersion": "1",
                                 "MessageAttributes": {}}}]}


def rehearse(stack, instances: dict, stream, agent, owner: str, signed_in: dict, token: str, other: str) -> dict:
    """``agent(tool, arguments, token)`` calls a tool over the MCP function; ``signed_in`` are the
    owner's page headers; ``token`` the owner's connection, ``other`` another connection's."""
    mcp, api, notifier = instances["McpFunction"], instances["ApiFunction"], instances["NotifierFunction"]
    out: dict = {}

    # 1. Straight to the execute-api URL: refused, without or with a wrong origin header.
    direct = []
    for headers in ({}, {"x-countersign-origin": "guess" * 13}):
        event = http_event("GET", "/api/session", headers={**headers, **{"cookie": signed_in["cookie"]}})
        direct.append(api.invoke(event, through_cloudfront=False))
        event = http_event("POST", "/mcp", headers={**MCP_HEADERS, **headers, "authorization": f"Bearer {token}"},
                           body=PING)
        direct.append(mcp.invoke(event, through_cloudfront=False))
    out["direct"] = direct

    # 2. SES reports a permanent bounce for the owner: the notifier records it.
    topic = f"arn:aws:sns:eu-west-1:123456789012:{stack.stack.stack_name}-SesEventsTopic-REHEARSAL"
    feedback = sns_event(ses_bounce(owner.upper()), topic)
    out["feedback"] = notifier.invoke_event(feedback, feedback["Records"][0]["Sns"]["MessageId"])
    mails_before = len([m for m in stack.sent_mail() if m["To"] == owner])
    card = agent("suppress_domain", {"domain": "umbrella.com"}, token)["confirmationId"]
    event = filtered_event(stream, stream.read())
    out["suppressed_result"] = notifier.invoke_event(event, event["Records"][0]["eventID"])
    from countersign.store.dynamodb import DynamoDBStore

    store = DynamoDBStore(stack.stack.refs["Table"], client=stack.dynamodb)
    out["suppressed_outcome"] = store.outbox.get_notification(card).outcome
    out["owner_mails_after"] = len([m for m in stack.sent_mail() if m["To"] == owner]) - mails_before
    out["session"] = json.loads(response_body(api.invoke(http_event("GET", "/api/session", headers=signed_in))))

    # 3. A burst from the owner's connection, until refused (two windows at most).
    limit = int(stack.stack.environment("McpFunction")["COUNTERSIGN_LIMIT_CONNECTION"])
    codes, refused = [], None
    started = time.monotonic()
    for _ in range(2 * limit + 1):
        answer = mcp.invoke(http_event("POST", "/mcp", headers={**MCP_HEADERS, "authorization": f"Bearer {token}"},
                                       body=PING))
        codes.append(answer["statusCode"])
        if answer["statusCode"] == 429:
            refused = answer
            break
    out.update(burst=codes, refused=refused, burst_seconds=time.monotonic() - started)
    # The connection's counters in the table (one item per 10 s window): what the limit counted.
    from countersign.store.hashes import secret_hash

    key = f"LIMIT#mcp-connection:{secret_hash(token)[:32]}"
    found = stack.dynamodb.query(TableName=stack.stack.refs["Table"], KeyConditionExpression="pk = :pk",
                                 ExpressionAttributeValues={":pk": {"S": key}}, ConsistentRead=True)["Items"]
    out["connection_windows"] = {item["sk"]["S"]: int(item["hits"]["N"]) for item in found}
    # Right away: another connection files a card, and the page lists the owner's cards.
    out["other_agent"] = agent("suppress_domain", {"domain": "tyrell.com"}, other)
    listed = api.invoke(http_event("GET", "/api/cards", headers=signed_in))
    out["page_after_burst"] = listed["statusCode"]

    # 4. Compressed answers: what CloudFront's /api/* behaviour passes on as the function made it.
    out["gzipped"] = api.invoke(http_event("GET", "/api/openapi.json", headers={"accept-encoding": "gzip, br"}))
    out["plain"] = api.invoke(http_event("GET", "/api/openapi.json"))
    return out
