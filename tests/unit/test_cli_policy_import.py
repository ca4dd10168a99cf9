"""``countersign policy import FILE``: the document ``policy export`` writes, checked whole first (a
refused document files nothing, exit 2), then, for each section that differs from the workspace's
policy, the held owner card that changes it; nothing changes until the owner confirms. On a real
local store, SQLite and DynamoDB (moto), through the command line as a person runs it."""

from __future__ import annotations

import contextlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from countersign import cli, settings as settings_mod
from countersign.core.card_states import CardState
from countersign.gate import clicks
from countersign.identity import accounts
from countersign.runtime import build
from countersign.surfaces.local.demo import seed_demo
from tests.support.aws import boto_session, create_table_from_template
from tests.support.stores import principal_by_token

BIG_BUDGETS = {"id": "q_big", "name": "Big budgets", "when": "over:500", "needs": 2, "of": ["owner", "admin"],
               "decline": "any"}
SLOW = {"id": "e_slow", "name": "Slow answers", "when": "any", "after": 30, "add": ["admin"]}


@dataclass
class Demo:
    runtime: Any
    email: str
    principal: Any
    where: list[str]  # --data (and --store) as the command is given them
    folder: Path

    def run(self, capsys, *argv: str) -> tuple[int, str, str]:
        code = cli.main([*argv, *self.where])
        out = capsys.readouterr()
        return code, out.out, out.err

    def export(self, capsys) -> dict[str, Any]:
        code, out, err = self.run(capsys, "policy", "export", "--email", self.email)
        assert code == 0, err
        return json.loads(out)

    def load(self, capsys, document: Any, *options: str, name: str = "policy.json") -> tuple[int, list[str], str]:
        path = self.folder / name
        path.write_text(document if isinstance(document, str) else json.dumps(document, indent=2))
        code, out, err = self.run(capsys, "policy", "import", str(path), "--email", self.email, *options)
        return code, out.splitlines(), err

    def waiting(self) -> list:
        cards, _ = self.runtime.store.cards.list_pending_cards(self.principal.workspace.id, self.principal.person.id,
                                                               self.runtime.desk.now())
        return cards

    def setting(self, **changes) -> None:
        self.runtime.store.workspaces.update_workspace_settings(self.principal.workspace.id, changes)


@contextlib.contextmanager
def _store(kind: str, data: Path):
    if kind == "sqlite":
        yield {"COUNTERSIGN_DATA": str(data)}, ["--data", str(data)]
        return
    from moto import mock_aws

    name = f"countersign-test-{uuid.uuid4().hex[:8]}"
    with mock_aws():
        create_table_from_template(boto_session().client("dynamodb", region_name="eu-west-1"), name)
        store = f"dynamodb://{name}"
        yield {"COUNTERSIGN_DATA": str(data), "COUNTERSIGN_STORE": store}, ["--data", str(data), "--store", store]


@pytest.fixture(params=["sqlite", "dynamodb"])
def demo(request, tmp_path, clean_env):
    with _store(request.param, tmp_path / "data") as (env, where):
        runtime = build(settings_mod.load(env))
        info = seed_demo(runtime)
        principal = principal_by_token(runtime.store, info["agent_token"])
        # A second owner-or-admin, so that a quorum of 2 of owners and admins can be met.
        accounts.add_person(runtime.store.workspaces, principal.workspace.id, "bea@example.com", "admin", "Bea")
        demo = Demo(runtime, info["person_email"], principal, where, tmp_path)
        demo.setting(standing_grants_never=["tool:buy_credits"], quorum_rules=json.dumps([BIG_BUDGETS]),
                     escalation_rules=json.dumps([SLOW]))
        yield demo


def test_an_unchanged_workspace_files_nothing(capsys, demo):
    document = demo.export(capsys)
    code, lines, err = demo.load(capsys, document)
    assert code == 0, err
    assert lines == ["passkeyPolicy: unchanged", "standingGrantsNever: unchanged", "lifetimes: unchanged",
                     "quorum: unchanged", "escalation: unchanged",
                     "editable: what a person may change on a card is declared by each tool, not set by policy; "
                     "ignored.",
                     "standingGrants: read-only: a standing grant is made only by its person confirming its card (on "
                     "the page, or filed by `countersign grants grant`) and ended by `countersign grants revoke`; "
                     "ignored."]
    assert err == "# nothing to file: the document is the workspace's policy already\n"
    assert demo.waiting() == []
    assert demo.export(capsys) == document


