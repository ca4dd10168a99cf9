"""The table's stream as a surface: each new ``OUTBOX`` item (a filed card's notification) is
delivered by the card notifier at once, and each ``WHEVENT`` item not yet fanned out (a card event
a workspace's webhooks are owed) by the webhook deliverer.

On AWS, filing a card writes its notification in the same transaction (the transactional
outbox); the table's stream carries the new item to the ``notifier`` function
(:mod:`countersign.handlers.notifier`), whose event source mapping lets only those ``INSERT``
records through (``template.yaml``: ``FilterCriteria``). :func:`stream_handler` is that
function without its observability wrapper, so tests drive it in process.

Per record (Powertools ``BatchProcessor``, partial batch responses):

* not an ``INSERT`` of an ``OUTBOX`` item → ignored (a success);
* else :meth:`CardNotifier.deliver`, then the notification is read back. Done (sent, rate
  limited, nothing pending, disabled, given up), still held by another sender whose lease runs,
  or put back after a failed send to be tried again after its backoff (the sweeper tries it then:
  retrying the record within seconds would only find it not yet due) → a success. Anything else
  (the store could not be reached, marking it done failed) → the record fails: it is reported in
  ``batchItemFailures`` and Lambda retries it; after the retries the on-failure destination
  (``NotifierDLQ``) gets the batch's metadata — a message there means deliveries could not even
  be recorded, not merely that a send failed.

A ``WHEVENT`` record: :meth:`WebhookDeliverer.deliver_event` fans it out and tries each delivery once;
a failed attempt is put back with its backoff, which the sweeper then owns (a success). Still not
fanned out although due (the store could not be reached) → the record fails. Not due yet (a
``card.lapsed`` waiting for its card's deadline) → a success: the sweeper fans it out then.
The same record posts the card to the workspace's Slack app, if it has one
(:meth:`~countersign.notify.slack.SlackNotifier.post`, at most once per card): a post Slack could
not take now (unreachable, rate limited) fails the record, so Lambda tries again (the email, done,
is not sent twice); a post Slack refused for good is logged and counted, and the record succeeds.
And it pushes the card to its person's devices (:meth:`~countersign.notify.push.PushNotifier.send_card`)
when this record leased the notification (not on a retried or duplicate record, which would show the
card twice); a push is never retried (the email and the page still carry the card).

A quiet-hours wait (the cards Slack and push held until a person's quiet hours end) is written
before it is due: its record finds it not due (a success), and the sweep shows its cards then.

The outbox item, not the stream, is the truth: whatever is not done, the scheduled sweeper
(:mod:`countersign.surfaces.background.sweeper`) delivers once it is due. A duplicate stream record finds
the notification done and sends nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...notify.slack import RETRY as SLACK_RETRY
from ...store.outbox import NOTIFY_DONE, NOTIFY_PENDING, NOTIFY_SENDING, is_digest, is_quiet_wait, is_reminder

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse

log = logging.getLogger("countersign.notify.stream")

NOT_DELIVERED = "notification_not_delivered"  # the metric counted per failed record


class NotDelivered(Exception):
    """A notification still owed after its record was handled: the record is reported failed."""


def outbox_card_id(record: Any) -> str | None:
    """The card whose notification ``record`` (a Powertools ``DynamoDBRecord``) inserted, or None
    when it is anything else. The ``NewImage`` is decoded with the store's own codec."""
    # Powertools and the DynamoDB codec (boto3) are the notifier function's: importing this module for
    # its names (the local server, the CLI) loads neither
    from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecordEventName

    from ...store.dynamodb import codec

    # Compare members: DynamoDBRecordEventName.INSERT.value is 0, which is falsy.
    if record.event_name != DynamoDBRecordEventName.INSERT or record.dynamodb is None:
        return None
    raw = record.dynamodb.raw_event.get("NewImage") or {}
    if "pk" not in raw or "sk" not in raw:
        return None
    notification = codec.notification_from(codec.plain(raw))
    if not notification.card_id or codec.outbox_key(notification.card_id) != {"pk": raw["pk"], "sk": raw["sk"]}:
        return None
    return notification.card_id


