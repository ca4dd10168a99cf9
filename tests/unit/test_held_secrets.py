"""Credentials the process holds in the clear are redacted from log lines by value
(observability.hold_secret), and only what is a credential is held (gateway Link.secrets)."""

from __future__ import annotations

import pytest

from countersign import observability
from countersign.observability import MAX_HELD, hold_secret, redact
from countersign.toolsets.gateway.env import Link


@pytest.fixture(autouse=True)
def _fresh_hold(monkeypatch):
    monkeypatch.setattr(observability, "_HELD", {})
    monkeypatch.setattr(observability, "_held_longest_first", ())


def link(**headers: str) -> Link:
    return Link("up", "http://127.0.0.1:9/mcp", (), headers, 5.0)


def test_a_credential_header_is_held_whole_and_by_part_and_a_header_of_words_is_not():
    secrets = link(**{"Authorization": "Bearer shortkey", "X-Env": "production", "Accept": "application/json",
                      "X-Tenant": "acme_tenant_42", "X-Request-Signature": "plainwords"}).secrets()
    assert secrets == ["Bearer shortkey", "acme_tenant_42", "plainwords", "shortkey"]


def test_a_held_value_is_redacted_from_a_line_and_ordinary_words_stay():
    hold_secret(*link(Authorization="Bearer shortkey", **{"X-Env": "production"}).secrets())
    assert redact("sent Authorization=shortkey to production as application/json") == (
        "sent Authorization=[redacted] to production as application/json")
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
