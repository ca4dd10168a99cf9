"""Credentials the process holds in the clear are redacted from log lines by value
(countersign.logs.redaction.hold_secret); every header an upstream is given is one, but for the standard plain
ones (gateway Link.secrets)."""

from __future__ import annotations

import pytest

from countersign.logs import redaction
from countersign.logs.redaction import MAX_HELD, hold_secret, redact
from countersign.toolsets.gateway.env import Link


@pytest.fixture(autouse=True)
def _fresh_hold(monkeypatch):
    monkeypatch.setattr(redaction, "_HELD", {})
    monkeypatch.setattr(redaction, "_held_longest_first", ())


def link(**headers: str) -> Link:
    return Link("up", "http://127.0.0.1:9/mcp", (), headers, 5.0)


def test_every_header_but_the_standard_plain_ones_is_held_whole_and_by_part():
    import base64

    basic = base64.b64encode(b"alice:correct horse").decode()
    secrets = link(**{"Authorization": "Bearer shortkey", "X-Env": "production", "Accept": "application/json",
                      "X-Access": "correct horse battery", "Cookie": "theme=dark; sid=s3ss10nvalue",
                      "Proxy-Authorization": f"Basic {basic}", "Content-Type": "application/json; charset=utf-8",
                      "Accept-Language": "en-GB-oxendict"}).secrets()
    assert set(secrets) == {
        "Bearer shortkey", "shortkey", "production", "correct horse battery",
        "theme=dark; sid=s3ss10nvalue", "theme=dark;", "theme=dark", "sid=s3ss10nvalue", "s3ss10nvalue",
        f"Basic {basic}", basic, "alice:correct horse", "correct horse",
    }
    assert secrets == sorted(secrets, key=len, reverse=True)


def test_a_held_value_is_redacted_from_a_line_and_ordinary_words_stay():
    hold_secret(*link(Authorization="Bearer shortkey", Accept="application/json").secrets())
    assert redact("sent Authorization=shortkey as application/json") == (
        "sent Authorization=[redacted] as application/json")
    assert redact("echo: shortkey!") == "echo: [redacted]!"  # a short key that looks like no key


def test_the_least_recently_held_is_dropped_first():
    hold_secret("first-held-1")
    for n in range(MAX_HELD - 1):
        hold_secret(f"value-{n:06d}")
    hold_secret("first-held-1")  # used again: now the most recent
    hold_secret("one-more-value-1")  # one over: the least recently used (value-000000) goes
    assert redact("first-held-1") == "[redacted]"
    assert redact("one-more-value-1") == "[redacted]"
    assert redact("value-000000") == "value-000000"
    assert redact("value-000001") == "[redacted]"


def test_a_value_under_eight_characters_is_not_held():
    hold_secret("short1")
    assert redact("a short1 word") == "a short1 word"
