"""What a person may change on a card before confirming it, as an action declares it
(docs/policy.md, "Edit, then approve").

A card shows the exact change an agent asked for. Some of its arguments a person may want to set
otherwise and still say yes — buy 80 credits, not 120; budget 450.00, not 500.00; approve a draft
with a word changed. Only the action knows which arguments that is safe for, so it declares them in
:attr:`Action.editable <countersign.toolkit.actions.Action.editable>`; an action that declares none
offers no edit.

An edit is never taken on trust: the card's arguments with the person's values merged in go
through the same argument checker and plan as an agent's call (countersign.gate.edits), and the
person confirms the new preview, fingerprint and ticket it makes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# What the page's input takes: a whole number, an amount (decimals), or a line of text.
EDIT_KINDS = ("whole number", "amount", "text")


@dataclass(frozen=True)
class Editable:
    """One argument a person may change on a card.

    ``label``: what the page calls it (``credits to buy``). ``kind``: one of :data:`EDIT_KINDS`.
    ``shown(subject)``: its value as a person reads it, from the plan's **subject** (names resolved,
    amounts formatted as the preview shows them), used to say what changed ("80.00 instead of
    120.00"); without it the argument is shown as spelled.
    """

    argument: str
    label: str = ""
    kind: str = "text"
    shown: Callable[[Any], str] | None = None

    def __post_init__(self) -> None:
        if self.kind not in EDIT_KINDS:
            raise ValueError(f"Editable {self.argument!r}: kind must be one of {', '.join(EDIT_KINDS)}")

    @property
    def name(self) -> str:
        return self.argument

    def show(self, subject: Any, arguments: dict[str, Any]) -> str:
        """This argument's value as a person reads it, for the plan ``subject`` of ``arguments``."""
        if self.shown is not None:
            try:
                return str(self.shown(subject))
            except (KeyError, TypeError, ValueError, IndexError):
                pass
        value = arguments.get(self.argument)
        return "" if value is None else str(value)
