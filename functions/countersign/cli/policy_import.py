"""``countersign policy import FILE``: file, for each section of a policy document that differs from
the workspace's policy, the held owner card that changes it (docs/policy.md, "Policy as data"). The
whole document is checked first; a refused document files nothing (exit 2). Nothing changes until
the owner confirms each card on the page. ``--dry-run`` says what it would file, and files nothing.

The document is JSON, as ``countersign policy export`` writes it (no YAML: no YAML library is part
of countersign)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import command_desk, member, store_options


def _read(path: str):
    """The document in ``path``; None once it has said why there is none."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        yaml = " (YAML is not read: write the document as JSON)" if path.endswith((".yaml", ".yml")) else ""
        print(f"error: {path} is not JSON ({exc}){yaml}; `policy import` reads the document `countersign policy "
              "export` writes. Nothing was filed.", file=sys.stderr)
        return None


def cmd_policy_import(args) -> int:
    # When the command runs, not at the CLI's start (the gate's modules).
    from ..core.askers import COMMAND_LINE
    from ..gate.policy_import import PolicyRefused, ignored, plan_import

    document = _read(args.file)
    if document is None:
        return 2
    desk = command_desk(args, files_cards=True)
    person = member(desk.store, args.email)
    if person is None:
        return 2
    workspace = desk.store.workspaces.get_workspace(person.workspace_id)
    try:
        sections = plan_import(desk, workspace, person, document)
    except PolicyRefused as refused:
        for problem in refused.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    filed = 0
    for section in sections:
        q = section.question
        if q is None:
            print(f"{section.key}: {section.why}")
        elif args.dry_run:
            print(f"{section.key}: would file “{q.plan.preview.title}” ({section.tool}) for {person.email} to confirm")
        else:
            card, new = desk.file(q, "page", COMMAND_LINE)
            if new:
                desk.notify(card)
                filed += 1
                print(f"{section.key}: filed “{card.title}” ({card.id}); it waits for the owner's confirmation "
                      f"({person.email}) on the page: {desk.card_url(card.id)}")
            else:
                print(f"{section.key}: a card for exactly this change waits already ({card.id}); it waits for the "
                      f"owner's confirmation ({person.email}) on the page: {desk.card_url(card.id)}")
    for sentence in ignored(document):
        print(sentence)
    changed = sum(s.question is not None for s in sections)
    if args.dry_run:
        print(f"# dry run: nothing was filed ({changed} card{'s' if changed != 1 else ''} would be)", file=sys.stderr)
    elif changed:
        print(f"# {filed} card{'s' if filed != 1 else ''} filed; nothing changes until the owner confirms each on "
              "the page", file=sys.stderr)
    else:
        print("# nothing to file: the document is the workspace's policy already", file=sys.stderr)
    return 0


def add_parser(actions) -> None:
    """``import`` under ``countersign policy``."""
    one = actions.add_parser("import", help="file the owner's held cards that change the policy to a document's "
                                            "(nothing changes until each is confirmed)")
    one.add_argument("file", metavar="FILE",
                     help="the policy document, as `countersign policy export` writes it (JSON)")
    one.add_argument("--email", required=True, help="the workspace's owner, who files and confirms each card")
    one.add_argument("--dry-run", action="store_true", help="say what it would file, and file nothing")
    store_options(one)
    one.set_defaults(func=cmd_policy_import)
