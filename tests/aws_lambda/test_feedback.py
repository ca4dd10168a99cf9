"""SES's bounces and complaints, as the notifier function receives them (SNS records carrying the
configuration set's events; hand-built, since moto publishes no configuration-set events): a
permanent bounce or a complaint suppresses the address, the next card for it is done as
``email_suppressed`` with nothing sent, and the page says why (``emailNotice``)."""

from __future__ import annotations

import json

import pytest

from countersign.surfaces.api.session import email_notice
from countersign.surfaces.background.feedback import feedback_handler, is_feedback, suppressions_of
from countersign.surfaces.background.notifier import stream_handler
from tests.aws_lambda.conftest import Person, instance_runtime, notification, sent_mail
from tests.support.apigw import LambdaContext
from tests.support.streams import filtered_event


def ses_event(kind: str, *addresses: str, bounce_type: str = "Permanent", key: str = "eventType") -> dict:
    body: dict = {key: kind, "mail": {"messageId": "m-1", "source": "countersign@example.com",
                                      "destination": list(addresses)}}
    if kind == "Bounce":
        body["bounce"] = {"bounceType": bounce_type, "bounceSubType": "General", "feedbackId": "f-1",
                          "bouncedRecipients": [{"emailAddress": a, "action": "failed", "status": "5.1.1"}
                                                for a in addresses]}
    else:
        body["complaint"] = {"complainedRecipients": [{"emailAddress": a} for a in addresses],
                             "complaintFeedbackType": "abuse", "feedbackId": "f-2"}
    return body


def sns(*messages) -> dict:
    return {"Records": [{"EventSource": "aws:sns", "EventVersion": "1.0", "Sns": {
        "Type": "Notification", "MessageId": f"sns-{i}", "TopicArn": "arn:aws:sns:eu-west-1:123456789012:ses",
        "Message": m if isinstance(m, str) else json.dumps(m)}} for i, m in enumerate(messages)]}


def test_which_feedback_suppresses():
    assert suppressions_of(ses_event("Bounce", "A@Example.com"), 5)[1][0].email == "a@example.com"
    assert suppressions_of(ses_event("Bounce", "a@example.com", bounce_type="Transient"), 5) == (
        "email_soft_bounce", [])
    name, [one] = suppressions_of(ses_event("Complaint", "Bo <bo@example.com>", key="notificationType"), 5)
    assert (name, one.email, one.reason, one.detail) == ("email_complained", "bo@example.com", "complaint", "abuse")
    assert suppressions_of({"eventType": "Delivery"}, 5) == ("", [])
    assert is_feedback(sns({})) and not is_feedback({"Records": [{"eventSource": "aws:dynamodb"}]})


@pytest.mark.parametrize("message", [
    {"eventType": "Bounce", "bounce": "Permanent"},
    {"eventType": "Bounce", "bounce": {"bounceType": "Permanent", "bouncedRecipients": "a@example.com"}},
    {"eventType": "Bounce", "bounce": {"bounceType": "Permanent", "bouncedRecipients": ["a@example.com", 5]}},
    {"eventType": "Complaint", "complaint": ["x"]},
    {"eventType": "Complaint", "complaint": {"complainedRecipients": [{"emailAddress": ["a@example.com"]}]}},
])
def test_feedback_of_another_shape_is_read_as_far_as_it_fits_and_never_raises(message):
    name, found = suppressions_of(message, 5)
    assert found == [] and name in ("email_bounced", "email_complained", "email_soft_bounce")


def test_a_detail_that_is_not_text_is_not_kept():
    odd = {"eventType": "Bounce", "bounce": {"bounceType": "Permanent", "bounceSubType": {"x": 1},
                                             "bouncedRecipients": [{"emailAddress": "a@example.com"}]}}
    assert suppressions_of(odd, 5)[1][0].detail is None


def test_a_bounce_suppresses_card_emails_and_the_page_says_so(aws, stream):
    runtime = instance_runtime(aws)
    olive, bruno = Person(runtime, "olive@example.com"), Person(runtime, "bruno@example.com")
    counted: list[str] = []
    handle = feedback_handler(runtime, counted.append)
    answer = handle(sns(ses_event("Bounce", "OLIVE@example.com"), "not json",
                        ses_event("Bounce", "bruno@example.com", bounce_type="Transient")), LambdaContext())
    assert answer == {"records": 3, "failed": 0, "suppressed": 1}
    assert counted == ["email_bounced", "email_soft_bounce"]

    cards = [olive.file("one"), bruno.file("two")]
    assert stream_handler(runtime)(filtered_event(stream, stream.read()), LambdaContext()) == {"batchItemFailures": []}
    assert notification(runtime, cards[0]).outcome == "email_suppressed"
    assert notification(runtime, cards[1]).outcome == "email_sent"
    assert [m["To"] for m in sent_mail()] == ["bruno@example.com"]

    notice = email_notice(runtime, olive.person)
    assert notice is not None and notice["reason"] == "bounce" and "did not accept mail" in notice["message"]
    assert email_notice(runtime, bruno.person) is None
    # A complaint replaces the reason; lifting the suppression lets emails through again.
    handle(sns(ses_event("Complaint", "olive@example.com")), LambdaContext())
    assert runtime.store.suppressions.address_suppression("olive@example.com").reason == "complaint"
    runtime.store.suppressions.lift_suppression("olive@example.com")
    assert email_notice(runtime, olive.person) is None
