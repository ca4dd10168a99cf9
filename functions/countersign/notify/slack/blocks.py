"""A card as a Slack message (Block Kit), and the same message once it is answered.

Everything from a card (its title, its lines, who asked, whose it is) is data an agent may have
written, so it goes into ``plain_text`` objects only, never ``mrkdwn``: a title cannot mention
``@channel``, draw a link or format itself as something else, and characters nobody can see
are shown as ``[U+XXXX]`` (:func:`~countersign.core.preview.plain_line`). The notification text
(``text``, what Slack shows in a notification) is escaped as Slack asks (``&``, ``<``, ``>``).

Buttons carry the card's id only; a click is checked against the card as it is then
(:mod:`countersign.surfaces.slack`). Confirm and Decline are shown only where a click without a
passkey may answer the card; otherwise the one button opens the card on the confirm page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...core.preview import QUESTION_LINES, plain_line

CONFIRM, DECLINE, OPEN = "confirm", "decline", "open"
ACTIONS_BLOCK = "countersign_card"
OPEN_WITH_PASSKEY = "Open to confirm with your passkey"
HEADER_MAX = 150  # Slack's limit for a header's text
SECTION_MAX = 3000  # and a section's
BUTTON_MAX = 75


@dataclass(frozen=True)
class SlackCard:
    """What a card's message shows."""

    card_id: str
    title: str
    lines: Sequence[str]
    asked_by: str  # core.askers.asked_by's words
    link: str  # the card on the confirm page
    answerable: bool  # Confirm and Decline may be shown (no passkey needed)
    for_whom: str | None = None  # in a channel: whose card it is


def escaped(text: str) -> str:
    """``text`` for a message's ``text`` field (read as mrkdwn): Slack's three escapes."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _plain(text: str, limit: int) -> dict[str, Any]:
    text = text if len(text) <= limit else text[:limit - 1] + "…"
    return {"type": "plain_text", "text": text or " ", "emoji": False}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _plain(text, SECTION_MAX)}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [_plain(text, SECTION_MAX)]}


def _button(action_id: str, text: str, value: str | None = None, style: str | None = None,
            url: str | None = None) -> dict[str, Any]:
    button: dict[str, Any] = {"type": "button", "action_id": action_id, "text": _plain(text, BUTTON_MAX)}
    if value is not None:
        button["value"] = value
    if style is not None:
        button["style"] = style
    if url is not None:
        button["url"] = url
    return button


def _body(card: SlackCard) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "header", "text": _plain(plain_line(card.title), HEADER_MAX)}]
    lines = [plain_line(line) for line in list(card.lines)[:QUESTION_LINES]]
    if len(card.lines) > QUESTION_LINES:
        lines.append(f"… and {len(card.lines) - QUESTION_LINES} more lines on the confirm page")
    if lines:
        blocks.append(_section("\n".join(lines)))
    who = plain_line(card.asked_by)
    if card.for_whom:
        who += f" · waiting on {plain_line(card.for_whom)}"
    blocks.append(_context(who))
    return blocks


def card_message(card: SlackCard) -> tuple[str, list[dict[str, Any]]]:
    """(the notification text, the blocks) of a card that waits."""
    if card.answerable:
        buttons = [_button(CONFIRM, "Confirm", card.card_id, "primary"),
                   _button(DECLINE, "Decline", card.card_id, "danger"),
                   _button(OPEN, "Open", url=card.link)]
    else:
        buttons = [_button(OPEN, OPEN_WITH_PASSKEY, url=card.link)]
    blocks = [*_body(card), {"type": "actions", "block_id": ACTIONS_BLOCK, "elements": buttons}]
    return escaped(f"Waiting for your answer: {plain_line(card.title)}"), blocks


def answered_message(card: SlackCard, outcome: str) -> tuple[str, list[dict[str, Any]]]:
    """(the notification text, the blocks) of a card once answered: its body, the outcome, and the
    link to see it on the page; no button answers it any more."""
    blocks = [*_body(card), _section(plain_line(outcome)),
              {"type": "actions", "block_id": ACTIONS_BLOCK, "elements": [_button(OPEN, "Open", url=card.link)]}]
    return escaped(f"{plain_line(card.title)}: {plain_line(outcome)}"), blocks


def more_waiting_message(count: int, link: str, for_whom: str | None = None) -> tuple[str, list[dict[str, Any]]]:
    """(the notification text, the blocks) after the cards posted when quiet hours ended, when more
    waited than were posted: how many more, and the button that opens the waiting list. In a
    channel (``for_whom``), whose answer they wait for."""
    whose = "your answer" if for_whom is None else f"an answer from {plain_line(for_whom)}"
    words = f"{count} more request{'s are' if count != 1 else ' is'} waiting for {whose}"
    blocks = [_section(words + " (filed during your quiet hours)."),
              {"type": "actions", "block_id": ACTIONS_BLOCK, "elements": [_button(OPEN, "Open the list", url=link)]}]
    return escaped(words), blocks


TEST_TITLE = "Test message from countersign"


def slack_test_message(lines: Sequence[str]) -> tuple[str, list[dict[str, Any]]]:
    """(the notification text, the blocks) of the test message Settings sends: what reaches the
    person in Slack and when, in plain text."""
    blocks = [{"type": "header", "text": _plain(TEST_TITLE, HEADER_MAX)},
              *(_section(plain_line(line)) for line in lines)]
    return escaped(TEST_TITLE), blocks
