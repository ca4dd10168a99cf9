"""Errors the gate reports to the agent or the person. Each message names the problem."""

from __future__ import annotations

from ..toolkit import ActionError


class DriftError(ActionError):
    """The subject moved between the preview and the answer; nothing was written."""


class AnswerReplayed(ActionError):
    def __init__(self) -> None:
        super().__init__(
            "This answer was already used; nothing more was written. Call the tool again without it: you get how "
            "that answer ended (its result, its no, or the card it left waiting), or a new question if it left "
            "nothing behind.",
            field="requestState",
        )


class ConfirmationUnavailable(ActionError):
    """Nobody can be asked the way this deployment and this class require."""
