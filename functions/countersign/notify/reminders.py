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

from ..core.lifetimes import duration_words
from ..core.times import iso
from .interface import DEFAULT_FROM_ADDRESS, Email
from .message import MAX_NAME_CHARS, UNTITLED, Waiting, list_email, one_line


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
    where = f" in {one_line(workspace, MAX_NAME_CHARS)}" if one_line(workspace, MAX_NAME_CHARS) else ""
    at = iso(deadline).replace("T", " ").rstrip("Z") + " UTC"
    headline = f"A request{where} still waits for your confirmation, and lapses in {left_words(left)} ({at}):"
    title, detail = one_line(waiting.title) or UNTITLED, waiting.detail()
    lapse = ("If no one answers by then, it counts as declined: nothing runs, and the agent is told no."
             if declined else "If no one answers by then, it expires: nothing runs.")
    return list_email(to=to, subject=reminder_subject(left), name=name, headline=headline, shown=[(title, detail)],
                      more_line="", after_list=lapse, one=True, link=link, from_address=from_address)
