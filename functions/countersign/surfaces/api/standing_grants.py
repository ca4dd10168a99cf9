"""Standing grants on the confirm page (docs/policy.md, "Standing grants"): what can be granted (and a
draft from a card: "Allow this again…"), granting (filed as a card the person then confirms, with
their passkey under a passkey policy), the list with each use, revoking, and the owner's rules of what
no grant may cover.

Granting never writes a grant here: it files ``create_standing_grant``, and only the person's
Confirm of that card makes it (through the gate: re-planned, audited, exactly once). Revoking needs
no card (it only takes authority away) and stops the next call at once.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from ...core.times import iso
from ...gate.desk import CardDesk
from ...gate.question import Question
from ...gate.standing_grants import SetStandingGrantsNever, amount_bound, rules_of
from ...identity.sessions import Signed
from ...runtime import Runtime
from ...store.errors import NotFound
from ...store.standing_grants import MAX_GRANT_DAYS, MAX_GRANT_NAME, MAX_GRANT_USES, StandingGrant
from ...store.workspaces import MANAGERS
from ...toolkit import Action, ActionError, AmountBound
from .cards import _load, _view, file_own_request
from .errors import ApiError, not_found
from .offers import Offers
from .schemas import CardView, Strict, errors
from .session import Acting, SignedIn, runtime_of

router = APIRouter(tags=["standing grants"])

GRANT_ID = re.compile(r"^sg_[A-Za-z0-9]{1,60}$")
CREATE = "create_standing_grant"


class GrantBody(Strict):
    connectionId: str = Field(min_length=1, max_length=64, description="One of your connections")
    tool: str = Field(min_length=1, max_length=128, description="The tool it covers (one that declares bounds)")
    name: str = Field(min_length=1, max_length=MAX_GRANT_NAME, description="What you call this grant")
    limits: dict[str, Any] = Field(description="Per bound the tool declares: a maximum amount (\"100\", \"500.00\") "
                                               "or a list of allowed values")
    uses: int = Field(ge=1, le=MAX_GRANT_USES, description="How many calls it covers")
    days: int = Field(ge=1, le=MAX_GRANT_DAYS, description="How many days it lasts, from your Confirm")
    cap: str | int | None = Field(default=None, description="At most this much of the tool's amount in all")


class RulesBody(Strict):
    rules: list[str] = Field(max_length=50, description="tool:<name>, class:<always|client|setting|when>, risky, or "
                                                        "over:<amount>")


class GrantUseView(BaseModel):
    cardId: str
    at: str
    amount: str | None


class GrantView(BaseModel):
    id: str
    name: str
    tool: str
    connectionId: str
    connectionName: str | None
    terms: list[str]
    state: str = Field(description="active, revoked, expired or used up")
    uses: int
    usesLeft: int
    cap: str | None
    capLeft: str | None
    createdAt: str
    expiresAt: str
    revokedAt: str | None
    passkey: bool = Field(description="Granted with a passkey, so it covers what the passkey policy covers")
    yours: bool
    useList: list[GrantUseView]


class GrantList(BaseModel):
    grants: list[GrantView]
    rules: list[str] = Field(description="What no standing grant may cover in this workspace (the owner's rules)")
    canSetRules: bool


class BoundView(BaseModel):
    argument: str
    kind: str = Field(description="max: an amount at most this much a call; in: one of the chosen values")
    label: str
    unit: str = ""
    places: int | None = None
    choices: list[dict[str, str]] | None = None
    value: Any = Field(default=None, description="In a draft from a card: that card's value")


class GrantableTool(BaseModel):
    tool: str
    bounds: list[BoundView]


class GrantOptions(BaseModel):
    connections: list[dict[str, str]]
    tools: list[GrantableTool]
    maxDays: int
    maxUses: int
    draft: dict[str, Any] | None = Field(default=None, description="From ?card=: its connection, tool and values")


def _grantable(runtime: Runtime) -> list[Action]:
    return [a for a in runtime.registry.actions.values() if a.agent_tool and a.grantable]


def _bounds(action: Action, ctx: Any, subject: Any = None) -> list[dict[str, Any]]:
    views = []
    for bound in action.grantable:
        view: dict[str, Any] = {"argument": bound.argument, "kind": bound.kind, "label": bound.label or bound.argument}
        if isinstance(bound, AmountBound):
            view.update(unit=bound.unit, places=bound.places)
            if subject is not None:
                view["value"] = bound.show(max(0, bound.amount(subject))).removesuffix(bound.unit)
        else:
            view["choices"] = [{"value": v, "name": n} for v, n in bound.choices(ctx)]
            if subject is not None:
                view["value"] = sorted(set(bound.values(subject, ctx)))
        views.append(view)
    return views


@router.get("/standing-grants/options", response_model=GrantOptions, responses=errors(401, 403, 404, 409))
def options(request: Request, signed: SignedIn, card: str | None = Query(default=None, max_length=64)) -> dict:
    """What you can grant: your live connections and the tools that declare bounds, each with its
    choices; with ``card``, a draft from that card of yours (its connection, its tool, its values)."""
    runtime = runtime_of(request)
    desk = runtime.desk
    ctx = desk.context(signed.workspace.id, signed.person, None, desk.now())
    connections = [{"id": c.id, "name": c.name} for c in runtime.store.connections.list_connections(
        signed.workspace.id, signed.person.id) if not c.revoked]
    out: dict[str, Any] = {"connections": connections, "maxDays": MAX_GRANT_DAYS, "maxUses": MAX_GRANT_USES,
                           "tools": [{"tool": a.name, "bounds": _bounds(a, ctx)} for a in _grantable(runtime)]}
    if card is not None:
        found = _load(runtime, signed, card)
        refusal = Offers(runtime, signed).grant_refusal(found)  # the card views' canGrant: the same rule
        action = next((a for a in _grantable(runtime) if a.name == found.tool), None)
        if refusal is not None or action is None:
            raise ApiError(409, "not_grantable", refusal or f"{found.tool} cannot be allowed again.")
        out["draft"] = {"connectionId": found.connection_id, "tool": found.tool,
                        "bounds": _bounds(action, ctx, found.subject), "fromCard": found.id}
    return out


@router.post("/standing-grants", response_model=CardView, status_code=201, responses=errors(401, 403, 422))
def create(body: GrantBody, request: Request, signed: Acting) -> dict:
    """File a standing grant as a card you then confirm (with your passkey if the workspace's
    passkey policy covers it). Bad input is refused with a sentence naming the field; nothing is filed."""
    runtime = runtime_of(request)
    desk = runtime.desk
    arguments: dict[str, Any] = {"connection_id": body.connectionId, "tool": body.tool, "name": body.name,
                                 "limits": body.limits, "uses": body.uses, "days": body.days}
    if body.cap is not None:
        arguments["cap"] = body.cap
    ctx = desk.context(signed.workspace.id, signed.person, None, desk.now())
    try:
        q = Question.of(desk.registry.action(CREATE), arguments, ctx)
    except ActionError as exc:
        raise ApiError(422, "invalid", exc.message, field=_field(exc.field)) from None
    card, _ = desk.file(q, "page")
    return _view(runtime, signed, card)


def _field(field: str | None) -> str | None:
    names = {"connection_id": "connectionId"}
    return names.get(field or "", field)


def grant_view(runtime: Runtime, grant: StandingGrant, signed: Signed, names: dict[str, str]) -> dict:
    return grant_fields(runtime.desk, grant, signed.person.id, names)


def grant_fields(desk: CardDesk, grant: StandingGrant, viewer_id: str, names: dict[str, str]) -> dict:
    """A grant as the page and ``countersign grants list`` show it, to the person ``viewer_id``."""
    now = desk.now()
    try:
        bound = amount_bound(desk.registry.action(grant.tool))
    except ActionError:
        bound = None

    def shown(milli: int | None) -> str | None:
        return None if milli is None or bound is None else bound.show(milli)

    uses = desk.store.standing_grants.list_standing_grant_uses(grant.workspace_id, grant.id)
    return {
        "id": grant.id, "name": grant.name, "tool": grant.tool, "connectionId": grant.connection_id,
        "connectionName": names.get(grant.connection_id), "terms": list(grant.terms), "state": grant.state_at(now),
        "uses": grant.max_uses, "usesLeft": grant.uses_left, "cap": shown(grant.cap), "capLeft": shown(grant.cap_left),
        "createdAt": iso(grant.created_at), "expiresAt": iso(grant.expires_at),
        "revokedAt": None if grant.revoked_at is None else iso(grant.revoked_at), "passkey": grant.passkey,
        "yours": grant.person_id == viewer_id,
        "useList": [{"cardId": u.card_id, "at": iso(u.at), "amount": shown(u.amount) if bound else None}
                    for u in uses],
    }


@router.get("/standing-grants", response_model=GrantList, responses=errors(401))
def list_grants(request: Request, signed: SignedIn) -> dict:
    """Your standing grants, newest first, with uses left and each use (owners and admins: every
    grant of the workspace), and the owner's rules of what no grant may cover."""
    runtime = runtime_of(request)
    manager = signed.person.role in MANAGERS
    grants = runtime.store.standing_grants.list_standing_grants(
        signed.workspace.id, person_id=None if manager else signed.person.id)
    names = {c.id: c.name for c in runtime.store.connections.list_connections(signed.workspace.id)}
    return {"grants": [grant_view(runtime, g, signed, names) for g in grants],
            "rules": rules_of(signed.workspace), "canSetRules": signed.person.role == "owner"}


