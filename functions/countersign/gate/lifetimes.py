"""Card lifetimes in the gate: the lifetime a call's card is filed under, and
``set_card_lifetimes``, the held request that changes the workspace's rules (docs/policy.md,
"Lifetimes, reminders and lapses"; the rules themselves: :mod:`countersign.core.lifetimes`).

A card's lifetime is decided when it is filed, from the workspace's rules as that call read them,
the call's class and whether it is risky (the passkey policy's rule, :func:`.passkey_policy.is_risky`),
and kept on the card (``Card.lifetime``): its deadline (in its ticket), the reminder it owes
(filed with it in the outbox, sent by the notifier when due: the sweep locally and the sweeper
function on AWS) and what its lapse means. Changing the rules later changes no card already filed.

Changing the rules is itself a held request, as a passkey policy change is: always held (a person
confirms on the confirm page), only the owner can make it, and risky (class ``always``,
destructive), so under a passkey policy of ``risky`` or ``every`` it takes the owner's passkey.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..core import lifetimes
from ..core.lifetimes import Lifetime
from ..core.preview import Preview
from ..store.workspaces import Workspace
from ..toolkit import ALWAYS, ActionContext, ActionError, Arguments, Plan, Toolset
from .owner_settings import OwnerSettingChange
from .passkey_policy import is_risky

SETTING = lifetimes.SETTING


def rules_of(workspace: Workspace) -> dict[str, dict[str, Any]]:
    """The workspace's lifetime rules, as stored (durations in seconds; {} for none)."""
    return lifetimes.from_text(workspace.setting(SETTING))


def lifetime_of(workspace: Workspace, action: Any, gate: Any, default_wait: int) -> Lifetime:
    """The lifetime a card of ``action`` (of class ``gate`` for these arguments) is filed under."""
    return lifetimes.resolve(rules_of(workspace), gate.kind, is_risky(action, gate), default_wait)


def card_lifetime(q: Any, now: int, default_wait: int) -> dict[str, Any] | None:
    """What a card filed at ``now`` for the question ``q`` keeps of its lifetime (``Card.lifetime``),
    or None when its workspace has no rules (the deployment's default, as before any rule)."""
    rules = rules_of(q.ctx.workspace)
    if not rules:
        return None
    return lifetimes.resolve(rules, q.gate.kind, is_risky(q.action, q.gate), default_wait).card_record(now)


# -- set_card_lifetimes --------------------------------------------------------------------------


class LifetimesArgs(Arguments):
    rules: dict[str, Any] = Field(
        description="Per class (default, always, client, setting, when, risky): any of wait (5m to 7d), "
                    "remind_before (a duration less than the wait, or null) and lapse (expired or declined). "
                    "An empty object removes every rule.")


class SetCardLifetimes(OwnerSettingChange):
    name = "set_card_lifetimes"
    setting = SETTING
    owner_can = "change how long cards wait"
    title = "Preparing a change of how long cards wait"
    description = ("Change how long cards wait per class, the reminder before they lapse and what a lapse means "
                   "(the workspace owner only). Filed from the confirm page or the CLI.")
    arguments = LifetimesArgs
    gate = ALWAYS
    destructive = True  # a policy change: risky by the passkey policy's own rule, as set_passkey_policy is
    agent_tool = False  # a person changes policy; no agent can even ask for it
    drift_message = "The workspace's card lifetimes changed between the preview and the answer; nothing was written."

    def __init__(self, default_wait: int = 24 * 3600):
        self.default_wait = default_wait

    def plan(self, args: LifetimesArgs, ctx: ActionContext) -> Plan:
        self.refuse_unless_owner(ctx)
        try:
            new = lifetimes.normal(args.rules, "rules")
        except lifetimes.LifetimeError as exc:
            path, text = exc.problems[0]
            raise ActionError(f"{path}: {text}", field=path) from None
        current = ctx.workspace.setting(SETTING) or ""
        after = lifetimes.as_text(new)
        if after == current:
            raise ActionError("The card lifetimes are already exactly these.", field="rules")
        lines = ["Now:", *(f"  {line}" for line in lifetimes.describe(lifetimes.from_text(current), self.default_wait)),
                 "After:", *(f"  {line}" for line in lifetimes.describe(new, self.default_wait)),
                 "Cards already waiting keep the lifetime they were filed with"]
        preview = Preview("Change how long cards wait, their reminders and what a lapse means", lines)
        return self.change(current, after, preview)

    def result(self, after: str) -> dict[str, Any]:
        return {SETTING: lifetimes.exported(lifetimes.from_text(after))}


def toolset(default_wait: int) -> Toolset:
    """The lifetimes toolset every deployment serves (its one action is no MCP tool)."""
    return Toolset("card_lifetimes", actions=[SetCardLifetimes(default_wait)])
