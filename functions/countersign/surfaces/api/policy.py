"""A workspace's whole policy as one document, and in words (docs/policy.md, "Policy as data").

:func:`document` is what ``countersign policy export`` prints: each section in the form its own
setting or API already uses. :func:`sections` says it in the words each module already has (the
passkey policy's, the lifetimes', the quorum and escalation rules', the editable fields', the
grants'); ``countersign policy show`` prints them (:func:`words`) and Settings → Policy shows them.

``GET /api/policy`` — for any member of the workspace: ``{policy, sections, canChange}`` and, for
the owner (who alone changes it, each change through its own API), the choices a rule may name.
Only reads; nothing in it is secret (the standing grants listed are those ``GET
/api/standing-grants`` lists to the same person).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from ...core import lifetimes
from ...gate import escalation, lifetimes as gate_lifetimes, quorum_rules, standing_grants
from ...gate.desk import CardDesk
from ...gate.passkey_policy import DESCRIBED, policy_of
from ...gate.policy_import import VERSION
from ...gate.policy_words import editable_words
from ...store.workspaces import MANAGERS, ROLES, Person, Workspace
from .schemas import errors
from .session import SignedIn, runtime_of
from .standing_grants import grant_fields

router = APIRouter(tags=["policy"])


def document(desk: CardDesk, workspace: Workspace, viewer: Person | None) -> dict[str, Any]:
    """The workspace's policy: every section as its setting or API gives it. The standing grants are
    those ``viewer`` may list (theirs; every grant for an owner or admin, or for no viewer: the CLI's
    ``--workspace``)."""
    only = None if viewer is None or viewer.role in MANAGERS else viewer.id
    grants = desk.store.standing_grants.list_standing_grants(workspace.id, person_id=only)
    names = {c.id: c.name for c in desk.store.connections.list_connections(workspace.id)}
    viewer_id = viewer.id if viewer is not None else ""
    return {
        "version": VERSION,
        "passkeyPolicy": policy_of(workspace),
        "standingGrantsNever": standing_grants.rules_of(workspace),
        "lifetimes": lifetimes.exported(gate_lifetimes.rules_of(workspace)),
        "quorum": quorum_rules.rules_of(workspace),
        "escalation": quorum_rules.parse_text(workspace.settings.get(escalation.SETTING)),
        "editable": {name: [e.argument for e in action.editable]
                     for name, action in sorted(desk.registry.actions.items())
                     if action.agent_tool and action.editable},
        "standingGrants": [grant_fields(desk, g, viewer_id, names) for g in grants],
    }


def sections(desk: CardDesk, workspace: Workspace, policy: dict[str, Any]) -> list[dict[str, Any]]:
    """``policy`` (:func:`document`) in words, section by section, each ``{key, title, summary,
    lines, ruleWords}``: the summary says it in one phrase where it can (or that there is none), the
    lines one rule each; ``ruleWords``, for the sections of rules an owner changes here (what no grant
    may cover, quorum, escalation), each rule of the document's list in words, in its order."""
    members = desk.store.workspaces.list_persons(workspace.id)
    never = policy["standingGrantsNever"]
    grant_lines = [
        f"‘{g['name']}’ ({g['state']}): {g['connectionName'] or g['connectionId']} may run {g['tool']} without "
        f"asking; {'; '.join(g['terms'])}; {g['usesLeft']} of {g['uses']} uses left; expires {g['expiresAt']}"
        for g in policy["standingGrants"]]

    def section(key: str, title: str, summary: str, lines: list[str],
                rule_words: list[str] | None = None) -> dict[str, Any]:
        return {"key": key, "title": title, "summary": summary, "lines": lines, "ruleWords": rule_words or []}

    never_words = [quorum_rules.when_words(r) for r in never]
    quorum = [quorum_rules.rule_words(r, members) for r in policy["quorum"]]
    escalated = [escalation.rule_words(r, members) for r in policy["escalation"]]
    return [
        section("passkeyPolicy", "Passkey",
                f"{DESCRIBED[policy['passkeyPolicy']]} (passkey policy {policy['passkeyPolicy']})", []),
        section("standingGrantsNever", "No standing grant may cover",
                "; ".join(never_words) if never else "(no rule: any tool that declares bounds)", [], never_words),
        section("lifetimes", "Card lifetimes", "",
                lifetimes.describe(gate_lifetimes.rules_of(workspace), desk.settings.card_ttl)),
        section("quorum", "Quorum rules", "" if quorum else "none (one person's yes runs a held request)",
                quorum, quorum),
        section("escalation", "Escalation rules", "" if escalated else "none", escalated, escalated),
        section("editable", "Editable on a card before confirming", "" if policy["editable"] else "nothing",
                [f"{tool}: {editable_words(desk.registry.action(tool))}" for tool in policy["editable"]]),
        section("standingGrants", "Standing grants", "" if grant_lines else "none", grant_lines),
    ]


