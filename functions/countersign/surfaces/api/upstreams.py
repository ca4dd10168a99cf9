"""Upstream MCP servers on the Settings page (docs/gateway.md): the list, and held requests to
approve an upstream's tools again or to remove it. Owners and admins only. Adding one is done
from the CLI (it takes a credential and a command); every change is a card, confirmed like any
other. No answer ever carries a credential, sealed or not."""

from __future__ import annotations

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel

from ...gate.actions import ActionError
from .errors import ApiError
from .schemas import errors
from .session import Acting, SignedIn, runtime_of
from .settings import EDITORS

router = APIRouter(tags=["settings"])
NAME = Path(pattern=r"^[a-z][a-z0-9]{0,15}$", description="The upstream's name (its tools' prefix)")


class UpstreamTool(BaseModel):
    name: str
    title: str
    cls: str
    witness: list[dict]


class UpstreamView(BaseModel):
    name: str
    transport: str
    where: str
    credential: bool
    tools: list[UpstreamTool]


class UpstreamList(BaseModel):
    upstreams: list[UpstreamView]


class FiledChange(BaseModel):
    confirmationId: str
    title: str
    url: str


def _editor(signed) -> None:
    if signed.person.role not in EDITORS:
        raise ApiError(403, "forbidden", "Only the workspace's owners and admins manage upstream servers.")


@router.get("/settings/upstreams", response_model=UpstreamList, responses=errors(401, 403))
def list_upstreams(request: Request, signed: SignedIn) -> dict:
    """The workspace's upstream MCP servers and how each tool is gated."""
    from ...toolsets.gateway.requests import views

    _editor(signed)
    found = views(runtime_of(request).desk, signed.workspace.id, signed.person)
    for view in found:
        view["tools"] = [dict(t, cls=t.pop("class")) for t in view["tools"]]
    return {"upstreams": found}


def _file(request: Request, signed, tool: str, name: str) -> dict:
    from ...toolsets.gateway.requests import file_change

    _editor(signed)
    desk = runtime_of(request).desk
    try:
        card = file_change(desk, signed.workspace.id, signed.person, tool, {"name": name})
    except ActionError as exc:
        raise ApiError(404 if exc.message.startswith("name: this workspace has no") else 422, "invalid",
                       exc.message, field=exc.field) from None
    return {"confirmationId": card.id, "title": card.title, "url": desk.card_url(card.id)}


@router.post("/settings/upstreams/{name}/refresh", response_model=FiledChange, responses=errors(401, 403, 404, 422))
def refresh_upstream(request: Request, signed: Acting, name: str = NAME) -> dict:
    """File a held request to approve the upstream's tools as it lists them now."""
    return _file(request, signed, "upstream_refresh", name)


@router.delete("/settings/upstreams/{name}", response_model=FiledChange, responses=errors(401, 403, 404, 422))
def remove_upstream(request: Request, signed: Acting, name: str = NAME) -> dict:
    """File a held request to remove the upstream."""
    return _file(request, signed, "upstream_remove", name)