def webhook_event_id(record: Any) -> str | None:
    """The webhook event ``record`` (a Powertools ``DynamoDBRecord``) wrote and is not fanned out
    yet, or None when it is anything else."""
    from ...store.dynamodb import codec  # the notifier function's (see outbox_card_id)
    from ...store.dynamodb.webhook_deliveries import event_from_image

    if record.dynamodb is None:
        return None
    raw = record.dynamodb.raw_event.get("NewImage") or {}
    if "pk" not in raw or "sk" not in raw:
        return None
    event = event_from_image(codec.plain(raw))
    return None if event is None or event.done else event.id


def stream_handler(
    runtime: Any, metric: Callable[[str], None] | None = None
) -> Callable[[dict, Any], PartialItemFailureResponse]:
    """A Lambda handler for the table's stream events, delivering through ``runtime.notifier``.
    Returns ``{"batchItemFailures": [...]}``; raises only when every record failed (Powertools'
    ``BatchProcessingError``: Lambda then retries the batch, bisecting it)."""
    from aws_lambda_powertools.utilities.batch import (  # the notifier function's (see outbox_card_id)
        BatchProcessor,
        EventType,
        process_partial_response,
    )

    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
    notifier, store = runtime.notifier, runtime.store

    def webhook_handler(event_id: str) -> str:
        runtime.webhooks.deliver_event(event_id)
        after = store.webhook_deliveries.get_event(event_id)
        if after is None or after.done:
            return "fanned_out"
        if after.due_at > int(runtime.webhooks.clock()):
            return "scheduled"  # a card's deadline: the sweeper fans it out then
        if metric is not None:
            metric(NOT_DELIVERED)
        raise NotDelivered(f"the webhook event {event_id} is still owed")

    def record_handler(record: Any) -> str:
        card_id = outbox_card_id(record)
        if card_id is None:
            event_id = webhook_event_id(record)
            return "ignored" if event_id is None else webhook_handler(event_id)
        outcome = notifier.deliver(card_id)
        after = store.outbox.get_notification(card_id)
        if after is None:  # removed (by TTL, long after its card): nothing is owed
            log.warning("the notification of card %s is gone; nothing to deliver", card_id)
            return "gone"
        # a reminder, a digest check or a quiet-hours wait is no card to post
        is_card = not (is_reminder(card_id) or is_digest(card_id) or is_quiet_wait(card_id))
        push = getattr(runtime, "push", None)
        if push is not None and is_card and outcome is not None:  # this record delivered it: push it once
            push.send_card(after.workspace_id, card_id)
        slack = getattr(runtime, "slack", None)
        if slack is not None and is_card and slack.post(after.workspace_id, card_id) == SLACK_RETRY:
            if metric is not None:
                metric(NOT_DELIVERED)
            raise NotDelivered(f"card {card_id} is not posted to Slack yet")
        if after.state == NOTIFY_DONE:
            return after.outcome or "done"
        now = int(notifier.clock())
        if outcome is None and after.state == NOTIFY_SENDING and (after.lease_until or 0) > now:
            return "held"  # another sender has it; if that one dies, the sweeper takes over
        if after.state == NOTIFY_PENDING and after.due_at > now:
            return "retry_scheduled"  # the send failed: the outbox's backoff and the sweeper own it now
        if metric is not None:
            metric(NOT_DELIVERED)
        log.warning("the notification of card %s is still %s (attempts %s, due at %s); its record is reported failed",
                    card_id, after.state, after.attempts, after.due_at)
        raise NotDelivered(f"the notification of card {card_id} is still {after.state}")

    def handle(event: dict, context: Any) -> PartialItemFailureResponse:
        return process_partial_response(event=event, record_handler=record_handler, processor=processor,
                                        context=context)

    return handle


def summary(event: dict, result: Any) -> dict:
    """The ``handled`` log line's fields for one stream batch."""
    failures = result.get("batchItemFailures", []) if isinstance(result, dict) else []
    out = {"records": len(event.get("Records") or []), "failed": len(failures)}
    if isinstance(result, dict) and "suppressed" in result:  # SES feedback (countersign.surfaces.background.feedback)
        out["suppressed"] = result["suppressed"]
    return out
