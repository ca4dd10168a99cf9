"""The smoke workspace: where ``countersign smoke`` files and confirms a card against a running
deployment (docs/operations.md, "The smoke test").

Its id is fixed and of a shape :func:`countersign.core.ids.new_id` never makes, so no real
workspace is ever one, and nothing on the page or over MCP can turn one into it. In it:

* an agent may file one action only, :data:`SMOKE_TOOL`, which writes nothing but its card and
  runs nowhere else (:mod:`countersign.gate.smoke`);
* a session may only read and answer cards (:data:`SMOKE_SESSION_ROUTES`): a leaked smoke
  credential cannot make connections, change settings, register passkeys or consent to OAuth.
"""

from __future__ import annotations

SMOKE_WORKSPACE_ID = "w_smoke"
SMOKE_WORKSPACE_NAME = "Smoke test"
SMOKE_EMAIL = "smoke@countersign.invalid"  # .invalid (RFC 2606): no mail can ever be delivered to it
SMOKE_TOOL = "countersign_smoke"
SMOKE_CONNECTION_NAME = "countersign smoke"
SMOKE_SESSION_DAYS = 400  # the smoke credential's lifetime; `countersign smoke setup` again replaces it

# What a session in the smoke workspace may call on the confirm API (under /api): (method, route template).
SMOKE_SESSION_ROUTES = frozenset({
    ("GET", "/session"),
    ("GET", "/cards"),
    ("GET", "/cards/{card_id}"),
    ("POST", "/cards/{card_id}/confirm"),
    ("POST", "/cards/{card_id}/decline"),
})


def is_smoke_workspace(workspace_id: str) -> bool:
    return workspace_id == SMOKE_WORKSPACE_ID
