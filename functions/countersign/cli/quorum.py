"""``countersign quorum`` and ``countersign escalation``: the workspace's quorum and escalation rules
(docs/policy.md, "Quorum", "Escalation"). ``list`` shows them in words; ``set`` files the owner's
change of them as a held request that the owner confirms on the page (nothing changes until then)."""

from __future__ import annotations

import json
import sys

from .common import command_desk, member, store_options


def cmd_quorum(args) -> int:
    """List the quorum rules, or file a held request that sets them."""
    # When the command runs, not at the CLI's start (the gate's modules).
    from ..core.askers import COMMAND_LINE
    from ..gate import escalation
    from ..gate.question import Question
    from ..gate.quorum_rules import SetQuorumRules, parse_text, rule_words
    from ..toolkit import ActionError

    kind = args.command  # quorum | escalation
    desk = command_desk(args, files_cards=args.action != "list")
    person = member(desk.store, args.email, may=None if args.action == "list" else lambda p: p.role == "owner",
                    refusal=f"only the workspace's owner sets its {kind} rules")
    if person is None:
        return 2
    workspace = desk.store.workspaces.get_workspace(person.workspace_id)
    setting, tool, words = (("quorum_rules", SetQuorumRules.name, rule_words) if kind == "quorum" else
                            (escalation.SETTING, escalation.SetEscalationRules.name, escalation.rule_words))
    if args.action == "list":
        members = desk.store.workspaces.list_persons(workspace.id)
        found = parse_text(workspace.settings.get(setting))
        print(json.dumps([{**rule, "words": words(rule, members)} for rule in found], indent=2))
        return 0
    try:
        rules = json.loads(args.rules)
    except ValueError as exc:
        print(f"error: --rules is not JSON ({exc})", file=sys.stderr)
        return 2
    try:
        ctx = desk.context(workspace.id, person, None, desk.now())
        q = Question.of(desk.registry.action(tool), {"rules": rules}, ctx)
        card, _ = desk.file(q, "page", COMMAND_LINE)
    except ActionError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    print(json.dumps({"confirmation_id": card.id, "title": card.title, "lines": list(card.lines),
                      "url": desk.card_url(card.id)}, indent=2))
    print("# nothing changes until the owner confirms it on the page", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    for kind, helptext, example in (
            ("quorum", "which held requests need several people's approval (each change is held)",
             '[{"name": "Big spends", "when": "over:500", "needs": 2, "of": ["owner", "admin"]}]'),
            ("escalation", "who is shown a card left unanswered, and after how long (each change is held)",
             '[{"name": "Slow answers", "when": "any", "after": 30, "add": ["admin"]}]')):
        family = sub.add_parser(kind, help=helptext)
        actions = family.add_subparsers(dest="action", required=True)
        for action, what in (("list", f"the workspace's {kind} rules, in words"),
                             ("set", f"file a request to set the {kind} rules (the owner confirms it on the page)")):
            one = actions.add_parser(action, help=what)
            one.add_argument("--email", required=True, help="the owner (set) or any member (list)")
            store_options(one)
            one.set_defaults(func=cmd_quorum)
            if action == "set":
                one.add_argument("--rules", required=True,
                                 help=f"every rule as it is to be, as JSON: '{example}' (an empty list: none)")
