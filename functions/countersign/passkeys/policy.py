"""The workspace's passkey policy: which confirmations need the person's passkey.

``never`` (the default), ``risky`` — cards that spend, send, grant or cannot be undone: an action
of class ``always`` (it never runs on an in-client answer) that is ``destructive`` (MCP's
destructiveHint) — or ``every`` card. Under the policy a card is confirmed only on the confirm
page with a passkey assertion over its statement (:mod:`.statement`); a session click, an answer
given in the MCP client and a confirmation code are all refused.
"""

from __future__ import annotations

from typing import Any

from ..store.records import WORKSPACE_CHOICES, Workspace

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
    """Spends, sends, grants or cannot be undone: class ``always`` and destructive."""
    return gate.kind == "always" and bool(getattr(action, "destructive", True))


def needs_passkey(workspace: Workspace, action: Any, gate: Any) -> bool:
    policy = policy_of(workspace)
    return policy == "every" or (policy == "risky" and is_risky(action, gate))


def refusal_message(tool: str) -> str:
    return (f"This workspace requires the person's passkey to confirm {tool}: only Confirm on the confirm page, "
            "signed with their passkey, can run it — not a click alone, an answer in the client or a code. "
            "Nothing ran.")
