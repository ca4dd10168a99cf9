"""What a card's outcome says to the person on the confirm page: the tool's own words for its
result (:meth:`~countersign.toolkit.actions.Action.outcome_lines`, the action found as the gate
finds it, through the runtime's registry), why it failed, and which of their passkeys signed it.

The card view keeps the result and the next steps too: the page shows them behind "What the agent
is told". Every text is shown as plain as a card's lines, its line breaks kept
(:func:`~countersign.core.preview.plain_text`).
"""

from __future__ import annotations

import logging
from typing import Any

from ...core.card_states import CardState
from ...core.preview import plain_text
from ...runtime import Runtime
from ...store.cards import Card
from ...toolkit import Action, ActionError

log = logging.getLogger(__name__)

REMOVED_PASSKEY = "Signed with a passkey that has since been removed"
_SAYS_IT_RAN = Action()  # a tool this server no longer serves: its card says only that it ran


def signed_with(name: str | None) -> str:
    """The outcome's passkey line: the name of the passkey that signed, or that it was removed since."""
    return f"Signed with your passkey ‘{name}’" if name is not None else REMOVED_PASSKEY


class Outcomes:
    """Outcome lines and passkey names for a request's card views (each passkey read once)."""

    def __init__(self, runtime: Runtime, workspace_id: str):
        self.runtime, self.workspace_id = runtime, workspace_id
        self._names: dict[str, str | None] = {}

    def lines(self, card: Card, body: dict[str, Any]) -> list[str] | None:
        """What happened, for a completed or failed card (``body``: its result as the view shows
        it); None while nothing happened yet."""
        if card.state is CardState.FAILED:
            error = body.get("error")
            return [plain_text(error)] if isinstance(error, str) and error.strip() else \
                ["It failed; nothing more was done."]
        if card.state is not CardState.COMPLETED:
            return None
        result = body.get("result")
        result = result if isinstance(result, dict) else {}
        try:
            action = self.runtime.registry.action(card.tool)
        except ActionError:
            action = _SAYS_IT_RAN
        try:
            lines = action.outcome_lines(result)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            # A result stored by an older build, without a field the formatter reads now.
            log.warning("outcome_lines of %s could not word a stored result", card.tool)
            lines = _SAYS_IT_RAN.outcome_lines(result)
        return [plain_text(line) for line in lines]

    def signed_with(self, card: Card) -> str | None:
        """For a card a passkey confirmed, "Signed with your passkey ‘Laptop’" (the passkey read
        through the passkeys role: the person's, in this workspace); None for any other card."""
        if not isinstance(card.passkey, dict):
            return None
        credential_id = card.passkey.get("credential_id")
        if not isinstance(credential_id, str):
            return signed_with(None)
        if credential_id not in self._names:
            passkey = self.runtime.store.passkeys.get_passkey(credential_id)
            mine = passkey is not None and (passkey.workspace_id, passkey.person_id) == (card.workspace_id,
                                                                                        card.person_id)
            self._names[credential_id] = passkey.name if mine and passkey is not None else None
        return signed_with(self._names[credential_id])
