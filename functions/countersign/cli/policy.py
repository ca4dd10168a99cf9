"""``countersign policy show | export | import | test``: a workspace's policy as one document (docs/policy.md,
"Policy as data"). ``export`` prints it as JSON, each section in the form its own setting or API
already uses; ``show`` prints the same in the words Settings uses; ``test`` says what would happen to
one call and which rule decided, by planning it with the deployment's tools and asking the same gate
functions a real call asks. These three only read: nothing is filed, run or written; the document
and its words are the confirm API's (``countersign.surfaces.api.policy``), which Settings → Policy
shows. ``import`` (:mod:`.policy_import`) files the owner's held cards that change the policy to a
document's."""

from __future__ import annotations

import json
import sys

from ..store.errors import BadInput, NotFound
from . import policy_import
from .common import member, reading_desk, store_options


def _workspace_and_viewer(desk, args):
    """The workspace ``--workspace`` names, or ``--email``'s, and that member (None for ``--workspace``).
    (None, None) once it has said why there is none."""
    if args.email:
        person = member(desk.store, args.email)
        if person is None:
            return None, None
        return desk.store.workspaces.get_workspace(person.workspace_id), person
    try:
        return desk.store.workspaces.get_workspace(args.workspace), None
    except (NotFound, BadInput):
        print(f"error: no workspace with id {args.workspace!r}", file=sys.stderr)
        return None, None


def cmd_policy(args) -> int:
    # imported when the command runs, not at the CLI's start (the gate, the API: ~0.3 s more on every command)
    from ..surfaces.api.policy import document, words

    desk = reading_desk(args)
    workspace, viewer = _workspace_and_viewer(desk, args)
    if workspace is None:
        return 2
    policy = document(desk, workspace, viewer)
    if args.action == "export":
        print(json.dumps(policy, indent=2, ensure_ascii=False))
    else:
        print("\n".join(words(desk, workspace, policy)))
    return 0


