"""The settings page: the person's own email setting, and (owners and admins) the workspace's
settings and who its members are."""

from __future__ import annotations

from fastapi import APIRouter, Request

from ...core.times import iso
from ...identity.sessions import Signed
from ...store.workspaces import DEFAULT_WORKSPACE_SETTINGS, MANAGERS
from .errors import ApiError
from .schemas import MeChanges, MemberList, SettingsView, WorkspaceChanges, errors
from .session import Acting, SignedIn, runtime_of

router = APIRouter(tags=["settings"])

EDITORS = MANAGERS


def settings_view(signed: Signed) -> dict:
    can_edit = signed.person.role in EDITORS
    workspace = {name: bool(signed.workspace.setting(name)) for name in DEFAULT_WORKSPACE_SETTINGS}
    return {
        "me": {"agent_requests_email": signed.person.agent_requests_email},
        "workspace": workspace if can_edit else None,
        "canEditWorkspace": can_edit,
    }


@router.get("/settings", response_model=SettingsView, responses=errors(401))
def get_settings(signed: SignedIn) -> dict:
    return settings_view(signed)


@router.patch("/settings/me", response_model=SettingsView, responses=errors(401, 403, 422))
def patch_me(changes: MeChanges, request: Request, signed: Acting) -> dict:
    """Turn *Email me when an agent asks* on or off for the signed-in person."""
    runtime = runtime_of(request)
    person = runtime.store.workspaces.update_person(signed.workspace.id, signed.person.id,
                                         agent_requests_email=changes.agent_requests_email)
    return settings_view(Signed(signed.session, person, signed.workspace))


@router.patch("/settings/workspace", response_model=SettingsView, responses=errors(401, 403, 422))
def patch_workspace(changes: WorkspaceChanges, request: Request, signed: Acting) -> dict:
    """Change workspace settings (owners and admins only)."""
    if signed.person.role not in EDITORS:
        raise ApiError(403, "forbidden", "Only the workspace's owners and admins can change its settings.")
    given = {name: getattr(changes, name) for name in changes.model_fields_set}
    if not given:
        raise ApiError(422, "invalid", f"body: name at least one of {', '.join(DEFAULT_WORKSPACE_SETTINGS)}.",
                       field="body")
    workspace = runtime_of(request).store.workspaces.update_workspace_settings(signed.workspace.id, given)
    return settings_view(Signed(signed.session, signed.person, workspace))


@router.get("/settings/members", response_model=MemberList, responses=errors(401, 403))
def get_members(request: Request, signed: SignedIn) -> dict:
    """The workspace's members and their roles (owners and admins only). Roles change through the
    held ``grant_role`` and ``revoke_role`` tools; the operator adds and removes members."""
    if signed.person.role not in EDITORS:
        raise ApiError(403, "forbidden", "Only the workspace's owners and admins can see its members.")
    return {"members": [{"email": p.email, "name": p.name, "role": p.role, "addedAt": iso(p.created_at),
                         "you": p.id == signed.person.id}
                        for p in runtime_of(request).store.workspaces.list_persons(signed.workspace.id)]}
