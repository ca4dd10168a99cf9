"""The demo data of ``countersign serve --demo`` (:func:`seed_demo`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...identity import accounts
from ...identity.sessions import mint_signin_token
from ...runtime import Runtime
from ...store.errors import NotFound, StoreUnavailable, StoreUnusable
from ...store.workspaces import Person
from ...toolkit import ActionContext

DEMO_EMAIL = "demo@example.com"


def seed_demo(runtime: Runtime) -> dict:
    """Create (once) a demo workspace, owner, toolset data and agent token; mint a fresh sign-in link.

    Writes ``DATA/demo.json`` with ``mcp_url``, ``agent_token``, ``person_email``, ``confirm_url`` and
    ``signin_url``. Re-running with the same data folder keeps everything and only renews the link.
    """
    settings, store = runtime.settings, runtime.store
    path: Path = settings.data_dir / "demo.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    try:
        person, token = _demo_person(runtime, previous)
        try:
            store.workspaces.get_workspace(person.workspace_id)
        except NotFound:  # pragma: no cover - a demo.json from another store
            raise SystemExit(f"{path} names a workspace this store does not have; remove it and start again") from None
        signin = mint_signin_token(store.sessions, person)
    except StoreUnavailable as exc:  # a read-only or full data folder: one line naming it, no traceback
        raise StoreUnusable(_cannot_write(settings.store, exc)) from None
    info = {
        "mcp_url": f"{settings.public_url}/mcp",
        "agent_token": token,
        "person_email": person.email,
        "confirm_url": settings.pending_url,
        "signin_url": f"{settings.public_url}/signin#token={signin}",
    }
    settings.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Made 0600 as it is opened (it holds the agent's token), not chmod-ed after it was written.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older demo.json made under another umask
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps(info, indent=2) + "\n")
    return info


def _demo_person(runtime: Runtime, previous: dict) -> tuple[Person, str]:
    """The demo's person and agent token: the ones ``demo.json`` names, else new ones with the
    toolsets' demo data."""
    store = runtime.store
    person = store.workspaces.get_person_by_email(previous.get("person_email", DEMO_EMAIL))
    token = previous.get("agent_token")
    if person is None or not token:
        workspace, person = accounts.create_workspace(store.workspaces, "Demo workspace", DEMO_EMAIL, "Dana Demo")
        token = accounts.create_connection(store.workspaces, store.connections, workspace.id, person.id,
                                           "Demo agent").token
        ctx = ActionContext.reading(store.docs, store.workspaces, workspace, person, None, runtime.desk.now())
        for toolset in runtime.registry.toolsets:
            if toolset.demo is not None:
                toolset.demo(store.docs, ctx)
    return person, token


def _cannot_write(store_url: str, exc: StoreUnavailable) -> str:
    """One line for ``serve --demo`` on a store it cannot write: which folder, why, and the fix."""
    why = " ".join(str(exc.__cause__ or exc.message).split())
    if store_url.startswith("sqlite:///"):
        database = Path(store_url.removeprefix("sqlite:///"))
        return (f"serve --demo cannot write to the data folder {database.parent} (the database {database}: {why}). "
                "Make the folder and the files in it writable by the user running countersign "
                "(chmod u+w; a read-only mount: remount it read-write), or choose another data folder with --data.")
    return (f"serve --demo cannot write to the store {store_url} ({why}). Try again once it "
            "takes writes, or choose another store.")
