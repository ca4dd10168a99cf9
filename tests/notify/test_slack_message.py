"""A card's Slack message: whatever the card says is plain text (no mention, link or formatting
it could smuggle in), the notification text is escaped, long cards are cut with a count, and the
buttons follow whether a click without a passkey may answer."""

from __future__ import annotations

import dataclasses

from countersign.core.card_states import CardState
from countersign.notify.slack import SlackCard, answered_message, card_message, outcome_words
from countersign.store.cards import Card


def card(**changes) -> SlackCard:
    values = dict(card_id="c_1", title="Pay <!channel> *now* & <https://evil.example|here>",
                  lines=["Amount: 10", "To: Pay\u200bPal"], asked_by="Asked by Claude", link="https://cs.example/c",
                  answerable=True)
    return SlackCard(**{**values, **changes})


def texts(blocks) -> list[dict]:
    found = []
    for block in blocks:
        for value in (block.get("text"), *block.get("elements", [])):
            if isinstance(value, dict) and "type" in value and value["type"] in ("plain_text", "mrkdwn"):
                found.append(value)
            elif isinstance(value, dict) and isinstance(value.get("text"), dict):
                found.append(value["text"])
    return found


def test_everything_from_the_card_is_plain_text_and_the_notification_escaped():
    text, blocks = card_message(card())
    assert {t["type"] for t in texts(blocks)} == {"plain_text"}
    assert blocks[0]["text"]["text"] == "Pay <!channel> *now* & <https://evil.example|here>"
    assert blocks[1]["text"]["text"] == "Amount: 10\nTo: Pay[U+200B]Pal"
    assert text == "Waiting for your answer: Pay &lt;!channel&gt; *now* &amp; &lt;https://evil.example|here&gt;"


def test_the_buttons_follow_the_passkey_policy():
    _, blocks = card_message(card())
    [actions] = [b for b in blocks if b["type"] == "actions"]
    assert [(e["action_id"], e.get("value"), e.get("url")) for e in actions["elements"]] == [
        ("confirm", "c_1", None), ("decline", "c_1", None), ("open", None, "https://cs.example/c")]
    _, blocks = card_message(card(answerable=False))
    [actions] = [b for b in blocks if b["type"] == "actions"]
    assert [(e["action_id"], e["text"]["text"]) for e in actions["elements"]] == [
        ("open", "Open to confirm with your passkey")]


def test_long_cards_are_cut_with_a_count_and_answered_ones_lose_their_buttons():
    _, blocks = card_message(card(lines=[f"line {i}" for i in range(25)], title="x" * 400))
    assert len(blocks[0]["text"]["text"]) == 150 and blocks[0]["text"]["text"].endswith("…")
    shown = blocks[1]["text"]["text"].split("\n")
    assert shown[:20] == [f"line {i}" for i in range(20)]
    assert shown[20:] == ["… and 5 more lines on the confirm page"]
    text, blocks = answered_message(card(for_whom="Ada"), "Declined in Slack by Ada.")
    assert blocks[2]["elements"][0]["text"] == "Asked by Claude · waiting on Ada"
    assert blocks[-2]["text"]["text"] == "Declined in Slack by Ada."
    assert [e["action_id"] for e in blocks[-1]["elements"]] == ["open"]
    assert text.endswith(": Declined in Slack by Ada.")


def test_the_outcome_says_how_the_card_stands():
    base = Card(id="c_1", workspace_id="ws", person_id="p", connection_id="k", tool="t", arguments={}, subject={},
                title="T", lines=(), fingerprint="f", ticket="x", state=CardState.PENDING, created_at=0, expires_at=1,
                updated_at=0)
    said = {state: outcome_words(dataclasses.replace(base, state=state), "Ada") for state in CardState}
    assert said[CardState.COMPLETED] == "Confirmed in Slack by Ada. It ran."
    assert said[CardState.DECLINED] == "Declined in Slack by Ada."
    assert said[CardState.EDITED].startswith("Edited on the confirm page: a new card with the changes waits")
    assert outcome_words(dataclasses.replace(base, state=CardState.COMPLETED), None) == "Confirmed. It ran."
    assert len(set(said.values())) == len(CardState)  # every state is told apart
