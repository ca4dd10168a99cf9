"""Composing the "requests wait for you" email, and rendering any :class:`Email` as RFC 822.

Pure functions: no store, no clock (except the ``Date`` header's default), no network.

The email names how many requests wait and their titles, and links to the page that lists
them. It never carries a ticket, a code, a sign-in token or a card's arguments: nothing in it
can confirm anything, and its one link is a plain GET that changes nothing when a mail scanner
prefetches it. Titles are data: they are escaped in the HTML part and flattened to one
line in the text part, so a title can neither inject markup nor fake a paragraph.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Sequence
from email import policy
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr

from .interface import DEFAULT_FROM_ADDRESS, Email, SendError

MAX_TITLES = 10
MAX_TITLE_CHARS = 200
UNTITLED = "(untitled request)"
SETTING_NAME = "Agent requests email"


def one_line(value: object, limit: int = MAX_TITLE_CHARS) -> str:
    """``value`` as a single line of text: control characters dropped, whitespace collapsed, capped."""
    text = "".join(c for c in str(value) if unicodedata.category(c) != "Cc" or c in "\t\n\r")
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def subject_for(count: int, at_least: bool = False) -> str:
    if count == 1 and not at_least:
        return "1 request waits for your confirmation"
    return f"{count}{'+' if at_least else ''} requests wait for your confirmation"


def _headline(count: int, at_least: bool) -> str:
    if count == 1 and not at_least:
        return "1 request waits for your confirmation:"
    return f"{count}{' or more' if at_least else ''} requests wait for your confirmation:"


def compose_pending(
    *,
    to: str,
    titles: Sequence[str],
    count: int,
    pending_url: str,
    name: str = "",
    at_least: bool = False,
    from_address: str = DEFAULT_FROM_ADDRESS,
) -> Email:
    """The notification for a person with ``count`` pending requests.

    ``titles`` are the titles of the oldest requests, oldest first (only the first
    :data:`MAX_TITLES` are listed; the rest are counted as "… and N more"). ``at_least`` says
    that ``count`` is a lower bound (the list was too long to count).
    """
    shown = [one_line(t) or UNTITLED for t in list(titles)[:MAX_TITLES]]
    more = max(count - len(shown), 0)
    greeting = f"Hello {one_line(name, 80)}," if one_line(name, 80) else "Hello,"
    headline = _headline(count, at_least)
    if at_least:
        more_line = f"… and at least {more} more" if more else "… and more"
    else:
        more_line = f"… and {more} more" if more else ""
    because = (
        f'You receive this email because "{SETTING_NAME}" is on for you. '
        "You can turn it off in Settings on that page."
    )

    text_lines = [greeting, "", headline, ""]
    text_lines += [f"  - {t}" for t in shown]
    if more_line:
        text_lines.append(f"  {more_line}")
    text_lines += [
        "",
        "Review them, then confirm or decline each one:",
        pending_url,
        "",
        "Nothing runs until you confirm it.",
        "",
        "-- ",
        because,
        "",
    ]

    e = html.escape
    items = "".join(f"<li>{e(t)}</li>" for t in shown)
    if more_line:
        items += f'<li style="list-style:none;color:#555">{e(more_line)}</li>'
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{e(subject_for(count, at_least))}</title></head>
<body style="font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:16px;line-height:1.5;color:#111;margin:0;padding:16px">
<p>{e(greeting)}</p>
<p><strong>{e(headline)}</strong></p>
<ul style="padding-left:20px">{items}</ul>
<p><a href="{e(pending_url, quote=True)}" style="display:inline-block;padding:12px 20px;background:#1a56db;color:#fff;text-decoration:none;border-radius:6px">Review requests</a></p>
<p>Nothing runs until you confirm it.<br>
<span style="font-size:13px;color:#555">Or open this address: {e(pending_url)}</span></p>
<hr style="border:none;border-top:1px solid #ddd">
<p style="font-size:13px;color:#555">{e(because)}</p>
</body></html>
"""  # noqa: E501 - the email's markup keeps each element and its inline style on one line
    return Email(
        to=to,
        subject=subject_for(count, at_least),
        text="\n".join(text_lines),
        html=body,
        from_address=from_address,
    )


def _domain(address: str) -> str:
    _, addr = parseaddr(address)
    domain = addr.rpartition("@")[2]
    return domain or "localhost"


def to_message(email: Email, date: float | None = None) -> EmailMessage:
    """``email`` as a MIME message: ``multipart/alternative`` with text first, HTML preferred."""
    msg = EmailMessage(policy=policy.SMTP)
    msg["From"] = email.from_address
    msg["To"] = email.to
    msg["Subject"] = email.subject
    msg["Date"] = formatdate(date, usegmt=True)
    msg["Message-ID"] = make_msgid(domain=_domain(email.from_address))  # no DNS lookup with a domain
    msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies
    msg.set_content(email.text)
    msg.add_alternative(email.html, subtype="html")
    return msg


def render(email: Email, date: float | None = None) -> bytes:
    """The RFC 822 bytes of ``email`` (CRLF line ends). :class:`SendError` if a header is unusable."""
    try:
        return to_message(email, date).as_bytes()
    except (ValueError, TypeError, IndexError) as exc:  # a newline in a header, an unparsable address
        raise SendError(f"cannot build the email to {email.to!r}: {exc}") from None
