"""A refused click on a card's audit trail, bounded.

Every refusal of a stored card (tampered, a passkey missing or refused, an answer that did not
verify) is evidence worth keeping, so it goes on the card's trail. But each is one request of a
signed-in session away, and the trail is what the page, the receipt and an export carry whole: a
script replaying junk answers would otherwise grow it without end. So a card keeps its first
:data:`MAX_REFUSALS` refusals; the last one kept says so, and the rest are logged, not stored.

The count is read, then the entry appended (not one conditional write): refusals that arrive at
the same moment can each see room for one more, so a card may keep a few past the bound, at most
one per refusal under way at once. The bound is on growth without end, not an exact number.
"""

from __future__ import annotations

import logging

from ..store.cards import AuditEntry, Card, CardStore

log = logging.getLogger("countersign.gate")

MAX_REFUSALS = 20
LAST_KEPT = " (the card's last refusal recorded: later ones are not)"


def record_refusal(cards: CardStore, card: Card, actor: str, channel: str, at: int, detail: str) -> None:
    """Append a ``refused`` entry for ``card`` unless it holds :data:`MAX_REFUSALS` already (a
    read of the trail first: refusals are rare, and never on a call's way to its answer)."""
    kept = sum(e.event == "refused" for e in cards.audit_trail(card.workspace_id, card.id))
    if kept >= MAX_REFUSALS:
        log.warning("card %s refused again (%s, %s): not recorded, it has %d refusals", card.id, channel,
                    actor, kept)
        return
    last = kept == MAX_REFUSALS - 1
    cards.append_audit(AuditEntry(
        card_id=card.id, workspace_id=card.workspace_id, at=at, event="refused", actor=actor, channel=channel,
        connection_id=card.connection_id or None, detail=detail + LAST_KEPT if last else detail,
    ))
