"""``set_passkey_policy``: changing the workspace's passkey policy is itself a held request.

It is always held (a person confirms on the confirm page), only the owner can make it, and it is
risky by the policy's own rule (class ``always``, destructive): under ``risky`` or ``every`` the
change needs the owner's passkey. Part of every deployment (not a toolset pack); the confirm
page's Settings files it too.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..core.preview import Preview
from ..store.records import SettingWrite
from ..toolkit import ALWAYS, Action, ActionContext, ActionError, Arguments, Effect, Plan, Toolset
from .policy import DESCRIBED, SETTING, policy_of


class PolicyArgs(Arguments):
    policy: Literal["never", "risky", "every"] = Field(
        description="never; risky: cards that spend, send, grant or cannot be undone; every: every card")


class SetPasskeyPolicy(Action):
    name = "set_passkey_policy"
    title = "Preparing a passkey policy change"
    description = ("Change when confirming a card needs the person's passkey (the workspace owner only): never, "
                   "risky (cards that spend, send, grant or cannot be undone) or every card.")
    arguments = PolicyArgs
    gate = ALWAYS
    destructive = True
    drift_message = "The passkey policy changed between the preview and the answer; nothing was written."

    def plan(self, args: PolicyArgs, ctx: ActionContext) -> Plan:
        current = policy_of(ctx.workspace)
        if current == args.policy:
            raise ActionError(f"The passkey policy is already {args.policy}.", field="policy")
        if ctx.person.role != "owner":
            raise ActionError(f"Only the workspace's owner can change the passkey policy; you are {ctx.person.role}.",
                              field="policy")
        preview = Preview(f"Require a passkey to confirm: {DESCRIBED[args.policy]}", [
            f"Now: {DESCRIBED[current]}",
            f"After: {DESCRIBED[args.policy]}",
            "Covered cards are confirmed only with a passkey on the confirm page, never in the client or by a code",
        ])
        return Plan({"setting": SETTING, "from": current, "to": args.policy}, preview)

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        change = plan.subject
        return Effect.writes({SETTING: change["to"]}, [SettingWrite(SETTING, expected=change["from"],
                                                                    value=change["to"])])


TOOLSET = Toolset("passkeys", actions=[SetPasskeyPolicy()])
