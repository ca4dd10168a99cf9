"""What a pending card offers beside Confirm and Decline, as its view says it (docs/policy.md): ``canEdit``
(its action declares what a person may change: "Edit") and ``canGrant`` ("Allow this again…": a
standing grant for the connection that asked, drafted from the card).

:func:`grant_refusal` is the one rule for the second, shared by the card views and
``GET /api/standing-grants/options?card=``: the page offers "Allow this again…" exactly where the
options endpoint would draft a grant, and that endpoint answers the same sentence where it would not.
"""

from __future__ import annotations

from ...core.card_states import CardState
from ...gate.passkey_policy import needs_passkey
from ...gate.standing_grants import ruled_out
from ...identity.sessions import Signed
from ...runtime import Runtime
from ...store.cards import Card
from ...toolkit import Action, ActionError

CREATE = "create_standing_grant"


class Offers:
    """What each card of one request offers the signed-in person; what it reads (the person's
    connections, passkeys) is read once per request, and only for a card that could offer a grant."""

    def __init__(self, runtime: Runtime, signed: Signed):
        self.runtime, self.signed = runtime, signed
        self._live: set[str] | None = None
        self._passkey_missing: bool | None = None

    def action(self, tool: str) -> Action | None:
        try:
            return self.runtime.registry.action(tool)
        except ActionError:
            return None

    def can_edit(self, card: Card) -> bool:
        action = self.action(card.tool)
        return action is not None and bool(action.editable)

    def grant_refusal(self, card: Card) -> str | None:
        """Why no standing grant can be drafted from ``card`` (a sentence for the person), or None."""
        action = self.action(card.tool)
        if action is None or not action.agent_tool or not action.grantable:
            return f"{card.tool} cannot be allowed again: it declares nothing a standing grant could bound."
        if not card.connection_id:
            return f"{card.tool} cannot be allowed again: this card was filed on the confirm page, not by an agent."
        if card.connection_id not in self.live_connections():
            return "The connection that asked for this card was revoked, or is not yours; it can be granted nothing."
        why = ruled_out(self.signed.workspace, action)
        if why:
            return f"{why[0].upper()}{why[1:]}."
        if self.passkey_missing():
            return ("Under this workspace's passkey policy a standing grant is confirmed with your passkey, and you "
                    "have none: add one in Settings, Passkeys, first.")
        return None

    def live_connections(self) -> set[str]:
        if self._live is None:
            signed = self.signed
            self._live = {c.id for c in self.runtime.store.connections.list_connections(
                signed.workspace.id, signed.person.id) if not c.revoked}
        return self._live

    def passkey_missing(self) -> bool:
        """A grant's card needs the person's passkey (the workspace's policy) and they have none."""
        if self._passkey_missing is None:
            signed, registry = self.signed, self.runtime.registry
            create = registry.action(CREATE)
            self._passkey_missing = needs_passkey(signed.workspace, create, create.gate) and not (
                self.runtime.store.passkeys.list_passkeys(signed.workspace.id, signed.person.id))
        return self._passkey_missing

    def mark(self, view: dict, card: Card) -> dict:
        """``view`` of ``card`` with what it offers (a pending card only; false otherwise), and
        ``more``: whether the page draws more for it than its lines and answers (one flag, so the
        first view's script tests one field before loading web/edit.js for it)."""
        if card.state is CardState.PENDING:
            view["canEdit"] = self.can_edit(card)
            view["canGrant"] = self.grant_refusal(card) is None
        view["more"] = bool(view.get("canEdit") or view.get("canGrant") or view.get("edited") or view.get("grant"))
        return view
