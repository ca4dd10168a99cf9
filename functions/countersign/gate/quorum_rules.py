"""Quorum rules: which held requests need more than one person's yes, and whose (docs/policy.md,
"Quorum").

A rule is ``{"id", "name", "when", "needs", "of", "decline"}``, kept in the workspace setting
``quorum_rules`` (canonical JSON text):

* ``when`` — what it covers, in the words of the standing grants' owner rules: ``tool:<name>``,
  ``class:<always|client|setting|when>``, ``risky`` (spends, sends, grants or cannot be undone),
  ``over:<amount>`` (an amount over it, in the tool's own unit, read from the plan's subject as a
  standing grant reads it: :class:`~countersign.toolkit.AmountBound`), or ``any`` held request.
* ``needs`` — how many approvals (1 to :data:`MAX_NEEDS`); ``of`` — who may give them: roles
  (``owner``, ``admin``, ``approver``, ``member``) and members (``person:<id>``).
* ``decline`` — ``any`` (one no ends it) or ``majority`` (it ends when more than half of those who
  may approve said no, or when too few are left to reach ``needs``).

This module is pure: it parses, checks and matches rules, and names who they let approve. The
held request that changes them is :class:`SetQuorumRules`; the votes are :mod:`.quorum`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, Literal

from pydantic import Field

from ..core.canonical import canonical_json, digest
from ..core.preview import Preview
from ..store.workspaces import ROLES, Person, Workspace
from ..toolkit import ALWAYS, Action, ActionContext, ActionError, AmountBound, Arguments, Plan, Toolset
from .owner_settings import OwnerSettingChange
from .passkey_policy import is_risky

SETTING = "quorum_rules"
MAX_RULES = 20
MAX_NEEDS = 10
CLASSES = ("always", "client", "setting", "when")
DECLINES = ("any", "majority")
PLURAL = {"owner": "owners", "admin": "admins", "approver": "approvers", "member": "members"}
DECLINE_WORDS = {"any": "one no declines it", "majority": "a majority's no declines it"}


def rules_of(workspace: Workspace) -> list[dict[str, Any]]:
    """The workspace's quorum rules (none if the setting is unset or unreadable)."""
    return parse_text(workspace.settings.get(SETTING))


def parse_text(text: Any) -> list[dict[str, Any]]:
    if not isinstance(text, str) or not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def amount_of(action: Action, subject: Any) -> int | None:
    """The call's amount in thousandths of the tool's unit, as a standing grant reads it (None: the
    tool declares no amount)."""
    bound = next((b for b in action.grantable if isinstance(b, AmountBound)), None)
    if bound is None:
        return None
    try:
        return bound.amount(subject)
    except Exception:  # noqa: BLE001 (a subject without its amount: no amount to compare)
        return None


def threshold(when: str) -> int:
    return int(Decimal(when[5:]) * 1000)


def covers(rule: dict[str, Any], action: Action, gate: Any, subject: Any) -> bool:
    """Whether ``rule`` covers a call of ``action`` of class ``gate`` planned as ``subject``."""
    when = str(rule.get("when", ""))
    if when == "any":
        return True
    if when == f"tool:{action.name}":
        return True
    if when == f"class:{gate.kind}":
        return True
    if when == "risky":
        return is_risky(action, gate)
    if when.startswith("over:"):
        amount = amount_of(action, subject)
        try:
            return amount is not None and amount > threshold(when)
        except (InvalidOperation, ValueError):
            return False
    return False


def rule_for(text: str, action: Action, gate: Any, subject: Any) -> dict[str, Any] | None:
    """The rule (of the setting's ``text``) a call falls under: of those that cover it, the one that
    needs the most approvals (the first of them on a tie); None if none covers it."""
    found = [r for r in parse_text(text) if covers(r, action, gate, subject)]
    return max(found, key=lambda r: int(r.get("needs", 0)), default=None)


# -- who may approve ---------------------------------------------------------------------------------


def qualifies(rule: dict[str, Any], person: Person) -> bool:
    """Whether ``person``, as they are now, is one of whom ``rule`` lets approve."""
    of = rule.get("of") or []
    return person.role in of or f"person:{person.id}" in of


def eligible(rule: dict[str, Any], members: Iterable[Person]) -> list[Person]:
    return [p for p in members if qualifies(rule, p)]


def who_words(of: Iterable[str], members: Iterable[Person]) -> str:
    """``owners, admins``; a member by name (or email)."""
    names = {f"person:{p.id}": p.name or p.email for p in members}
    return ", ".join(PLURAL.get(x, names.get(x, x)) for x in of)


def when_words(when: str, amount_shown: Callable[[int], str] | None = None) -> str:
    if when == "any":
        return "every held request"
    if when.startswith("tool:"):
        return when[5:]
    if when.startswith("class:"):
        return f"requests of class {when[6:]}"
    if when == "risky":
        return "what spends, sends, grants or cannot be undone"
    shown = amount_shown or (lambda milli: f"{Decimal(milli) / 1000:f}")
    return f"an amount over {shown(threshold(when))}"