EDITS = {
    "passkeyPolicy": ("risky", "set_passkey_policy"),
    "standingGrantsNever": (["tool:buy_credits", "over:900"], "set_standing_grants_never"),
    "lifetimes": ({"risky": {"wait": "2h", "remind_before": "30m"}}, "set_card_lifetimes"),
    "quorum": ([{**BIG_BUDGETS, "needs": 1}], "set_quorum_rules"),
    "escalation": ([{**SLOW, "after": 45}], "set_escalation_rules"),
}


@pytest.mark.parametrize("section", EDITS)
def test_one_edited_section_files_one_card_that_once_confirmed_makes_the_export_the_document(capsys, demo, section):
    document = demo.export(capsys)
    value, tool = EDITS[section]
    edited = {**document, section: value}

    code, lines, err = demo.load(capsys, edited, "--dry-run")
    assert code == 0, err
    assert [line for line in lines if line.startswith(section)] == [
        f"{section}: would file “{_title(section)}” ({tool}) for {demo.email} to confirm"]
    assert err == "# dry run: nothing was filed (1 card would be)\n"
    assert demo.waiting() == []

    code, lines, err = demo.load(capsys, edited)
    assert code == 0, err
    [card] = demo.waiting()
    assert (card.tool, card.title) == (tool, _title(section))
    assert lines[list(EDITS).index(section)] == (
        f"{section}: filed “{card.title}” ({card.id}); it waits for the owner's confirmation ({demo.email}) on the "
        f"page: {demo.runtime.desk.card_url(card.id)}")
    assert sum(line.endswith(": unchanged") for line in lines) == 4
    assert err == "# 1 card filed; nothing changes until the owner confirms each on the page\n"
    assert demo.export(capsys) == document  # nothing changed yet

    # Imported again before it is confirmed: the same card, not a second one.
    code, lines, _ = demo.load(capsys, edited)
    assert code == 0 and [c.id for c in demo.waiting()] == [card.id]
    assert f"{section}: a card for exactly this change waits already ({card.id})" in lines[list(EDITS).index(section)]

    done = clicks.confirm_click(demo.runtime.desk, demo.principal.workspace.id, demo.principal.person, card.id)
    assert done.state is CardState.COMPLETED, done
    assert demo.export(capsys) == edited
    code, lines, _ = demo.load(capsys, edited)
    assert code == 0 and demo.waiting() == [] and lines[list(EDITS).index(section)] == f"{section}: unchanged"


def _title(section: str) -> str:
    return {"passkeyPolicy": "Require a passkey to confirm: for cards that spend, send, grant or cannot be undone",
            "standingGrantsNever": "Change what no standing grant may cover",
            "lifetimes": "Change how long cards wait, their reminders and what a lapse means",
            "quorum": "Set the quorum rules: 1 rule",
            "escalation": "Set the escalation rules: 1 rule"}[section]


def test_every_changed_section_files_its_own_card(capsys, demo):
    document = demo.export(capsys)
    edited = {**document, **{section: value for section, (value, _) in EDITS.items()}}
    code, lines, err = demo.load(capsys, edited)
    assert code == 0, err
    assert sorted(c.tool for c in demo.waiting()) == sorted(tool for _, tool in EDITS.values())
    assert err == "# 5 cards filed; nothing changes until the owner confirms each on the page\n"


def test_a_section_left_out_is_left_as_it_is(capsys, demo):
    code, lines, err = demo.load(capsys, {"version": 1, "quorum": []})
    assert code == 0, err
    assert lines == ["passkeyPolicy: not in the document: left as it is",
                     "standingGrantsNever: not in the document: left as it is",
                     "lifetimes: not in the document: left as it is",
                     f"quorum: filed “Set the quorum rules: 0 rules” ({demo.waiting()[0].id}); it waits for the "
                     f"owner's confirmation ({demo.email}) on the page: "
                     f"{demo.runtime.desk.card_url(demo.waiting()[0].id)}",
                     "escalation: not in the document: left as it is"]


