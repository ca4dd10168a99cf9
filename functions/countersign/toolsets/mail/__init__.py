"""The ``mail`` toolset: a direct-mail workspace. Writes that print, send or cancel mail, launch,
resume or end a campaign, buy credits, suppress or grant and revoke roles always wait for a person
on a hosted card; drafting steps and approvals wait while the workspace's settings ask for it;
setup and configuration run on the call (a few, like the return address, wait once mail exists)."""

from __future__ import annotations

from ...toolkit import Action, Toolset
from . import approvals, audience, campaigns, credits, drafting, pieces, preferences, roles, setup, suppression
from .demo import demo
from .reads import READS

ACTIONS: list[Action] = [
    *setup.ACTIONS, *preferences.ACTIONS, *drafting.ACTIONS, *audience.ACTIONS, *approvals.ACTIONS, *campaigns.ACTIONS,
    *pieces.ACTIONS, *credits.ACTIONS, *suppression.ACTIONS, *roles.ACTIONS,
]

TOOLSET = Toolset(name="mail", actions=ACTIONS, reads=READS, demo=demo)

__all__ = ["TOOLSET"]
