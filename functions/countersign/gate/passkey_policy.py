"""The workspace's passkey policy: which confirmations need the person's passkey, and
``set_passkey_policy``, the held request that changes it.

``never`` (the default), ``risky`` — cards that spend, send, grant or cannot be undone: an action
of class ``always`` (it never runs on an in-client answer) that is ``destructive`` (MCP's
destructiveHint), or one marked ``irreversible`` whatever its class — or ``every`` card. Under
the policy a card is confirmed only on the confirm page with a passkey assertion over its
statement (:mod:`countersign.core.statement`); a session click, an answer given in the MCP client
and a confirmation code are all refused.

Changing the policy is itself a held request (``set_passkey_policy``): always held (a person
confirms on the confirm page), only the owner can make it, and it is risky by the policy's own
rule (class ``always``, destructive): under ``risky`` or ``every`` the change needs the owner's
passkey. Part of every deployment (not a toolset pack); the confirm page's Settings files it too.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..core.preview import Preview
from ..store.workspaces import WORKSPACE_CHOICES, Workspace
from ..toolkit import ALWAYS, ActionContext, ActionError, Arguments, Plan, Toolset
from .owner_settings import OwnerSettingChange

SETTING = "passkey_policy"
POLICIES = WORKSPACE_CHOICES[SETTING]
DESCRIBED = {
    "never": "never: a signed-in click confirms",
    "risky": "for cards that spend, send, grant or cannot be undone",
    "every": "for every card",
}
TOOL_NOTE = (" If the workspace's passkey policy covers this request, only the person's passkey on the confirm "
             "page can confirm it (not a click alone, not an answer in the client, not a code).")


def policy_of(workspace: Workspace) -> str:
    value = workspace.setting(SETTING)
    return value if value in POLICIES else "never"


def is_risky(action: Any, gate: Any) -> bool:
    """Spends, sends, grants or cannot be undone: class ``always`` and destructive, or
    ``irreversible`` whatever its class (a split may be answered in the client, yet nothing undoes it)."""
    return (gate.kind == "always" and bool(getattr(action, "destructive", True))) or bool(
        getattr(action, "irreversible", False))


def needs_passkey(workspace: Workspace, action: Any, gate: Any) -> bool:
    policy = policy_of(workspace)
    return policy == "every" or (policy == "risky" and is_risky(action, gate))


def refusal_message(tool: str) -> str:
    return (f"This workspace requires the person's passkey to confirm {tool}: only Confirm on the confirm page, "
            "signed with their passkey, can run it — not a click alone, an answer in the client or a code. "
            "Nothing ran.")


# -- set_passkey_policy ---------------------------------------------------------------------------


class PolicyArgs(Arguments):
    policy: Literal["never", "risky", "every"] = Field(
        description="never; risky: cards that spend, send, grant or cannot be undone; every: every card")


class SetPasskeyPolicy(OwnerSettingChange):
    name = "set_passkey_policy"
    setting = SETTING
    owner_can = "change the passkey policy"
    owner_field = "policy"
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
        self.refuse_unless_owner(ctx)
        preview = Preview(f"Require a passkey to confirm: {DESCRIBED[args.policy]}", [
            f"Now: {DESCRIBED[current]}",
            f"After: {DESCRIBED[args.policy]}",
            "Covered cards are confirmed only with a passkey on the confirm page, never in the client or by a code",
        ])
        return self.change(current, args.policy, preview)

    def result(self, after: str) -> dict[str, Any]:
        return {SETTING: after}


TOOLSET = Toolset("passkeys", actions=[SetPasskeyPolicy()])
