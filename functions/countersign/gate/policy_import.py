"""Importing a policy document (``countersign policy import``; docs/policy.md, "Policy as data").

The document is the one ``countersign policy export`` writes. The whole of it is checked before
anything is filed: its keys, its version, and each section through the argument checker and the
checks of the held request that changes that section (unknown keys, tools, people and roles get
that request's sentence, its path named from the document: ``quorum[1].needs: …``). Then each
section that differs from the workspace's policy becomes the same held owner card the API and the
CLI file for it; nothing here writes the policy. A section equal to the workspace's files nothing,
and a section the document leaves out is left as it is.

``editable`` (declared by each tool) and ``standingGrants`` (made only by their person confirming
a grant's card) are read-only: ignored, each with a sentence that says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..core import lifetimes
from ..core.canonical import canonical_json
from ..store.workspaces import Person, Workspace
from ..toolkit import ActionContext, ActionError
from . import escalation, quorum_rules, standing_grants
from .desk import CardDesk
from .lifetimes import SETTING as LIFETIMES
from .passkey_policy import policy_of
from .question import Question, parse

VERSION = 1
# Each section a document may change, the held request that changes it, and its argument.
SECTIONS: dict[str, tuple[str, str]] = {
    "passkeyPolicy": ("set_passkey_policy", "policy"),
    "standingGrantsNever": ("set_standing_grants_never", "rules"),
    "lifetimes": ("set_card_lifetimes", "rules"),
    "quorum": ("set_quorum_rules", "rules"),
    "escalation": ("set_escalation_rules", "rules"),
}
IGNORED = {
    "editable": "editable: what a person may change on a card is declared by each tool, not set by policy; ignored.",
    "standingGrants": "standingGrants: read-only: a standing grant is made only by its person confirming its card "
                      "(on the page, or filed by `countersign grants grant`) and ended by `countersign grants "
                      "revoke`; ignored.",
}
KEYS = ("version", *SECTIONS, *IGNORED)


@dataclass(frozen=True)
class Section:
    """One section of the document: ``question`` is the held request it files (None: nothing to
    file, ``why`` says why)."""

    key: str
    tool: str
    question: Question | None = None
    why: str = ""


class PolicyRefused(Exception):
    """The document is refused: ``problems`` are the sentences, each naming its path."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def plan_import(desk: CardDesk, workspace: Workspace, person: Person, document: Any) -> list[Section]:
    """Every section of ``document``: what ``person`` (the owner) would file for it, planned on the
    workspace as it is now. :class:`PolicyRefused` with every problem found (nothing is filed)."""
    if not isinstance(document, dict):
        raise PolicyRefused(["the document is not a JSON object of policy sections, as `countersign policy export` "
                             "writes it. Nothing was filed."])
    problems = [f"{str(key)[:64]}: not a section of a policy document; its sections are {', '.join(KEYS)}. "
                "Nothing was filed." for key in document if key not in KEYS]
    if "version" not in document or document["version"] != VERSION:
        problems.append(f"version: this reads policy documents of version {VERSION}; the document says "
                        f"{str(document.get('version'))[:20]}. Nothing was filed.")
    if person.role != "owner":
        problems.append(f"Only the workspace's owner imports its policy (each change is a card the owner confirms); "
                        f"{person.email} is {person.role}. Nothing was filed.")
    if problems:
        raise PolicyRefused(problems)
    ctx = desk.context(workspace.id, person, None, desk.now())
    sections = []
    for key, (tool, argument) in SECTIONS.items():
        if key not in document:
            sections.append(Section(key, tool, why="not in the document: left as it is"))
            continue
        try:
            sections.append(_section(desk, ctx, key, tool, {argument: document[key]}))
        except ActionError as exc:
            problems.append(_at(key, argument, exc.message))
    if problems:
        raise PolicyRefused(problems)
    return sections


def ignored(document: dict[str, Any]) -> list[str]:
    """The sentences for the read-only sections ``document`` carries."""
    return [IGNORED[key] for key in IGNORED if key in document]


def _section(desk: CardDesk, ctx: ActionContext, key: str, tool: str, arguments: dict[str, Any]) -> Section:
    action = desk.registry.action(tool)
    args = parse(action, arguments)  # the argument checker: unknown keys, types, bounds
    workspace = ctx.workspace
    if isinstance(action, standing_grants.SetStandingGrantsNever):
        same = action.normal(args.rules) == tuple(standing_grants.rules_of(workspace))
    elif isinstance(action, quorum_rules.SetQuorumRules):
        same = canonical_json(action.normal(args, ctx)) == canonical_json(quorum_rules.rules_of(workspace))
    elif isinstance(action, escalation.SetEscalationRules):
        current = quorum_rules.parse_text(workspace.settings.get(escalation.SETTING))
        same = canonical_json(action.normal(args, ctx)) == canonical_json(current)
    elif key == "lifetimes":
        try:
            same = lifetimes.as_text(lifetimes.normal(args.rules, "rules")) == (workspace.setting(LIFETIMES) or "")
        except lifetimes.LifetimeError as exc:
            raise ActionError(" ".join(f"{path}: {text}" for path, text in exc.problems), field="rules") from None
    else:
        same = args.policy == policy_of(workspace)
    if same:
        return Section(key, tool, why="unchanged")
    return Section(key, tool, Question.of(action, arguments, ctx))


_ENDINGS = re.compile(r"\s*Nothing was (written|changed|granted)\.\s*$")


def _at(key: str, argument: str, message: str) -> str:
    """The request's sentence with its argument's paths named as the document names them
    (``rules[1].needs`` → ``quorum[1].needs``), and that nothing was filed."""
    named = re.sub(rf"(?<![\w.\[]){argument}(?=[\[.:])", key, message)
    return _ENDINGS.sub("", named).rstrip() + " Nothing was filed."
