"""The reminder email: one card still waits and lapses soon (docs/policy.md, "Lifetimes, reminders
and lapses"). Pure, like :mod:`.message`: no store, no clock.

A card filed under a lifetime with a reminder owes a reminder notification of its own
(:func:`~countersign.store.outbox.reminder_id`), due that long before its deadline. The card
notifier delivers it as it delivers a card's email (:meth:`~countersign.notify.CardNotifier.deliver`):
the person's email setting, a suppressed address and quiet hours first (it waits for them to end);
then only while the card still waits; then the person's email slot (one email per interval: if
another email holds the slot, the reminder waits a minute and tries again while the card still
waits); sent at most once (the notification is leased by one conditional write and done after).
"""

from __future__ import annotations

import html

from ..core.lifetimes import duration_words
from ..core.times import iso
from .interface import DEFAULT_FROM_ADDRESS, Email
from .message import MAX_NAME_CHARS, SETTING_NAME, UNTITLED, Waiting, one_line


def left_words(seconds: int) -> str:
    """How long is left, to the minute (rounded up), in words."""
    return duration_words(max(60, -(-seconds // 60) * 60))


def reminder_subject(left: int) -> str:
    return f"Reminder: a request lapses in {left_words(left)}"


def compose_reminder(
    *,
    to: str,
    waiting: Waiting,
    left: int,
    deadline: int,
    declined: bool,
    link: str,
    name: str = "",
    workspace: str = "",
    from_address: str = DEFAULT_FROM_ADDRESS,
) -> Email:
    """The reminder that ``waiting`` (the card) lapses in ``left`` seconds, at ``deadline``;
    ``declined``: a lapse counts as the person's no. ``link``: the card's page."""
    clean_name = one_line(name, MAX_NAME_CHARS)
    greeting = f"Hello {clean_name}," if clean_name else "Hello,"
    where = f" in {one_line(workspace, MAX_NAME_CHARS)}" if one_line(workspace, MAX_NAME_CHARS) else ""
    at = iso(deadline).replace("T", " ").rstrip("Z") + " UTC"
    headline = f"A request{where} still waits for your confirmation, and lapses in {left_words(left)} ({at}):"
    title, detail = one_line(waiting.title) or UNTITLED, waiting.detail()
    lapse = ("If no one answers by then, it counts as declined: nothing runs, and the agent is told no."
             if declined else "If no one answers by then, it expires: nothing runs.")
    because = (f'You receive this email because "{SETTING_NAME}" is on for you. '
               "You can turn it off in Settings on that page.")
    text_lines = [greeting, "", headline, "", f"  - {title}"]
    if detail:
        text_lines.append(f"    {detail}")
    text_lines += ["", lapse, "", "Review it, then confirm or decline it:", link, "",
                   "Nothing runs until you confirm it.", "", "-- ", because, ""]
    e = html.escape
    item = (f'<li>{e(title)}<br><span style="font-size:14px;color:#555">{e(detail)}</span></li>' if detail
            else f"<li>{e(title)}</li>")
    subject = reminder_subject(left)
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{e(subject)}</title></head>
<body style="font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:16px;line-height:1.5;color:#111;margin:0;padding:16px">
<p>{e(greeting)}</p>
<p><strong>{e(headline)}</strong></p>
<ul style="padding-left:20px">{item}</ul>
<p>{e(lapse)}</p>
<p><a href="{e(link, quote=True)}" style="display:inline-block;padding:12px 20px;background:#1a56db;color:#fff;text-decoration:none;border-radius:6px">Review the request</a></p>
<p>Nothing runs until you confirm it.<br>
<span style="font-size:13px;color:#555">Or open this address: {e(link)}</span></p>
<hr style="border:none;border-top:1px solid #ddd">
<p style="font-size:13px;color:#555">{e(because)}</p>
</body></html>
"""  # noqa: E501 - the email's markup keeps each element and its inline style on one line
    return Email(to=to, subject=subject, text="\n".join(text_lines), html=body, from_address=from_address)