def words(desk: CardDesk, workspace: Workspace, policy: dict[str, Any]) -> list[str]:
    """``policy`` (:func:`document`) as ``countersign policy show`` prints it: a heading, then each
    section's title and summary on a line, its rules indented under it."""
    lines = [f"Policy of workspace {workspace.name} ({workspace.id})"]
    for s in sections(desk, workspace, policy):
        lines.append(f"{s['title']}:" + (f" {s['summary']}" if s["summary"] else ""))
        lines += [f"  {line}" for line in s["lines"]]
    return lines


class PolicySection(BaseModel):
    key: str = Field(description="The document's key this section says in words")
    title: str
    summary: str = Field(description="The section in one phrase, or that there is none; empty when its lines say it")
    lines: list[str] = Field(description="One rule each, in the words countersign policy show prints")
    ruleWords: list[str] = Field(description="standingGrantsNever, quorum, escalation: each rule of the document's "
                                             "list in words, in its order (empty for the other sections)")


class Choice(BaseModel):
    value: str = Field(description="As a rule writes it")
    words: str = Field(description="As the policy's words say it")


class PolicyChoices(BaseModel):
    when: list[Choice] = Field(description="What a rule may cover besides tool:<name> and over:<amount>")
    tools: list[str] = Field(description="The tools agents may call: what tool:<name> may name")
    who: list[Choice] = Field(description="Whom a quorum rule lets approve, or an escalation rule adds: roles, then "
                                          "each member (person:<id>)")
    decline: list[Choice]


class PolicyView(BaseModel):
    policy: dict[str, Any] = Field(description="The document countersign policy export prints (version 1)")
    sections: list[PolicySection] = Field(description="The same in words, as countersign policy show says it")
    canChange: bool = Field(description="Whether the signed-in person (the owner) can change it, each change a held "
                                        "card: quorum rules (POST /api/quorum-rules), escalation rules (POST "
                                        "/api/escalation-rules), what no grant may cover (POST "
                                        "/api/standing-grants/rules)")
    choices: PolicyChoices | None = Field(default=None, description="For the owner: what a rule may name")


@router.get("/policy", response_model=PolicyView, responses=errors(401))
def get_policy(request: Request, signed: SignedIn) -> dict:
    """The workspace's whole policy as one document (as ``countersign policy export``), and in words."""
    desk = runtime_of(request).desk
    workspace = signed.workspace
    policy = document(desk, workspace, signed.person)
    owner = signed.person.role == "owner"
    out: dict[str, Any] = {"policy": policy, "sections": sections(desk, workspace, policy), "canChange": owner}
    if owner:
        members = desk.store.workspaces.list_persons(workspace.id)
        when = ["any", "risky", *(f"class:{c}" for c in quorum_rules.CLASSES)]
        who = [*ROLES, *(f"person:{p.id}" for p in members)]
        out["choices"] = {
            "when": [{"value": w, "words": quorum_rules.when_words(w)} for w in when],
            "tools": sorted(name for name, a in desk.registry.actions.items() if a.agent_tool),
            "who": [{"value": w, "words": quorum_rules.who_words([w], members)} for w in who],
            "decline": [{"value": d, "words": words} for d, words in quorum_rules.DECLINE_WORDS.items()]}
    return out
