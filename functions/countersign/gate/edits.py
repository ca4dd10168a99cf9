"""Edit, then approve: a person changes the arguments an action declares editable on a card that
waits on them, and confirms the new card it makes (docs/policy.md, "Edit, then approve").

An edit is an answer to the card like a Confirm or a Decline: the card must be the person's, still
pending, with its ticket intact. The card's arguments with the person's values merged in go
through the same argument checker and plan as an agent's call (bad input gets the same sentence,
and nothing is written); the new plan makes a new preview, fingerprint and ticket. One conditional
transaction then moves the card to ``edited`` (its ticket spent, as a Confirm would spend it) and
files the new pending card for the same asker: an edit and a Confirm racing on one card, exactly
one wins. The person confirms the new card like any card (the passkey policy applies to it); its
result and the agent's status say what changed, and by whom.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..core.card_states import CardState, Refusal, RefusalReason, refusal_for
from ..identity.accounts import REVOKED_REASON
from ..store.cards import Card
from ..store.errors import Taken
from ..store.limits import RequestCounts
from ..store.workspaces import Person
from ..toolkit import ActionError, Editable
from . import replies
from .clicks import open_card
from .desk import CardDesk
from .edit_words import describe
from .new_cards import new_card
from .question import Question

MAX_EDITS = 20  # edits of one request in a row: a chain the status follows, never without end


def editable_fields(desk: CardDesk, card: Card) -> list[dict[str, Any]]:
    """What a person may change on ``card`` (a whole card, not a listing): each declared argument
    with its label, kind and value now (as the arguments spell it, and as the preview shows it)."""
    try:
        declared = desk.registry.action(card.tool).editable
    except Exception:  # noqa: BLE001 (a tool this deployment no longer offers: nothing to edit)
        return []
    return [{"name": e.argument, "label": e.label or e.argument, "kind": e.kind,
             "value": card.arguments.get(e.argument), "shown": e.show(card.subject, card.arguments)}
            for e in declared]


def _declared(tool: str, declared: dict[str, Editable]) -> str:
    if not declared:
        return f"{tool} lets a person change nothing on its cards"
    return f"{tool} lets a person change " + ", ".join(
        f"{name} ({e.label})" if e.label else name for name, e in declared.items())


def edit_card(desk: CardDesk, workspace_id: str, person: Person, card_id: str, values: Any,
              card: Card | None = None, counts: RequestCounts | None = None) -> Card:
    """``person``'s edit of their pending card ``card_id``: the new pending card it files (the old
    one ends ``edited``). :class:`ActionError` naming the field for a value that is not editable or
    that the argument checker or plan refuses; :class:`Refusal` for another's card, an answered
    one, or one that lost a race to another answer. Nothing is written unless both moves are.
    ``counts``: the request's against the request limits, taken in that transaction."""
    card = open_card(desk, workspace_id, person, card_id, card, counts)
    if card.person_id != person.id:  # one of its audience answers it; only its person changes what it asks
        raise Refusal(RefusalReason.NOT_YOURS, "Only the person this request waits on can edit it; you can approve "
                      "or decline it.")
    if card.state is not CardState.PENDING:
        if card.state is CardState.EXPIRED:
            desk.event("card_expired")
        raise refusal_for(card.state, CardState.EDITED)
    action = desk.registry.action(card.tool)
    declared = {e.argument: e for e in action.editable}
    if not isinstance(values, dict) or not values:
        raise ActionError(f"arguments: give the values to change, as an object; {_declared(card.tool, declared)}. "
                          "Nothing was changed.", field="arguments")
    for name in values:
        if name not in declared:
            raise ActionError(f"arguments.{str(name)[:64]}: not something a person may change on this card; "
                              f"{_declared(card.tool, declared)}. Nothing was changed.",
                              field=f"arguments.{str(name)[:64]}")
    now = desk.now()
    actor = f"person:{person.id}"
    desk.check_ticket(card, now, actor, "page")
    if card.connection_id:
        connection = desk.connections.get_connection(workspace_id, card.connection_id)
        if connection.revoked:  # as a Confirm: the card is withdrawn instead
            desk.withdraw(card, now, actor, "page", REVOKED_REASON.format(name=connection.name), counts)
            raise Refusal(RefusalReason.WITHDRAWN,
                          "This card was withdrawn: the connection that asked was revoked. Nothing ran.")
    merged = {**card.arguments, **values}
    ctx = desk.context(workspace_id, person, card.connection_id or None, now)
    q = Question.of(action, merged, ctx)  # the agent's checker and plan: their sentence, nothing written
    if q.fingerprint == card.fingerprint:
        raise ActionError("arguments: these values make the same change this card already shows; nothing was "
                          "changed.", field="arguments")
    changes = []
    for name in values:
        was, now_shown = declared[name].show(card.subject, card.arguments), declared[name].show(q.plan.subject, merged)
        if was != now_shown:
            changes.append({"field": name, "label": declared[name].label or name, "from": was, "to": now_shown})
    by = person.name or person.email
    new = new_card(q, "page", now, desk.keyring, desk.settings.card_ttl, card.asker)  # still the request of its asker
    new = replace(new, edited={"from": card.id, "by": person.id, "byName": by, "original": card.arguments,
                               "changes": changes})
    try:
        into = {"into": new.id, "by": person.id, "byName": by, "changes": changes}
        if replaced := (card.edited or {}).get("from"):  # itself an edit's card: it still names the card it replaced
            into["replaces"] = replaced
        return desk.file_edited(card, new, actor, into, describe(changes), now, counts)
    except Taken as taken:
        raise Refusal(RefusalReason.ALREADY_ANSWERED,
                      f"A card for exactly this edited change is already waiting ({taken.card.id}); nothing was "
                      "changed. Confirm that one, or decline this one.") from None


def follow_edits(desk: CardDesk, card: Card) -> Card:
    """The card an edited ``card``'s request continues as (through every edit since), as it stands now."""
    for _ in range(MAX_EDITS):
        into = (card.edited or {}).get("into") if card.state is CardState.EDITED else None
        if not into:
            return card
        card = desk.cards.get_card(card.workspace_id, into, desk.now())
    return card


def confirmation_status(desk: CardDesk, asked: Card) -> dict[str, Any]:
    """``get_confirmation_status`` of ``asked`` (as read now): the status of the card its request
    continues as after a person's edits, pointing on to a later card of that request if there is one."""
    card = follow_edits(desk, asked)
    later = None
    if card.state not in (CardState.PENDING, CardState.RUNNING):
        later = desk.cards.latest_card(card.workspace_id, card.person_id, card.tool, card.fingerprint, desk.now())
    reply = replies.later_request(replies.status_reply(card, desk.card_url(card.id)), card, later)
    return replies.edited_reply(reply, asked, card)