@pytest.mark.parametrize("change, problems", [
    ({"quorum": [BIG_BUDGETS, {"name": "Every spend", "when": "tool:publish_nothing", "needs": 1, "of": ["owner"]}]},
     ["quorum[1].when: there is no tool 'publish_nothing' here, so no rule can be for it. Nothing was filed."]),
    ({"quorum": [BIG_BUDGETS, {"name": "All", "when": "any", "needs": 1, "of": ["owner"], "size": 3}]},
     ["quorum[1].size: there is no field named ‘size’; the known names are decline, id, name, needs, of, when. "
      "Nothing was filed."]),
    ({"quorum": [{**BIG_BUDGETS, "needs": 3}]},
     ["quorum[0].needs: no one in the workspace can satisfy this rule: it needs 3 approvals of owners, admins, and "
      "2 members are one of them. Nothing was filed."]),
    ({"quorum": [{**BIG_BUDGETS, "of": ["owner", "chief"]}]},
     ["quorum[0].of: 'chief' is neither a role (owner, admin, approver, member) nor person:<id> of a member of this "
      "workspace. Nothing was filed."]),
    ({"escalation": [{**SLOW, "add": ["person:p_nobody"]}]},
     ["escalation[0].add: 'person:p_nobody' is neither a role (owner, admin, approver, member) nor person:<id> of a "
      "member of this workspace. Nothing was filed."]),
    ({"standingGrantsNever": ["tool:buy_credits", "tool:publish_nothing"]},
     ["standingGrantsNever[1]: there is no tool 'publish_nothing' here, so no rule can be for it. Nothing was "
      "filed."]),
    ({"standingGrantsNever": ["any"]},
     ["standingGrantsNever[0]: 'any' is not a rule of what no grant may cover: tool:<name>, class:<always, client, "
      "setting or when>, risky, or over:<amount>. Nothing was filed."]),
    ({"passkeyPolicy": "sometimes"}, ["passkeyPolicy: must be one of 'never', 'risky' or 'every'. Nothing was filed."]),
    ({"lifetimes": {"risky": {"wait": "1m", "snooze": "5m"}}},
     ["lifetimes.risky.snooze: unknown field; a rule sets wait, remind_before or lapse. lifetimes.risky.wait: must be "
      "from 5 minutes to 7 days, such as 30m, 2h or 7d. Nothing was filed."]),
    ({"version": 2}, ["version: this reads policy documents of version 1; the document says 2. Nothing was filed."]),
    ({"grants": []}, ["grants: not a section of a policy document; its sections are version, passkeyPolicy, "
                      "standingGrantsNever, lifetimes, quorum, escalation, editable, standingGrants. Nothing was "
                      "filed."]),
    # Every problem is named, and the valid change beside them is not filed either.
    ({"passkeyPolicy": "every", "quorum": [{**BIG_BUDGETS, "needs": 0}], "escalation": [{**SLOW, "after": 0}]},
     ["quorum[0].needs: must be at least 1. Nothing was filed.",
      "escalation[0].after: must be at least 1. Nothing was filed."]),
])
def test_a_refused_document_names_each_path_and_files_nothing(capsys, demo, change, problems):
    document = demo.export(capsys)
    code, lines, err = demo.load(capsys, {**document, **change})
    said = err.splitlines()
    assert (code, lines) == (2, [])
    assert len(said) == len(problems)
    for line, problem in zip(said, problems, strict=True):
        assert line.startswith(f"error: {problem}"), line
    assert demo.waiting() == []
    assert demo.export(capsys) == document


def test_only_the_owner_imports(capsys, demo):
    document = demo.export(capsys)
    code, lines, err = demo.run(capsys, "policy", "import", _write(demo, {**document, "passkeyPolicy": "every"}),
                                "--email", "bea@example.com")
    assert code == 2
    assert err == ("error: Only the workspace's owner imports its policy (each change is a card the owner confirms); "
                   "bea@example.com is admin. Nothing was filed.\n")
    assert demo.waiting() == []


def _write(demo: Demo, document: Any) -> str:
    path = demo.folder / "other.json"
    path.write_text(json.dumps(document))
    return str(path)


@pytest.mark.parametrize("text, name, message", [
    ("passkeyPolicy: risky\n", "policy.yaml", "(YAML is not read: write the document as JSON); `policy import` reads "
                                              "the document `countersign policy export` writes. Nothing was filed."),
    ("{", "policy.json", "; `policy import` reads the document `countersign policy export` writes. Nothing was "
                         "filed."),
    ("[1]", "policy.json", "the document is not a JSON object of policy sections, as `countersign policy export` "
                           "writes it. Nothing was filed."),
])
def test_a_file_that_is_no_policy_document_is_refused(capsys, demo, text, name, message):
    code, lines, err = demo.load(capsys, text, name=name)
    assert (code, lines) == (2, [])
    assert err.startswith("error: ") and err.rstrip("\n").endswith(message), err
    assert demo.waiting() == []
