"""DynamoDB's answer to a transaction one of whose items was throttled, on a real boto3 client.

moto never throttles. :class:`Throttle` is a handler on the client's own ``before-call`` event —
the way botocore's Stubber answers a call — that answers the first ``TransactWriteItems`` carrying
a request counter (``LIMIT#`` items) beside a card's items with the ``TransactionCanceledException`` DynamoDB sends, so
nothing of that call reaches moto; every other call goes through to moto as it is.
"""

from __future__ import annotations

import json

from botocore.awsrequest import AWSResponse


class Throttle:
    """Answers the first ``TransactWriteItems`` that carries a counter (``LIMIT#`` items) beside
    other items (a card's transaction) with DynamoDB's cancellation: ``code`` on each counter, on
    the others what ``others`` says for their partition (else ``None``: they would have passed).
    Every transaction the client sends is noted (its items' partitions)."""

    def __init__(self, client, code: str = "ThrottlingError", others: dict[str, str] | None = None):
        self.code, self.others = code, others or {}
        self.sent: list[list[str]] = []
        self.thrown = False
        client.meta.events.register("before-call.dynamodb.TransactWriteItems", self)

    def __call__(self, params, **_):
        items = json.loads(params["body"])["TransactItems"]
        keys = [next(iter(item.values())).get("Key") or next(iter(item.values())).get("Item") for item in items]
        partitions = [key["pk"]["S"].split("#", 1)[0] for key in keys]
        self.sent.append(partitions)
        if self.thrown or "LIMIT" not in partitions or set(partitions) == {"LIMIT"}:
            return None  # (the counters counted alone, after a request's work, are not this case)
        self.thrown = True
        reasons = [{"Code": self.code, "Message": "Throughput exceeds the current capacity of your table or index."}
                   if p == "LIMIT" else {"Code": self.others.get(p, "None")} for p in partitions]
        parsed = {"Error": {"Code": "TransactionCanceledException",
                            "Message": f"Transaction cancelled, please refer cancellation reasons for specific "
                                       f"reasons [{', '.join(r['Code'] for r in reasons)}]"},
                  "CancellationReasons": reasons, "ResponseMetadata": {"HTTPStatusCode": 400}}
        return AWSResponse("https://dynamodb.invalid", 400, {}, None), parsed