def rule_words(rule: dict[str, Any], members: Iterable[Person]) -> str:
    """``Big spends: an amount over 500 needs 2 of owners, admins; one no declines it``."""
    decline = DECLINE_WORDS["any" if rule.get("decline", "any") == "any" else "majority"]
    return (f"{rule.get('name') or rule.get('id')}: {when_words(str(rule.get('when')))} needs "
            f"{rule.get('needs')} of {who_words(rule.get('of') or [], members)}; {decline}")


def snapshot(rule: dict[str, Any], members: list[Person], person_id: str,
             max_audience: int) -> tuple[dict[str, Any], tuple[str, ...]]:
    """What a card filed under ``rule`` keeps of it (``Card.quorum``), and its audience: those the rule
    lets approve now, but its own person (``person_id``), who sees it anyway; at most ``max_audience``
    of them, the longest-standing members first. :class:`ActionError` (nothing is filed) when fewer
    than it needs are left (members removed since the rule was set)."""
    can = eligible(rule, sorted(members, key=lambda p: (p.created_at, p.id)))
    needs = int(rule.get("needs", 1))
    of = list(rule.get("of") or [])
    if len(can) < needs:
        raise ActionError(
            f"This request falls under the quorum rule ‘{rule.get('name')}’, which needs {needs} approvals of "
            f"{who_words(of, members)}, and only {len(can)} member{' is' if len(can) == 1 else 's are'} one of them "
            "now. Nothing was filed; ask the workspace's owner to change the rule.", field="tool")
    audience = tuple(p.id for p in can if p.id != person_id)[:max_audience]
    quorum = {"rule": rule.get("id"), "name": rule.get("name"), "needs": needs, "of": of,
              "words": who_words(of, members), "decline": rule.get("decline", "any"),
              "eligible": [p.id for p in can if p.id == person_id or p.id in audience]}
    return quorum, audience


