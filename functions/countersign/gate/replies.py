"""What the agent is told: the held reply, a card's status, a code request. Pure shaping.

Nothing here ever includes a ticket or a nonce: replies are built field by field from the card.
"""

from __future__ import annotations

from typing import Any

from ..core.card_states import ANSWER_MEMORY_SECONDS, CardState, reported_state
from ..core.lifetimes import duration_words
from ..core.preview import Preview
from ..core.times import iso
from ..store.cards import Card
from .edit_words import edit_message

HELD_INSTRUCTIONS = (
    "This action is waiting for a person; it has not run. Give the person the confirmationUrl "
    "(or the pendingUrl when several requests are open), then poll get_confirmation_status with "
    "confirmation_id set to this reply's confirmationId. Keep working on what does not need the answer. "
    "Calling the held tool again with the same arguments returns this same request: it does not hurry the "
    "answer or ask twice."
)
ASK_AGAIN = "Calling the tool again makes a fresh preview and asks the person again."
REFUSED_INSTRUCTIONS = (
    "Nothing ran. If the person still wants this, call the tool again: it makes a fresh preview and asks them again."
)
WITHDRAWN_INSTRUCTIONS = f"Nothing ran. {ASK_AGAIN}"
EXPIRED_INSTRUCTIONS = (
    "The person did not answer in time; nothing ran. Tell them. Calling the tool again files a new request: "
    "do it only if they still want it."
)
FAILED_INSTRUCTIONS = f"The error says what was done and what was not. {ASK_AGAIN}"

CODE_INSTRUCTIONS = (
    "Nothing has changed yet. Show the person the preview; only if they agree, call the same tool "
    "again with the same arguments plus confirmation set to this code. The code is valid once, "
    "for these exact changes, for {ttl} seconds."
)


def _lines(card: Card) -> list[str]:
    return Preview(card.title, card.lines).visible_lines()


PASSKEY_INSTRUCTIONS = (
    " This workspace's passkey policy covers this request: only the person's passkey on the confirm page can "
    "confirm it (not a click alone, not an answer in the client, not a code)."
)


def held_reply(card: Card, card_url: str, pending_url: str, passkey: bool = False) -> dict[str, Any]:
    """The tool result of a held call (docs/how-a-held-write-travels.md, "What the agent gets")."""
    reply: dict[str, Any] = {
        "status": "pending",
        "confirmationId": card.id,
        "confirmationUrl": card_url,
        "pendingUrl": pending_url,
        "tool": card.tool,
        "title": card.title,
        "lines": _lines(card),
        "expiresAt": iso(card.expires_at),
        "instructions": HELD_INSTRUCTIONS + (PASSKEY_INSTRUCTIONS if passkey else ""),
    }
    if passkey:
        reply["passkeyRequired"] = True
    if card.quorum is not None:  # several people answer it (docs/policy.md, "Quorum")
        reply["quorum"] = quorum_summary(card)
        summary = reply["quorum"]
        reply["instructions"] += QUORUM_INSTRUCTIONS.format(
            needs=summary["needs"], of=summary["of"], approved=summary["approved"],
            no="a majority's no declines it" if summary["decline"] == "majority" else "one person's no declines it")
    return reply


QUORUM_INSTRUCTIONS = (
    " A quorum applies: it runs only once {needs} of {of} approved it on the confirm page ({approved} so far), "
    "never on an answer in the client; {no}."
)


def quorum_summary(card: Card) -> dict[str, Any]:
    """A quorum card's state for the agent: how many approvals of whom, and who approved so far."""
    quorum = card.quorum or {}
    yes = [str(v.get("name") or "") for v in card.votes if v.get("vote") == "yes"]
    return {"rule": quorum.get("name"), "needs": quorum.get("needs"), "of": quorum.get("words", ""),
            "approved": len(yes), "approvedBy": yes, "decline": quorum.get("decline", "any")}


def decline_reason(card: Card) -> str | None:
    if card.refusal:
        return card.refusal
    if card.decline_reason:
        return card.decline_reason
    if card.state is CardState.WITHDRAWN:
        return "Withdrawn by the agent before anyone answered."
    return None


def status_reply(card: Card, card_url: str | None = None) -> dict[str, Any]:
    """``get_confirmation_status``: pending | completed | declined | expired (| failed)."""
    status = reported_state(card.state)
    reply: dict[str, Any] = {
        "status": status,
        "confirmationId": card.id,
        "tool": card.tool,
        "title": card.title,
        "lines": _lines(card),
        "expiresAt": iso(card.expires_at),
    }
    if status == "pending" and card_url:
        reply["confirmationUrl"] = card_url
    if card.state is CardState.EXPIRED and card.lifetime is not None:  # filed under the workspace's lifetime rules
        reply.update(lapsed(card))
        return reply
    if status == "pending" and card.quorum is not None:
        reply["quorum"] = quorum_summary(card)
    if card.state is CardState.COMPLETED:
        body = card.result or {}
        reply["result"] = body.get("result")
        reply["next"] = body.get("next", [])
        reply["answeredVia"] = card.channel
        if body.get("quorum"):  # it ran at the last approval a quorum needed: every approver, named
            reply["quorum"] = body["quorum"]
            reply["message"] = body.get("message")
        if body.get("edited"):  # it ran with a person's edit: the agent is told exactly what changed
            reply["edited"] = body["edited"]
            reply["message"] = body.get("message") or edit_message(card.edited or {})
    elif status == "declined":
        reply["reason"] = decline_reason(card)
        if card.refusal:
            reply["instructions"] = REFUSED_INSTRUCTIONS
        elif card.state is CardState.WITHDRAWN:
            reply["instructions"] = WITHDRAWN_INSTRUCTIONS
        else:
            reply.update(_said_no(card))
    elif card.state is CardState.FAILED:
        reply["error"] = (card.result or {}).get("error")
        reply["instructions"] = FAILED_INSTRUCTIONS
    elif card.state is CardState.EXPIRED:
        reply["instructions"] = EXPIRED_INSTRUCTIONS
    if card.edited and card.edited.get("from") and "edited" not in reply:
        reply["edited"] = {"from": card.edited["from"], "by": card.edited.get("byName", ""),
                           "changes": card.edited.get("changes", [])}
    return reply


