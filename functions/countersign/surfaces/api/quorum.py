"""Quorum and escalation rules on the confirm page (docs/policy.md, "Quorum", "Escalation"): the
workspace's rules in words, and the owner's change of them, filed as a card (``set_quorum_rules``,
``set_escalation_rules``) they then confirm — a held action like the passkey policy's change: nothing
changes until that Confirm (with the passkey under a policy of risky or every; and under a quorum of
its own when a rule covers it)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from ...gate import escalation
from ...gate.quorum_rules import MAX_RULES, SetQuorumRules, parse_text, rule_words, rules_of
from ...identity.sessions import Signed
from ...runtime import Runtime
from .cards import file_own_request
from .errors import ApiError
from .schemas import CardView, Strict, errors
from .session import Acting, SignedIn, runtime_of

router = APIRouter(tags=["quorum"])


class RulesBody(Strict):
    rules: list[dict[str, Any]] = Field(max_length=MAX_RULES, description=(
        "Every rule as it is to be: {id?, name, when (tool:<name>, class:<always|client|setting|when>, risky, "
        "over:<amount> or any), needs, of (roles and person:<id>), decline (any or majority)}"))


class RuleView(BaseModel):
    id: str
    name: str
    when: str
    needs: int
    of: list[str]
    decline: str
    words: str = Field(description="The rule in words, as its card showed it")


class RulesView(BaseModel):
    rules: list[RuleView]
    canSetRules: bool = Field(description="Only the workspace's owner sets them")


@router.get("/quorum-rules", response_model=RulesView, responses=errors(401))
def rules(request: Request, signed: SignedIn) -> dict:
    """The workspace's quorum rules, each in words."""
    runtime = runtime_of(request)
    members = runtime.store.workspaces.list_persons(signed.workspace.id)
    return {"rules": [{**{k: r.get(k) for k in ("id", "name", "when", "needs", "of")},
                       "decline": r.get("decline", "any"), "words": rule_words(r, members)}
                      for r in rules_of(signed.workspace)],
            "canSetRules": signed.person.role == "owner"}


@router.post("/quorum-rules", response_model=CardView, status_code=201, responses=errors(401, 403, 422))
def request_rules(body: RulesBody, request: Request, signed: Acting) -> dict:
    """File the owner's change of the quorum rules as a card they then confirm. A rule no one in the
    workspace can satisfy, or for a tool that does not exist, is refused (422 naming the field), and
    nothing is filed."""
    if signed.person.role != "owner":
        raise ApiError(403, "forbidden", "Only the workspace's owner can set its quorum rules.")
    return _file(runtime_of(request), signed, SetQuorumRules.name, body.rules)


def _file(runtime: Runtime, signed: Signed, tool: str, rules: list[dict[str, Any]]) -> dict:
    return file_own_request(runtime, signed, tool, {"rules": rules}, "rules")


class EscalationRuleView(BaseModel):
    id: str
    name: str
    when: str
    after: int = Field(description="Minutes unanswered")
    add: list[str]
    words: str


class EscalationRulesView(BaseModel):
    rules: list[EscalationRuleView]
    canSetRules: bool


@router.get("/escalation-rules", response_model=EscalationRulesView, responses=errors(401))
def escalation_rules(request: Request, signed: SignedIn) -> dict:
    """The workspace's escalation rules, each in words."""
    members = runtime_of(request).store.workspaces.list_persons(signed.workspace.id)
    found = parse_text(signed.workspace.settings.get(escalation.SETTING))
    return {"rules": [{**{k: r.get(k) for k in ("id", "name", "when", "after", "add")},
                       "words": escalation.rule_words(r, members)} for r in found],
            "canSetRules": signed.person.role == "owner"}


@router.post("/escalation-rules", response_model=CardView, status_code=201, responses=errors(401, 403, 422))
def request_escalation_rules(body: RulesBody, request: Request, signed: Acting) -> dict:
    """File the owner's change of the escalation rules as a card they then confirm (422 naming the
    field for a bad rule, nothing filed)."""
    if signed.person.role != "owner":
        raise ApiError(403, "forbidden", "Only the workspace's owner can set its escalation rules.")
    return _file(runtime_of(request), signed, escalation.SetEscalationRules.name, body.rules)
