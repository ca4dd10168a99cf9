"""Upstream MCP servers on the Settings page (docs/gateway.md): the list, and held requests to
add one, approve its tools again or remove it. Owners and admins only; every change is a card,
confirmed like any other (the same actions and checks as ``countersign upstream``). A credential
is sent once, when adding, and sealed at once; no answer ever carries it, sealed or not."""

from __future__ import annotations

import re

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, Field

from ...core import askers
from ...toolkit import ActionError, Unavailable
from .errors import ApiError
from .schemas import CREDENTIAL_PATTERN, Strict, errors, stated
from .session import Acting, SignedIn, runtime_of
from .settings import EDITORS

router = APIRouter(tags=["settings"])
# The gateway's NAME_RULE (not imported: the toolset loads on first use, not at a cold start).
NAME_PATTERN = r"^[a-z][a-z0-9]{0,15}$"
NAME = Path(pattern=NAME_PATTERN, description="The upstream's name (its tools' prefix)")


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


HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$")


class AddUpstreamBody(Strict):
    # The name is checked by the action, the header and the credential by _credential (each refusal
    # a 422 naming its field); the document states those rules.
    name: str = Field(max_length=64, json_schema_extra=stated(pattern=NAME_PATTERN),
                      description="Its tools' prefix (server__tool): 1 to 16 lowercase letters and "
                                  "digits, starting with a letter")
    # No stdio command here: a command runs on the server's machine, so only someone with a shell
    # there adds one (countersign upstream add --command); the page adds HTTP upstreams only.
    url: str = Field(max_length=2048, description="A Streamable HTTP URL (https)")
    credentialHeader: str | None = Field(
        default=None, max_length=64, json_schema_extra=stated(pattern=HEADER_NAME.pattern),
        description="The header the credential goes in (default Authorization); given only with a credential")
    credential: str | None = Field(
        default=None, max_length=4096, json_schema_extra=stated(pattern=CREDENTIAL_PATTERN),
        description="Sent once, sealed, never shown: one line, not blank (spaces and line breaks at either end "
                    "are dropped)")


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
    from ..upstream_requests import views  # the toolset at the first use, not at a cold start

    _editor(signed)
    found = views(runtime_of(request).desk, signed.workspace.id, signed.person)
    for view in found:
        view["tools"] = [dict(t, cls=t.pop("class")) for t in view["tools"]]
    return {"upstreams": found}


def _file(request: Request, signed, tool: str, arguments: dict) -> dict:
    from ..upstream_requests import file_change  # the toolset at the first use, not at a cold start

    _editor(signed)
    desk = runtime_of(request).desk
    try:
        card = file_change(desk, signed.workspace.id, signed.person, tool, arguments,
                           asker=askers.person(signed.person.id))
    except Unavailable as exc:
        raise ApiError(503, exc.code, exc.message, headers={"Retry-After": "5"}, field="url") from None
    except ActionError as exc:
        raise ApiError(404 if exc.message.startswith("name: this workspace has no") else 422, "invalid",
                       exc.message, field=exc.field) from None
    return {"confirmationId": card.id, "title": card.title, "url": desk.card_url(card.id)}


@router.post("/settings/upstreams/{name}/refresh", response_model=FiledChange, responses=errors(401, 403, 404, 422))
def refresh_upstream(request: Request, signed: Acting, name: str = NAME) -> dict:
    """File a held request to approve the upstream's tools as it lists them now."""
    return _file(request, signed, "upstream_refresh", {"name": name})


@router.delete("/settings/upstreams/{name}", response_model=FiledChange, responses=errors(401, 403, 404, 422))
def remove_upstream(request: Request, signed: Acting, name: str = NAME) -> dict:
    """File a held request to remove the upstream."""
    return _file(request, signed, "upstream_remove", {"name": name})


def _credential(body: AddUpstreamBody) -> dict[str, str]:
    """The one header the credential is sent in (checked here: it never reaches an error message)."""
    if body.credential is None:
        if body.credentialHeader is not None:
            raise ApiError(422, "invalid", "credential: give the credential for that header, or no header.",
                           field="credential")
        return {}
    header = body.credentialHeader if body.credentialHeader is not None else "Authorization"
    if not HEADER_NAME.fullmatch(header):
        raise ApiError(422, "invalid", "credentialHeader: a header name such as Authorization or X-Api-Key.",
                       field="credentialHeader")
    value = body.credential.strip()
    if not value or any(c in value for c in "\r\n\0"):
        raise ApiError(422, "invalid", "credential: one line of text, not blank.", field="credential")
    return {header: value}


@router.post("/settings/upstreams", response_model=FiledChange, responses=errors(401, 403, 422, 503))
def add_upstream(request: Request, signed: Acting, body: AddUpstreamBody) -> dict:
    """File a held request to put an upstream MCP server behind the gate: its tools are listed on
    the card. The credential is sealed at once and never shown again."""
    from ..upstream_requests import add_arguments  # the toolset at the first use, not at a cold start

    _editor(signed)
    headers = _credential(body)
    arguments = add_arguments(runtime_of(request).desk, signed.workspace.id, body.name, body.url, None, headers)
    return _file(request, signed, "upstream_add", arguments)