@router.post("/standing-grants/{grant_id}/revoke", response_model=GrantView, responses=errors(401, 403, 404))
def revoke(grant_id: str, request: Request, signed: Acting) -> dict:
    """Revoke a grant (yours; owners and admins: any in the workspace). The next call it would have
    covered waits for the person again."""
    runtime = runtime_of(request)
    if not GRANT_ID.fullmatch(grant_id):
        raise not_found()
    store = runtime.store.standing_grants
    try:
        grant = store.get_standing_grant(signed.workspace.id, grant_id)
    except NotFound:
        raise not_found() from None
    if grant.person_id != signed.person.id and signed.person.role not in MANAGERS:
        raise ApiError(403, "forbidden", "This grant is another person's; only they, or the workspace's owners and "
                       "admins, can revoke it.")
    revoked = store.revoke_standing_grant(signed.workspace.id, grant_id, f"person:{signed.person.id}",
                                          runtime.desk.now())
    names = {c.id: c.name for c in runtime.store.connections.list_connections(signed.workspace.id)}
    return grant_view(runtime, revoked, signed, names)


@router.post("/standing-grants/rules", response_model=CardView, status_code=201, responses=errors(401, 403, 422))
def request_rules(body: RulesBody, request: Request, signed: Acting) -> dict:
    """File the owner's change of what no standing grant may cover as a card they then confirm
    (``set_standing_grants_never``, as ``countersign policy import`` files it): nothing changes until
    that Confirm. A rule that is none, or names no tool here, is refused (422 naming it), and nothing
    is filed."""
    if signed.person.role != "owner":
        raise ApiError(403, "forbidden", "Only the workspace's owner can rule what no standing grant may cover.")
    return file_own_request(runtime_of(request), signed, SetStandingGrantsNever.name, {"rules": body.rules}, "rules")
