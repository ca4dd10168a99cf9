"""Composing the "requests wait for you" email, and rendering any :class:`Email` as RFC 822.

Pure functions: no store, no clock (except the ``Date`` header's default), no network.

The email names how many requests wait in which workspace, and for each listed one its title,
who asked (in the confirm page's words, :func:`countersign.core.askers.asked_by`) and whether a
passkey will be needed to confirm it. It links to the one card when one waits, to the page that
lists them when several do. It never carries a ticket, a code, a session, a sign-in token or a
card's arguments: nothing in it can confirm anything, and its one link is a plain GET that changes
nothing when a mail scanner prefetches it. Titles and names are data: they are escaped in the HTML
part and flattened to one line in the text part, so they can neither inject markup nor fake a
paragraph.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr

from .interface import DEFAULT_FROM_ADDRESS, Email, SendError

MAX_TITLES = 10
MAX_TITLE_CHARS = 200
UNTITLED = "(untitled request)"
MAX_NAME_CHARS = 80
SETTING_NAME = "Email me when an agent asks"  # the setting's label in Settings on the confirm page
PASSKEY_NEEDED = "needs your passkey"


@dataclass(frozen=True)
class Waiting:
    """One waiting request as the email lists it: its title, who asked (the page's words), and
    whether the workspace's passkey policy covers it."""

    title: str
    asked_by: str = ""
    passkey: bool = False

    def detail(self) -> str:
        """The line under the title: who asked, and the passkey when one is needed."""
        parts = [one_line(self.asked_by)] if one_line(self.asked_by) else []
        if self.passkey:
            parts.append(PASSKEY_NEEDED)
        return " · ".join(parts)


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


def _headline(count: int, at_least: bool, workspace: str) -> str:
    where = f" in {workspace}" if workspace else ""
    if count == 1 and not at_least:
        return f"1 request waits for your confirmation{where}:"
    return f"{count}{' or more' if at_least else ''} requests wait for your confirmation{where}:"


def compose_pending(
    *,
    to: str,
    waiting: Sequence[Waiting | str],
    count: int,
    link: str,
    name: str = "",
    workspace: str = "",
    at_least: bool = False,
    from_address: str = DEFAULT_FROM_ADDRESS,
) -> Email:
    """The notification for a person with ``count`` pending requests in ``workspace`` (its name).

    ``waiting`` are the oldest requests, oldest first (a title alone says nothing of who asked);
    only the first :data:`MAX_TITLES` are listed, the rest counted as "… and N more".
    ``at_least`` says that ``count`` is a lower bound (the list was too long to count). ``link``:
    the one card's page when one waits, the Waiting list when several do.
    """
    listed = [w if isinstance(w, Waiting) else Waiting(w) for w in list(waiting)[:MAX_TITLES]]
    shown = [(one_line(w.title) or UNTITLED, w.detail()) for w in listed]
    more = max(count - len(shown), 0)
    one = count == 1 and not at_least
    return list_email(to=to, subject=subject_for(count, at_least), name=name,
                       headline=_headline(count, at_least, one_line(workspace, MAX_NAME_CHARS)), shown=shown,
                       more_line=_more_line(more, at_least), one=one, link=link, from_address=from_address)


def _more_line(more: int, at_least: bool) -> str:
    if at_least:
        return f"… and at least {more} more" if more else "… and more"
    return f"… and {more} more" if more else ""


def list_email(*, to: str, subject: str, name: str, headline: str, shown: Sequence[tuple[str, str]],
                more_line: str, one: bool, link: str, from_address: str, after_list: str = "") -> Email:
    """An email listing waiting requests (the card email, the digest, the reminder): greeting,
    headline, the titles with who asked, how many more, a sentence after the list (``after_list``),
    then one link to review them (``one``: the one card's)."""
    clean_name = one_line(name, MAX_NAME_CHARS)
    greeting = f"Hello {clean_name}," if clean_name else "Hello,"
    because = (
        f'You receive this email because "{SETTING_NAME}" is on for you. '
        "You can turn it off in Settings on that page."
    )
    review = "Review it, then confirm or decline it:" if one else "Review them, then confirm or decline each one:"

    text_lines = [greeting, "", headline, ""]
    for title, detail in shown:
        text_lines.append(f"  - {title}")
        if detail:
            text_lines.append(f"    {detail}")
    if more_line:
        text_lines.append(f"  {more_line}")
    if after_list:
        text_lines += ["", after_list]
    text_lines += ["", review, link, "", "Nothing runs until you confirm it.", "", "-- ", because, ""]

    e = html.escape
    items = "".join(
        f'<li>{e(title)}<br><span style="font-size:14px;color:#555">{e(detail)}</span></li>' if detail
        else f"<li>{e(title)}</li>" for title, detail in shown)
    if more_line:
        items += f'<li style="list-style:none;color:#555">{e(more_line)}</li>'
    after_html = f"<p>{e(after_list)}</p>\n" if after_list else ""
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{e(subject)}</title></head>
<body style="font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:16px;line-height:1.5;color:#111;margin:0;padding:16px">
<p>{e(greeting)}</p>
<p><strong>{e(headline)}</strong></p>
<ul style="padding-left:20px">{items}</ul>
{after_html}<p><a href="{e(link, quote=True)}" style="display:inline-block;padding:12px 20px;background:#1a56db;color:#fff;text-decoration:none;border-radius:6px">{"Review the request" if one else "Review requests"}</a></p>
<p>Nothing runs until you confirm it.<br>
<span style="font-size:13px;color:#555">Or open this address: {e(link)}</span></p>
<hr style="border:none;border-top:1px solid #ddd">
<p style="font-size:13px;color:#555">{e(because)}</p>
</body></html>
"""  # noqa: E501 - the email's markup keeps each element and its inline style on one line
    return Email(to=to, subject=subject, text="\n".join(text_lines), html=body, from_address=from_address)


def digest_subject(count: int, at_least: bool = False) -> str:
    if count == 1 and not at_least:
        return "1 more request is waiting for your confirmation"
    return f"{count}{'+' if at_least else ''} more requests are waiting for your confirmation"


def _earlier_line(earlier: int) -> str:
    if earlier <= 0:
        return ""
    if earlier == 1:
        return "1 earlier request still waits too."
    return f"{earlier} earlier requests still wait too."


def compose_digest(
    *,
    to: str,
    waiting: Sequence[Waiting],
    count: int,
    earlier: int,
    link: str,
    name: str = "",
    workspace: str = "",
    at_least: bool = False,
    from_address: str = DEFAULT_FROM_ADDRESS,
) -> Email:
    """The digest: the ``count`` requests filed for the person since their last email that still
    wait (``waiting``: the oldest, oldest first; the first :data:`MAX_TITLES` listed), and how many
    they were told of before that still wait too (``earlier``). ``at_least``: the count is a lower
    bound. ``link``: the one card's page when it is the only one waiting, else the Waiting list."""
    listed = list(waiting)[:MAX_TITLES]
    shown = [(one_line(w.title) or UNTITLED, w.detail()) for w in listed]
    more = max(count - len(shown), 0)
    one = count == 1 and earlier <= 0 and not at_least
    where = f" in {one_line(workspace, MAX_NAME_CHARS)}" if one_line(workspace, MAX_NAME_CHARS) else ""
    if count == 1 and not at_least:
        headline = f"1 more request is waiting for your confirmation{where}:"
    else:
        headline = f"{'at least ' if at_least else ''}{count} more requests are waiting for your confirmation{where}:"
    return list_email(to=to, subject=digest_subject(count, at_least), name=name, headline=headline, shown=shown,
                       more_line=_more_line(more, at_least), after_list=_earlier_line(earlier), one=one,
                       link=link, from_address=from_address)


TEST_SUBJECT = "Test email from countersign"
TEST_BUTTON = "Send me a test email"  # the button's label in Settings on the confirm page


def compose_test(
    *,
    to: str,
    status: Sequence[str],
    link: str,
    name: str = "",
    from_address: str = DEFAULT_FROM_ADDRESS,
) -> Email:
    """The test email a person asks for in Settings: it says that email reaches them, and
    ``status`` (sentences: whether card emails are on, the interval, their quiet hours). ``link``:
    the confirm page. It carries nothing that signs in or answers anything."""
    clean_name = one_line(name, MAX_NAME_CHARS)
    greeting = f"Hello {clean_name}," if clean_name else "Hello,"
    opening = "This is the test email you asked for in Settings: countersign's emails reach you at this address."
    because = f'You receive this email because you pressed "{TEST_BUTTON}" in Settings.'
    lines = [one_line(s, 400) for s in status if one_line(s, 400)]
    text = "\n".join([greeting, "", opening, "", *lines, *([""] if lines else []), "The confirm page:", link,
                      "", "-- ", because, ""])
    e = html.escape
    status_html = "".join(f"<p>{e(line)}</p>" for line in lines)
    body = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(TEST_SUBJECT)}</title></head>\n"
        "<body style=\"font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:16px;line-height:1.5;"
        'color:#111;margin:0;padding:16px">\n'
        f"<p>{e(greeting)}</p>\n<p>{e(opening)}</p>\n{status_html}\n"
        f'<p><a href="{e(link, quote=True)}">Open the confirm page</a></p>\n'
        '<hr style="border:none;border-top:1px solid #ddd">\n'
        f'<p style="font-size:13px;color:#555">{e(because)}</p>\n</body></html>\n'
    )
    return Email(to=to, subject=TEST_SUBJECT, text=text, html=body, from_address=from_address)


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
