"""Escalation: a card left unanswered is shown to more people (docs/policy.md, "Escalation").

A rule ``{"id", "name", "when", "after", "add"}`` in the workspace setting ``escalation_rules``
(canonical JSON text) says: a held request ``when`` covers (as a quorum rule's ``when``:
:mod:`.quorum_rules`) that is still unanswered ``after`` minutes is added to the waiting list of
``add`` — members (``person:<id>``) and roles (every member who has it then) — and they are told
by email. They may then answer it as its person may (under a quorum, approve only if the rule names
them).

* **When a card is filed** (:func:`steps_for`, from :func:`~.new_cards.new_card`) the rules that
  cover it become its escalation steps, fixed then (``Card.escalation``), and the first is due at
  ``escalate_at``.
* **The sweep** (:func:`.escalation_sweep.escalate_due`) takes each pending card whose step is due, resolves who the
  due steps add (as the workspace's members are then), and writes them into its audience with
  the steps done, an ``escalated`` audit entry and an email owed to each, by one conditional write
  on the card's version (:meth:`~countersign.store.cards.CardStore.amend_card`): a card answered or
  changed meanwhile is left to the next sweep, which finds it answered or still due.

Changing the rules is a held request of the owner (``set_escalation_rules``). Nothing here reads a
clock: every time is the caller's ``now`` (the sweeper's, a test's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from ..core.canonical import digest
from ..store.workspaces import Person
from ..toolkit import ALWAYS, Action, ActionContext, ActionError, Arguments, Toolset
from .quorum_rules import RuleListChange, check_when, check_who, covers, parse_text, when_words, who_words

SETTING = "escalation_rules"
MAX_RULES = 20
MAX_MINUTES = 7 * 24 * 60


def steps_for(text: str, action: Action, gate: Any, subject: Any, created_at: int) -> dict[str, Any] | None:
    """The escalation steps of a card filed at ``created_at`` for a call the rules (``text``) cover,
    soonest first; None when none covers it."""
    steps = [{"rule": r.get("id"), "name": r.get("name"), "at": created_at + int(r.get("after", 0)) * 60,
              "after": int(r.get("after", 0)), "add": list(r.get("add") or [])}
             for r in parse_text(text) if covers(r, action, gate, subject)]
    if not steps:
        return None
    return {"steps": sorted(steps, key=lambda s: (s["at"], str(s["rule"]))), "done": 0}


def who(add: list[str], members: list[Person]) -> list[Person]:
    """The members ``add`` names now: each ``person:<id>`` still a member, everyone with each role."""
    return [p for p in members if p.role in add or f"person:{p.id}" in add]


# -- set_escalation_rules: a held request of the owner -----------------------------------------------------


class EscalationRuleArgs(Arguments):
    id: str | None = Field(default=None, max_length=40, description="Kept when a rule is changed; new rules get one")
    name: str = Field(min_length=1, max_length=60, description="What the workspace calls it")
    when: str = Field(default="any", min_length=1, max_length=140,
                      description="tool:<name>, class:<always|client|setting|when>, risky, over:<amount> or any")
    after: int = Field(ge=1, le=MAX_MINUTES, description="Minutes a card waits unanswered before it is escalated")
    add: list[str] = Field(min_length=1, max_length=30,
                           description="Who it is added to: roles (owner, admin, approver, member) and person:<id>")


class EscalationArgs(Arguments):
    rules: list[EscalationRuleArgs] = Field(max_length=MAX_RULES, description="Every rule, as it is to be")


class SetEscalationRules(RuleListChange):
    """The held request that sets the workspace's escalation rules (the owner only)."""

    name = "set_escalation_rules"
    setting = SETTING
    owner_can = "set its escalation rules"
    title = "Preparing a change of the escalation rules"
    description = ("Set who is shown a card left unanswered, and after how long (the workspace owner only). Filed "
                   "from the confirm page or the command line.")
    arguments = EscalationArgs
    gate = ALWAYS
    destructive = True  # who may answer what: authority
    agent_tool = False
    drift_message = "The escalation rules or the workspace's members changed between the preview and the answer; " \
                    "nothing was changed."
    rules_noun = "escalation rules"
    no_rules = "No escalation: a card waits on whom it waits on"

    def normal(self, args: EscalationArgs, ctx: ActionContext, members: list[Person] | None = None
               ) -> list[dict[str, Any]]:
        """The rules as the setting would keep them (each checked; a kept rule keeps its id, a new
        one gets its content's); :class:`ActionError` naming the first rule that is refused."""
        members = ctx.members() if members is None else members
        kept = {r.get("id") for r in parse_text(ctx.workspace.settings.get(SETTING))}
        rules = []
        for i, given in enumerate(args.rules):
            where = f"rules[{i}]"
            when = given.when.strip()
            check_when(f"{where}.when", when, self.tool_of)
            add = check_who(f"{where}.add", given.add, members)
            if not who(add, members):
                raise ActionError(f"{where}.add: no member of the workspace is {who_words(add, members)}, so this "
                                  "rule could add no one. Nothing was changed.", field=f"{where}.add")
            rule: dict[str, Any] = {"name": " ".join(given.name.split()), "when": when, "after": given.after,
                                    "add": add}
            rules.append({"id": given.id if given.id in kept else "e_" + digest(rule)[:12], **rule})
        return rules

    def rule_words(self, rule: dict[str, Any], members: list[Person]) -> str:
        return rule_words(rule, members)


def rule_words(rule: dict[str, Any], members: list[Person]) -> str:
    """``Slow approvals: every held request unanswered after 30 minutes is shown to admins too``."""
    return (f"{rule.get('name')}: {when_words(str(rule.get('when')))} unanswered after {rule.get('after')} minutes "
            f"is shown to {who_words(rule.get('add') or [], members)} too")


def toolset(tool_of: Callable[[str], Action]) -> Toolset:
    """The escalation rules' toolset every deployment serves (its one action is no MCP tool)."""
    return Toolset("escalation", actions=[SetEscalationRules(tool_of)])