def cmd_policy_test(args) -> int:
    # imported when the command runs, not at the CLI's start (the gate, the API: ~0.3 s more on every command)
    from ..identity.principal import Principal
    from ..toolkit import ActionError

    desk = reading_desk(args)
    person = member(desk.store, args.email)
    if person is None:
        return 2
    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        print(f"error: --args is not JSON ({exc})", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("error: --args must be a JSON object of the tool's arguments", file=sys.stderr)
        return 2
    connection = _connection(desk, person, args.connection)
    if connection is None:
        return 2
    workspace = desk.store.workspaces.get_workspace(person.workspace_id)
    try:
        q = desk.question(Principal(workspace, person, connection), args.tool, arguments)
    except ActionError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    print("\n".join(verdict(desk, q)))
    return 0


def _connection(desk, person, connection_id: str | None):
    live = [c for c in desk.store.connections.list_connections(person.workspace_id, person.id) if not c.revoked]
    if connection_id:
        found = next((c for c in live if c.id == connection_id), None)
        if found is None:
            print(f"error: {person.email} has no live connection {connection_id!r}", file=sys.stderr)
        return found
    if len(live) == 1:
        return live[0]
    print(f"error: name the connection the call would come from with --connection ({person.email} has "
          f"{len(live) or 'no'} live connection{'s' if len(live) != 1 else ''})", file=sys.stderr)
    return None


def verdict(desk, q) -> list[str]:
    """What would happen to the planned call ``q``, and which rule decided, in words: each answer
    from the gate function a real call asks (nothing is filed or run)."""
    # imported when the command runs, not at the CLI's start (the gate, the API: ~0.3 s more on every command)
    from ..gate import escalation
    from ..gate.lifetimes import lifetime_of
    from ..gate.passkey_policy import DESCRIBED, policy_of
    from ..gate.quorum_rules import rule_words, snapshot
    from ..gate.standing_grants import covering
    from ..store.cards import MAX_AUDIENCE
    from ..toolkit import ActionError

    ctx = q.ctx
    lines = [f"{q.tool}: {q.plan.preview.title}"]
    if not q.gate.holds(q.args, ctx):
        lines.append(f"Runs at once: {q.tool} is of class {q.gate.kind} and this call is not held.")
        return lines
    grant, notes = covering(desk, q)
    if grant is not None:
        lines.append(f"Runs at once: covered by standing grant ‘{grant.name}’ ({grant.id}) for connection "
                     f"{ctx.connection.name} ({ctx.connection.id}); {grant.uses_left} of {grant.max_uses} uses left.")
        return [*lines, *(f"  {note}" for note in notes)]
    if q.allows_in_client:
        asked = "asked in the client when it can ask (form elicitation), else on the confirm page"
    else:
        why = ("the passkey policy" if q.needs_passkey else "a quorum rule" if q.quorum is not None
               else f"class {q.gate.kind}")
        asked = f"confirmed on the confirm page only ({why})"
    lines.append(f"Held for a person (class {q.gate.kind}): {asked}.")
    if notes:
        lines += [f"  {note}" for note in notes]
    elif q.action.grantable:
        lines.append(f"  No standing grant of connection {ctx.connection.name} ({ctx.connection.id}) "
                     f"covers {q.tool}.")
    policy = policy_of(ctx.workspace)
    lines.append(f"Needs the person's passkey (passkey policy {policy}: {DESCRIBED[policy]})." if q.needs_passkey
                 else f"No passkey needed (passkey policy {policy}).")
    members = ctx.members()
    if q.quorum is not None:
        lines.append(f"Quorum rule applies: {rule_words(q.quorum, members)}.")
        try:
            snapshot(q.quorum, members, ctx.person.id, MAX_AUDIENCE)
        except ActionError as exc:
            lines.append(f"  Refused when filed: {exc.message}")
    else:
        lines.append("No quorum rule covers it: one person's yes runs it.")
    lifetime = lifetime_of(ctx.workspace, q.action, q.gate, desk.settings.card_ttl)
    decided = lifetime.decided
    lines.append(f"Its card {lifetime.words()} (lifetime rules: wait {decided['wait']}, reminder "
                 f"{decided['remind_before']}, lapse {decided['lapse']}).")
    text = ctx.workspace.settings.get(escalation.SETTING)
    steps = escalation.steps_for(text, q.action, q.gate, q.plan.subject, ctx.now) if text else None
    if steps is None:
        lines.append("No escalation rule covers it.")
    else:
        rules = {r.get("id"): r for r in escalation.parse_text(text)}
        lines += [f"Escalation: {escalation.rule_words(rules.get(s['rule']) or s, members)}." for s in steps["steps"]]
    return lines


def add_parser(sub) -> None:
    family = sub.add_parser("policy", help="the workspace's policy as one document: show, export, import, test a call")
    actions = family.add_subparsers(dest="action", required=True)
    for action, what in (("show", "the workspace's policy in words"),
                         ("export", "the workspace's policy as one JSON document")):
        one = actions.add_parser(action, help=what)
        which = one.add_mutually_exclusive_group(required=True)
        which.add_argument("--workspace", help="the workspace's id")
        which.add_argument("--email", help="a member (the standing grants listed: theirs, or all for an owner/admin)")
        store_options(one)
        one.set_defaults(func=cmd_policy)
    policy_import.add_parser(actions)
    test = actions.add_parser("test", help="what would happen to one call, and which rule decided (nothing runs)")
    test.add_argument("--email", required=True, help="the member the call would be made for")
    test.add_argument("--connection", help="the connection it would come from (default: the member's only one)")
    test.add_argument("--tool", required=True, help="the tool")
    test.add_argument("--args", required=True, help='its arguments as JSON: \'{"amount": "450.00"}\'')
    store_options(test)
    test.set_defaults(func=cmd_policy_test)