def lapse_message(card: Card) -> str:
    """The sentence an agent is told of a card that lapsed under a lifetime rule (docs/policy.md)."""
    waited = duration_words(int((card.lifetime or {}).get("wait") or (card.expires_at - card.created_at)))
    if card.lapses_as_declined:
        return (f"No one answered within {waited}, so this request was declined at {iso(card.expires_at)}: this "
                "workspace counts an unanswered request as declined. Nothing ran.")
    return f"No one answered within {waited}, so this request expired at {iso(card.expires_at)}. Nothing ran."


def lapsed(card: Card) -> dict[str, Any]:
    """What a status says of a card that lapsed under a lifetime rule: expired, or declined (and
    then, as after a person's no, what asking again does until the answer memory ends)."""
    message = lapse_message(card)
    if not card.lapses_as_declined:
        return {"status": "expired", "lapse": "expired", "message": message, "instructions": EXPIRED_INSTRUCTIONS}
    until = iso(card.claim_until)
    return {
        "status": "declined", "lapse": "declined", "reason": message, "message": message, "askAgainAfter": until,
        "instructions": (
            f"No one answered in time, and this workspace counts that as no; nothing was written. Calling {card.tool} "
            f"again with the same changes before {until} returns this same answer without asking anyone; after that "
            "it asks afresh. Tell the person rather than asking again at once."
        ),
    }


def edited_reply(reply: dict[str, Any], asked: Card, final: Card) -> dict[str, Any]:
    """``reply`` (the status of ``final``, the card ``asked``'s request continues as after a
    person's edits) for an agent that polls ``asked``: it leads to the outcome."""
    if final.id == asked.id:
        return reply
    reply["editedFrom"] = asked.id
    said = (" " + reply["instructions"]) if reply.get("instructions") else ""
    reply["instructions"] = (
        f"The person edited this request before answering: it continues as confirmationId {final.id}, and this "
        f"is its status (polling either id gives it).{said}"
    )
    return reply


def _said_no(card: Card) -> dict[str, Any]:
    """What calling again does after a person's no (docs/how-a-held-write-travels.md, section 4)."""
    until = iso(card.updated_at + ANSWER_MEMORY_SECONDS)
    return {
        "askAgainAfter": until,
        "instructions": (
            f"The person said no; nothing was written. Calling {card.tool} again with the same changes before "
            f"{until} returns this same answer without asking them; after that it asks them afresh. If they "
            "change their mind sooner, they can reopen this request from History on the confirm page."
        ),
    }


def later_request(reply: dict[str, Any], card: Card, later: Card | None) -> dict[str, Any]:
    """``reply`` (about ``card``) pointing to a newer card of the same request, if there is one: the
    person reopened it, or the request was asked again."""
    if later is None or later.id == card.id or later.created_at < card.created_at:
        return reply
    reply["laterRequest"] = {"confirmationId": later.id, "status": reported_state(later.state)}
    reply["instructions"] = (
        f"This request was asked again as confirmationId {later.id} (now {reported_state(later.state)}); "
        "poll that one."
    )
    return reply


def pending_entry(card: Card, card_url: str) -> dict[str, Any]:
    return {
        "confirmationId": card.id,
        "confirmationUrl": card_url,
        "tool": card.tool,
        "title": card.title,
        "lines": _lines(card),
        "expiresAt": iso(card.expires_at),
    }


def applied_reply(result: dict, next_steps: list[dict], card: Card | None = None) -> dict[str, Any]:
    reply: dict[str, Any] = {"status": "completed", "result": result, "next": next_steps}
    if card is not None:
        reply["confirmationId"] = card.id
    return reply


def declined_reply(card: Card) -> dict[str, Any]:
    return {
        "status": "declined",
        "confirmationId": card.id,
        "title": card.title,
        "reason": decline_reason(card),
        **_said_no(card),
    }


def code_reply(preview: Preview, code: str, expires_at: int, ttl: int) -> dict[str, Any]:
    return {
        "status": "confirmation_required",
        "title": preview.title,
        "lines": preview.visible_lines(),
        "preview": preview.question(),
        "confirmation": code,
        "expiresAt": iso(expires_at),
        "instructions": CODE_INSTRUCTIONS.format(ttl=ttl),
    }
