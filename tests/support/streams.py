"""The table's stream as Lambda's event source mapping reads it, and the events Lambda would hand
the notifier and the sweeper.

moto keeps a DynamoDB stream but runs no event source mapping, so the tests read the stream
themselves (``dynamodbstreams``), apply the template's ``FilterCriteria`` and build the event:

* botocore 1.44 sends stream calls to an account-specific endpoint moto does not answer:
  the client is made with ``account_id_endpoint_mode="disabled"``;
* after a failed moto transaction an older shard iterator can show the rolled-back write and
  miss later ones: every read starts from a fresh ``TRIM_HORIZON`` iterator and skips the
  sequence numbers already seen;
* moto's records differ from Lambda's (``awsRegion`` always us-east-1, no ``eventSourceARN``,
  ``ApproximateCreationDateTime`` a datetime): :func:`to_lambda_event` fixes them up.
"""

from __future__ import annotations

import datetime
import json
import uuid
from typing import Any

from tests.support.aws import REGION, template_copy

NOTIFIER = "NotifierFunction"
SWEEPER = "SweeperFunction"


class TableStream:
    """The new records on ``table``'s stream, one read per step."""

    def __init__(self, session: Any, table: str, region: str = REGION, endpoint_url: str | None = None):
        from botocore.config import Config

        kwargs = {"region_name": region, "config": Config(account_id_endpoint_mode="disabled")}
        if endpoint_url:
            kwargs["endpoint_url"] = endpoint_url
        self.region = region
        self.dynamodb = session.client("dynamodb", region_name=region, endpoint_url=endpoint_url)
        self.client = session.client("dynamodbstreams", **kwargs)
        self.arn = self.dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
        self.seen: set[str] = set()

    def read(self) -> list[dict]:
        """Every record not read before, in stream order."""
        out = []
        shards = self.client.describe_stream(StreamArn=self.arn)["StreamDescription"]["Shards"]
        for shard in shards:
            iterator = self.client.get_shard_iterator(StreamArn=self.arn, ShardId=shard["ShardId"],
                                                      ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            while iterator:
                page = self.client.get_records(ShardIterator=iterator, Limit=1000)
                for record in page["Records"]:
                    sequence = record["dynamodb"]["SequenceNumber"]
                    if sequence not in self.seen:
                        self.seen.add(sequence)
                        out.append(record)
                iterator = page.get("NextShardIterator") if page["Records"] else None
        return out

    def skip(self) -> None:
        """Mark everything written so far as read (the mapping starts at LATEST)."""
        self.read()

    def event(self, records: list[dict]) -> dict:
        return to_lambda_event(records, self.arn, self.region)


def to_lambda_event(records: list[dict], stream_arn: str, region: str = REGION) -> dict:
    """The event Lambda hands a function for these stream records."""
    out = []
    for r in records:
        d = dict(r["dynamodb"])
        if isinstance(d.get("ApproximateCreationDateTime"), datetime.datetime):
            d["ApproximateCreationDateTime"] = float(int(d["ApproximateCreationDateTime"].timestamp()))
        out.append({"eventID": r["eventID"], "eventName": r["eventName"], "eventVersion": "1.1",
                    "eventSource": "aws:dynamodb", "awsRegion": region, "dynamodb": d, "eventSourceARN": stream_arn})
    return {"Records": out}


# -- the notifier's event source mapping, as template.yaml declares it ----------------------------


def stream_event_source(template: dict | None = None) -> dict:
    """The properties of NotifierFunction's event source mapping on the table's stream (an
    ``AWS::Lambda::EventSourceMapping`` of its own, not a SAM event: template.yaml says why)."""
    template = template or template_copy()
    [source] = [r["Properties"] for r in template["Resources"].values()
                if r["Type"] == "AWS::Lambda::EventSourceMapping"
                and r["Properties"]["FunctionName"] == {"Ref": NOTIFIER}]
    return source


def filter_patterns(template: dict | None = None) -> list[dict]:
    return [json.loads(f["Pattern"]) for f in stream_event_source(template)["FilterCriteria"]["Filters"]]


def _matches(pattern: dict, data: Any) -> bool:
    """Lambda event filtering (the EventBridge pattern syntax) for the rules the template uses:
    nested objects, lists of exact values, ``{"prefix": ...}``; anything else is refused."""
    if not isinstance(data, dict):
        return False
    for key, want in pattern.items():
        if isinstance(want, dict):
            if not _matches(want, data.get(key)):
                return False
            continue
        if key not in data:
            return False
        value = data[key]
        ok = False
        for alternative in want:
            if isinstance(alternative, dict):
                if set(alternative) != {"prefix"}:
                    raise NotImplementedError(f"filter rule {alternative} is not modelled here")
                ok = ok or (isinstance(value, str) and value.startswith(alternative["prefix"]))
            else:
                ok = ok or value == alternative
        if not ok:
            return False
    return True


def passes_filter(record: dict, patterns: list[dict] | None = None) -> bool:
    """Whether the event source mapping hands ``record`` (a Lambda-shaped record) to the function."""
    patterns = filter_patterns() if patterns is None else patterns
    return any(_matches(p, record) for p in patterns)


def filtered_event(stream: TableStream, records: list[dict]) -> dict:
    """The event the notifier gets for ``records``: Lambda's shape, the template's filter applied."""
    patterns = filter_patterns()
    return {"Records": [r for r in stream.event(records)["Records"] if passes_filter(r, patterns)]}


def schedule_event(time: datetime.datetime | None = None) -> dict:
    """What an EventBridge schedule rule (``rate(1 minute)``) hands the sweeper."""
    at = (time or datetime.datetime.now(datetime.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"version": "0", "id": str(uuid.uuid4()), "detail-type": "Scheduled Event", "source": "aws.events",
            "account": "123456789012", "time": at, "region": REGION,
            "resources": [f"arn:aws:events:{REGION}:123456789012:rule/countersign-SweeperFunctionEveryMinute-X"],
            "detail": {}}
