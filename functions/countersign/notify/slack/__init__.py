"""Slack, beside email: a filed card posted as a Block Kit message with Confirm / Decline / Open
(:mod:`.poster`, :mod:`.blocks`), the app's credentials sealed (:mod:`.credentials`), and Slack's
Web API through ``slack_sdk`` (:mod:`.client`). The clicks come back through
:mod:`countersign.surfaces.slack`; docs/channels.md says what Slack can and cannot answer, and why.
"""

from __future__ import annotations

from .blocks import CONFIRM, DECLINE, OPEN, OPEN_WITH_PASSKEY, TEST_TITLE, SlackCard, answered_message, card_message
from .client import SlackCallError, call
from .credentials import SlackCredentials
from .poster import EVENTS, FAILED, NOT_LINKED, OFF, POSTED, QUIET, RETRY, SlackNotifier, outcome_words

__all__ = [
    "CONFIRM", "DECLINE", "EVENTS", "FAILED", "NOT_LINKED", "OFF", "OPEN", "OPEN_WITH_PASSKEY", "POSTED", "QUIET",
    "RETRY", "TEST_TITLE",
    "SlackCallError", "SlackCard", "SlackCredentials", "SlackNotifier", "answered_message", "call", "card_message",
    "outcome_words",
]
