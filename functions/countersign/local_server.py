"""The local server: build the runtime from settings, optionally seed demo data, return the ASGI app."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from . import accounts
from .gate.context import ActionContext
from .runtime import Runtime, build
from .settings import Settings
from .store.errors import NotFound

log = logging.getLogger("countersign")

DEMO_EMAIL = "demo@example.com"


def build_local(settings: Settings, demo: bool = False, runtime: Runtime | None = None):
    from .surfaces.local import LocalApp

    runtime = runtime or build(settings)
    info = seed_demo(runtime) if demo else None
    return LocalApp(runtime, api=_api(runtime)), info


def _api(runtime: Runtime):
    try:
        from .surfaces.api.app import create_api
    except ModuleNotFoundError:
        return None
    return create_api(runtime)


def seed_demo(runtime: Runtime) -> dict:
    """Create (once) a demo workspace, owner, toolset data and agent token; mint a fresh sign-in link.

    Writes ``DATA/demo.json`` with ``mcp_url``, ``agent_token``, ``person_email``, ``confirm_url`` and
    ``signin_url``. Re-running with the same data folder keeps everything and only renews the link.
    """
    settings, store = runtime.settings, runtime.store
    path: Path = settings.data_dir / "demo.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    person = store.get_person_by_email(previous.get("person_email", DEMO_EMAIL))
    token = previous.get("agent_token")
    if person is None or not token:
        workspace, person = accounts.create_workspace(store, "Demo workspace", DEMO_EMAIL, "Dana Demo")
        token = accounts.create_connection(store, workspace.id, person.id, "Demo agent").token
        ctx = ActionContext.of(store, workspace, person, None, runtime.desk.now())
        for toolset in runtime.registry.toolsets:
            if toolset.demo is not None:
                toolset.demo(store, ctx)
    try:
        store.get_workspace(person.workspace_id)
    except NotFound:  # pragma: no cover - a demo.json from another store
        raise SystemExit(f"{path} names a workspace this store does not have; remove it and start again") from None
    info = {
        "mcp_url": f"{settings.public_url}/mcp",
        "agent_token": token,
        "person_email": person.email,
        "confirm_url": settings.pending_url,
        "signin_url": f"{settings.public_url}/signin#token={accounts.mint_signin_token(store, person)}",
    }
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info, indent=2) + "\n")
    path.chmod(0o600)
    return info
