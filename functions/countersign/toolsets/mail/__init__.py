"""The ``mail`` toolset (seed 003): a direct-mail workspace whose writes carry Sincerely's gate classes."""

from __future__ import annotations

from ...gate.actions import Action, Toolset
from . import approvals, campaigns, credits, drafting, pieces, preferences, roles, setup, suppression
from .demo import demo
from .reads import READS

ACTIONS: list[Action] = [
    *setup.ACTIONS, *preferences.ACTIONS, *drafting.ACTIONS, *approvals.ACTIONS, *campaigns.ACTIONS,
    *pieces.ACTIONS, *credits.ACTIONS, *suppression.ACTIONS, *roles.ACTIONS,
]

TOOLSET = Toolset(name="mail", actions=ACTIONS, reads=READS, demo=demo)

__all__ = ["TOOLSET"]