def approvers(votes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The yes votes, in order."""
    return [v for v in votes if v.get("vote") == "yes"]


def approved_words(quorum: dict[str, Any], votes: Iterable[dict[str, Any]]) -> str:
    """The confirming audit entry's words: ``2 of 2 approvals (quorum ‘Big spends’): Ana Costa, Bo Li``."""
    yes = approvers(votes)
    return (f"{len(yes)} of {quorum.get('needs')} approvals (quorum ‘{quorum.get('name')}’): "
            + ", ".join(str(v.get("name") or v.get("by")) for v in yes))


# -- set_quorum_rules: changing the rules is itself a held request -----------------------------------------


class RuleArgs(Arguments):
    id: str | None = Field(default=None, max_length=40, description="Kept when a rule is changed; new rules get one")
    name: str = Field(min_length=1, max_length=60, description="What the workspace calls it")
    when: str = Field(min_length=1, max_length=140,
                      description="tool:<name>, class:<always|client|setting|when>, risky, over:<amount> or any")
    needs: int = Field(ge=1, le=MAX_NEEDS, description="How many approvals it takes")
    of: list[str] = Field(min_length=1, max_length=30,
                          description="Who may approve: roles (owner, admin, approver, member) and person:<id>")
    decline: Literal["any", "majority"] = Field(default="any", description="any: one no ends it; majority")


class QuorumArgs(Arguments):
    rules: list[RuleArgs] = Field(max_length=MAX_RULES, description="Every rule, as it is to be (an empty list: none)")


class RuleListChange(OwnerSettingChange):
    """An owner's held change of a workspace setting that is a JSON list of rules (the quorum rules,
    the escalation rules): the plan refuses a non-owner, checks every rule (:meth:`normal`, the
    subclass's), refuses a list equal to the current one, and previews each rule in its words
    (:meth:`rule_words`) or ``no_rules`` when none, then ``after_lines``. ``tool_of`` finds the
    action of a tool an agent may call (given by the runtime)."""

    rules_noun: ClassVar[str]  # "quorum rules"
    no_rules: ClassVar[str]  # the preview's one line when the list is empty
    after_lines: ClassVar[tuple[str, ...]] = ()

    def __init__(self, tool_of: Callable[[str], Action]):
        self.tool_of = tool_of

    def plan(self, args: Any, ctx: ActionContext) -> Plan:
        self.refuse_unless_owner(ctx)
        members = ctx.members()
        current = ctx.workspace.settings.get(self.setting) or "[]"
        rules = self.normal(args, ctx, members)
        text = canonical_json(rules)
        if text == canonical_json(parse_text(current)):
            raise ActionError(f"rules: these are the {self.rules_noun} already; nothing was changed.", field="rules")
        lines = [self.rule_words(r, members) for r in rules] or [self.no_rules]
        title = f"Set the {self.rules_noun}: {len(rules)} rule{'s' if len(rules) != 1 else ''}"
        return self.change(current, text, Preview(title, [*lines, *self.after_lines]))

    def normal(self, args: Any, ctx: ActionContext, members: list[Person] | None = None
               ) -> list[dict[str, Any]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def rule_words(self, rule: dict[str, Any], members: list[Person]) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def result(self, after: str) -> dict[str, Any]:
        return {"rules": len(parse_text(after))}

    def outcome_lines(self, result: dict) -> list[str]:
        n = result["rules"]
        return [f"The workspace now has {n} {self.rules_noun.removesuffix('s')}{'s' if n != 1 else ''}"]


def check_who(where: str, given: Iterable[str], members: Iterable[Person]) -> list[str]:
    """``given`` (roles and ``person:<id>``), each once, in order; :class:`ActionError` naming
    ``where`` for one that is neither a role nor a member of this workspace."""
    ids = {p.id for p in members}
    out: list[str] = []
    for x in given:
        if not (x in ROLES or (x.startswith("person:") and x[7:] in ids)):
            raise ActionError(f"{where}: {x[:60]!r} is neither a role ({', '.join(ROLES)}) nor person:<id> of a "
                              "member of this workspace. Nothing was changed.", field=where)
        if x not in out:
            out.append(x)
    return out


class SetQuorumRules(RuleListChange):
    """The held request that sets the workspace's quorum rules (the owner only). ``tool_of`` finds
    the action of a tool an agent may call (given by the runtime)."""

    name = "set_quorum_rules"
    setting = SETTING
    owner_can = "set its quorum rules"
    title = "Preparing a change of the quorum rules"
    description = ("Set which held requests need several people's approval, and whose (the workspace owner only). "
                   "Filed from the confirm page or the command line.")
    arguments = QuorumArgs
    gate = ALWAYS
    destructive = True  # who must agree to what: authority, risky under a passkey policy of risky
    agent_tool = False
    drift_message = "The quorum rules or the workspace's members changed between the preview and the answer; " \
                    "nothing was changed."
    rules_noun = "quorum rules"
    no_rules = "No quorum: one person's yes runs a request, as before"
    after_lines = ("Each approval is its own act, audited (with a passkey where the policy asks); the request runs "
                   "once, at the last one needed",)

    def normal(self, args: QuorumArgs, ctx: ActionContext, members: list[Person] | None = None
               ) -> list[dict[str, Any]]:
        """The rules as the setting would keep them (each checked; a kept rule keeps its id, a new
        one gets its content's); :class:`ActionError` naming the first rule that is refused."""
        members = ctx.members() if members is None else members
        kept = {r.get("id") for r in rules_of(ctx.workspace)}
        rules = [self._rule(f"rules[{i}]", given, members, kept) for i, given in enumerate(args.rules)]
        ids = [r["id"] for r in rules]
        if len(set(ids)) != len(ids):
            raise ActionError("rules: two rules have the same id; nothing was changed.", field="rules")
        return rules

    def rule_words(self, rule: dict[str, Any], members: list[Person]) -> str:
        return rule_words(rule, members)

    def _rule(self, where: str, given: RuleArgs, members: list[Person], kept: set[Any]) -> dict[str, Any]:
        when = given.when.strip()
        check_when(f"{where}.when", when, self.tool_of)
        of = check_who(f"{where}.of", given.of, members)
        rule: dict[str, Any] = {"name": " ".join(given.name.split()), "when": when, "needs": given.needs,
                                "of": of, "decline": given.decline}
        # a rule kept keeps its id; a new one's is its content's (the same plan at the Confirm: no drift)
        rule = {"id": given.id if given.id in kept else "q_" + digest(rule)[:12], **rule}
        can = eligible(rule, members)
        if len(can) < given.needs:
            raise ActionError(
                f"{where}.needs: no one in the workspace can satisfy this rule: it needs {given.needs} approval"
                f"{'s' if given.needs != 1 else ''} of {who_words(of, members)}, and {len(can)} "
                f"member{' is' if len(can) == 1 else 's are'} one of them. Nothing was changed.",
                field=f"{where}.needs")
        return rule


def check_when(where: str, when: str, tool_of: Callable[[str], Action]) -> None:
    """:class:`ActionError` unless ``when`` says what a rule covers; a tool must be one agents may call."""
    if when in ("any", "risky") or when in (f"class:{c}" for c in CLASSES):
        return
    if when.startswith("tool:"):
        try:
            tool_of(when[5:])
        except ActionError:
            raise ActionError(f"{where}: there is no tool {when[5:][:64]!r} here, so no rule can be for it. Nothing "
                              "was changed.", field=where) from None
        return
    if when.startswith("over:"):
        try:
            amount = Decimal(when[5:])
        except InvalidOperation:
            amount = Decimal(-1)
        if amount.is_finite() and amount >= 0 and amount == amount.quantize(Decimal("0.001")) and amount < 10**12:
            return
        raise ActionError(f"{where}: {when[5:][:40]!r} is not an amount (over:500, over:99.50).", field=where)
    raise ActionError(f"{where}: {when[:60]!r} is not something a rule can cover: tool:<name>, class:<always, client, "
                      "setting or when>, risky, over:<amount> or any.", field=where)


def toolset(tool_of: Callable[[str], Action]) -> Toolset:
    """The quorum rules' toolset every deployment serves (its one action is no MCP tool)."""
    return Toolset("quorum", actions=[SetQuorumRules(tool_of)])
