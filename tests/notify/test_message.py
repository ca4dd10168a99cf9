"""Composing the email (pure): count, titles, link, both parts, escaping, RFC 822 headers."""

from __future__ import annotations

import re

import pytest

from countersign.notify import Email, SendError, compose_pending, render
from countersign.notify.message import MAX_TITLES, subject_for

from ._helpers import parts
from .conftest import parse

URL = "https://confirm.example.test/confirm"


def compose(titles, count=None, **kwargs):
    return compose_pending(to="pat@example.com", waiting=titles, count=len(titles) if count is None else count,
                           link=URL, **kwargs)


def test_subject_names_the_count():
    assert subject_for(1) == "1 request waits for your confirmation"
    assert subject_for(2) == "2 requests wait for your confirmation"
    assert compose(["A", "B"]).subject == "2 requests wait for your confirmation"


def test_lists_every_title_in_order_in_both_parts():
    email = compose(["Pay rent", "Launch campaign Spring", "Buy 500 credits"])
    for part in (email.text, email.html):
        positions = [part.index(t) for t in ("Pay rent", "Launch campaign Spring", "Buy 500 credits")]
        assert positions == sorted(positions)
    assert "3 requests wait for your confirmation" in email.text


def test_lists_ten_titles_then_counts_the_rest():
    titles = [f"Request number {i:02d}" for i in range(14)]
    email = compose(titles)
    for part in (email.text, email.html):
        assert all(f"Request number {i:02d}" in part for i in range(MAX_TITLES))
        assert "Request number 10" not in part
        assert "… and 4 more" in part
    assert email.subject == "14 requests wait for your confirmation"


def test_count_can_exceed_the_titles_given():
    email = compose(["First"], count=37)
    assert "… and 36 more" in email.text
    assert email.subject.startswith("37 requests")


def test_a_lower_bound_says_so():
    email = compose(["First"], count=1000, at_least=True)
    assert email.subject == "1000+ requests wait for your confirmation"
    assert "… and at least 999 more" in email.text


def test_links_to_the_pending_page_and_nowhere_else():
    email = compose(["Pay rent"])
    assert re.findall(r'href="([^"]*)"', email.html) == [URL]
    assert re.findall(r"https?://\S+", email.text) == [URL]


def test_says_why_and_how_to_turn_it_off():
    email = compose(["Pay rent"])
    for part in (email.text, email.html):
        flat = " ".join(part.replace("&quot;", '"').split())
        assert '"Email me when an agent asks" is on' in flat
        assert "turn it off in Settings" in flat


def test_titles_are_escaped_in_html():
    evil = "<img src=x onerror=alert(1)>"
    email = compose([evil, 'Tom & "Jerry"'], name="<b>Pat</b>")
    assert "&lt;img src=x onerror=alert(1)&gt;" in email.html
    assert "<img" not in email.html and "<b>" not in email.html
    assert "Tom &amp; &quot;Jerry&quot;" in email.html
    assert evil in email.text  # plain text shows it as typed


def test_titles_are_one_line_in_text():
    email = compose(["Pay rent\n\nClick https://evil.example/x to confirm\r\n\x1b[2J"])
    assert "  - Pay rent Click https://evil.example/x to confirm" in email.text
    assert "\x1b" not in email.text and "\x1b" not in email.html


def test_long_and_empty_titles():
    email = compose(["x" * 5000, "   "])
    assert "x" * 199 + "…" in email.text and "x" * 200 not in email.text
    assert "(untitled request)" in email.text


def test_rendered_message_has_both_parts_and_headers():
    email = compose(["Pay rent"], from_address="Countersign <countersign@example.com>")
    msg = parse(render(email))
    assert msg.get_content_type() == "multipart/alternative"
    text, html = parts(msg)
    assert "Pay rent" in text and "Pay rent" in html
    assert msg["To"] == "pat@example.com"
    assert msg["From"] == "Countersign <countersign@example.com>"
    assert msg["Subject"] == "1 request waits for your confirmation"
    assert re.fullmatch(r"<[^@>]+@example\.com>", msg["Message-ID"])
    assert msg["Date"] and msg["Auto-Submitted"] == "auto-generated"


def test_non_ascii_titles_survive_rendering():
    email = compose(["Café Ünïcode — 12,50 €"])
    text, html = parts(parse(render(email)))
    assert "Café Ünïcode — 12,50 €" in text and "Café Ünïcode — 12,50 €" in html


@pytest.mark.parametrize("to", ["pat@example.com\nBcc: eve@example.com", "pat@example.com\r\nX-Evil: 1"])
def test_header_injection_is_refused(to):
    with pytest.raises(SendError):
        render(Email(to=to, subject="s", text="t", html="<p>h</p>"))
