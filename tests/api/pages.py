"""Helpers for the confirm API tests: a page-like HTTP client and the outbox reader.

Cookies are sent by hand: the session cookie is ``Secure`` and the test client speaks plain http.
"""

from __future__ import annotations

import email
import itertools
import time
from email import policy
from pathlib import Path

from tests.support.confirm_page import COOKIE, Page, session_cookie  # noqa: F401  (re-exported for the api tests)


class Clock:
    """The desk's clock, moved to a fresh rate-limit window of its own and steerable."""

    _windows = itertools.count(1)

    def __init__(self, desk):
        self.desk = desk
        self.now = float((int(time.time()) // 900 + 1000 * next(self._windows)) * 900 + 5)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def outbox(runtime) -> Path:
    return runtime.settings.data_dir / "outbox"


def signin_emails(runtime, address: str) -> list[email.message.EmailMessage]:
    found = []
    folder = outbox(runtime)
    for path in sorted(folder.glob("*.eml")) if folder.is_dir() else []:
        message = email.message_from_bytes(path.read_bytes(), policy=policy.default)
        if message["To"] == address and "sign-in" in message["Subject"]:
            found.append(message)
    return found


def wait_for_signin_email(runtime, address: str, count: int = 1, timeout: float = 10) -> email.message.EmailMessage:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = signin_emails(runtime, address)
        if len(found) >= count:
            return found[count - 1]
        time.sleep(0.02)
    raise AssertionError(f"no sign-in email #{count} to {address}")


def link_token(message) -> str:
    text = message.get_body(("plain",)).get_content()
    marker = "/signin#token="
    start = text.index(marker) + len(marker)
    return text[start:].split()[0]
