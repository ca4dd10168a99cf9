"""What every channel's test button shares (email, Slack, push): at most :data:`TEST_LIMIT` tests a
person may ask for per :data:`TEST_WINDOW` of each channel, counted in the store."""

from __future__ import annotations

from ...store.limits import LimitStore
from .slots import take_slot

TEST_WINDOW = 15 * 60
TEST_LIMIT = 3


def take_test_slot(limits: LimitStore, channel: str, person_id: str, now: int, tests: str) -> None:
    """Count one test of ``channel`` for the person, or refuse it (429 with ``Retry-After``, saying
    that nothing was sent and when to try again; ``tests``: what is sent, e.g. "test emails")."""
    take_slot(limits, f"test-{channel}:{person_id}", now, TEST_WINDOW, TEST_LIMIT,
              f"Nothing was sent: you can ask for {TEST_LIMIT} {tests} every 15 minutes.")
