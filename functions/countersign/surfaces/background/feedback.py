"""SES's feedback on the emails it took: bounces and complaints suppress the address for card
emails (:class:`~countersign.store.suppressions.SuppressionStore`).

Every send names the stack's SES configuration set (``COUNTERSIGN_SES_CONFIGURATION_SET``). Its
event destination publishes ``Bounce`` and ``Complaint`` events to an SNS topic, and the
``notifier`` function is subscribed to it (template.yaml: ``SesEvents``). Per message:

* a **permanent** bounce (the address does not exist, or the domain refuses it for good)
  suppresses each bounced recipient; a transient or undetermined one (a full mailbox, a
  greylist) is only counted: SES itself retried it;
* a **complaint** (the person marked a card email as spam) suppresses each complained recipient.

The notifier then finishes that person's card notifications as ``email_suppressed`` without
sending, and the confirm page tells them why when they sign in (``emailNotice`` in
``GET /api/session``). SES's own account-level suppression list (the configuration set's
``SuppressionOptions``) drops sends to such an address as well, sign-in links included.

Events arrive as SNS records whose ``Message`` is the SES event as JSON (``eventType``); SES
identity notifications (``notificationType``, no configuration set) are read the same way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from ...store.suppressions import Suppression

log = logging.getLogger("countersign.feedback")

BOUNCED = "email_bounced"  # a permanent bounce: the address is suppressed
COMPLAINED = "email_complained"  # a complaint: the address is suppressed
SOFT_BOUNCE = "email_soft_bounce"  # transient or undetermined: counted only


def _address(raw: Any) -> str | None:
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    if "<" in text and text.endswith(">"):  # "Name <address>"
        text = text.rsplit("<", 1)[1][:-1]
    text = text.strip().lower()
    return text if "@" in text and len(text) <= 320 else None


def suppressions_of(message: dict[str, Any], now: int) -> tuple[str, list[Suppression]]:
    """(the metric to count, the suppressions to record) for one SES event or notification."""
    kind = message.get("eventType") or message.get("notificationType")
    if kind == "Bounce":
        bounce = _object(message.get("bounce"))
        if bounce.get("bounceType") != "Permanent":
            return SOFT_BOUNCE, []
        detail = _text(bounce.get("bounceSubType"))
        found = [_address(r.get("emailAddress")) for r in _objects(bounce.get("bouncedRecipients"))]
        return BOUNCED, [Suppression(a, "bounce", now, detail) for a in found if a]
    if kind == "Complaint":
        complaint = _object(message.get("complaint"))
        detail = _text(complaint.get("complaintFeedbackType"))
        found = [_address(r.get("emailAddress")) for r in _objects(complaint.get("complainedRecipients"))]
        return COMPLAINED, [Suppression(a, "complaint", now, detail) for a in found if a]
    return "", []


# SES sends these shapes; anything else on the topic (another publisher) is read as far as it fits
def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return value[:200] if isinstance(value, str) else None


def is_feedback(event: dict) -> bool:
    """Whether ``event`` is an SNS delivery (SES feedback) rather than a stream batch."""
    records = event.get("Records") or []
    return bool(records) and isinstance(records[0], dict) and records[0].get("EventSource") == "aws:sns"


def feedback_handler(runtime: Any, metric: Callable[[str], None] | None = None) -> Callable[[dict, Any], dict]:
    """A Lambda handler for SNS events carrying SES feedback. Records every suppression; a message
    that is not JSON is logged and skipped. A store error raises, and Lambda retries the event."""

    def handle(event: dict, context: Any) -> dict:
        now = runtime.desk.now()
        suppressed = 0
        records = event.get("Records") or []
        for record in records:
            try:
                message = json.loads((record.get("Sns") or {}).get("Message") or "")
            except ValueError:
                log.warning("an SNS message that is not SES feedback (not JSON) was skipped")
                continue
            if not isinstance(message, dict):
                continue
            name, found = suppressions_of(message, now)
            for suppression in found:
                runtime.store.suppressions.suppress_address(suppression)
                suppressed += 1
                log.warning("card emails to %s are suppressed: %s (%s)", suppression.email, suppression.reason,
                            suppression.detail or "-")
            if name and metric is not None:
                metric(name)
        return {"records": len(records), "failed": 0, "suppressed": suppressed}

    return handle
