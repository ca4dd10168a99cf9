"""What an agent is told a person may do with a held call of an action, in words generated from the
action's declarations (docs/policy.md): change the arguments it declares editable on the card
before confirming (:attr:`Action.editable <countersign.toolkit.actions.Action.editable>`), and give
the calling connection a standing grant bounded as it declares (``Action.grantable``). Used by the
tools' descriptions (countersign.surfaces.mcp.actions) and the held reply (``personMay``,
countersign.gate.ask). Pure shaping."""

from __future__ import annotations

from ..toolkit import Action, AmountBound


def editable_words(action: Action) -> str:
    """``credits (credits to buy, a whole number)``, one per declared field."""
    return _listed([f"{e.argument} ({e.label + ', ' if e.label else ''}{_a(e.kind)})" for e in action.editable])


def grantable_words(action: Action) -> str:
    """``credits (credits bought) to at most an amount a call (and optionally in all)``, one per bound."""
    parts = []
    for b in action.grantable:
        label = f" ({b.label})" if b.label else ""
        how = "at most an amount a call (and optionally in all)" if isinstance(b, AmountBound) else \
            "values the person picks"
        parts.append(f"{b.argument}{label} to {how}")
    return _listed(parts)


def person_may(action: Action) -> list[str]:
    """The sentences of a held reply's ``personMay``: empty when the action declares neither."""
    said = []
    if action.editable:
        said.append(f"The person may change {editable_words(action)} on the card before confirming: it then "
                    "continues as a new card with their values, and get_confirmation_status of this "
                    "confirmationId answers for it and says what changed and by whom.")
    if action.grantable and action.agent_tool:
        said.append(f"The person may give this connection a standing grant for {action.name}, bounding "
                    f"{grantable_words(action)}: a later call within it runs at once.")
    return said


def _a(kind: str) -> str:
    return kind if kind == "text" else ("an " if kind[:1] in "aeiou" else "a ") + kind


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1] if parts else ""
