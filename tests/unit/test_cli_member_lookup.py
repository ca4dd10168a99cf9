"""The member an ``--email`` names, as every command family looks it up: an address no member has is
refused in the same words everywhere, a member whose role may not run the command is refused in
the command's own words, and neither files a card or writes anything."""

from __future__ import annotations

import json
import time

import pytest

from countersign import cli, settings as settings_mod
from countersign.identity import accounts
from countersign.runtime import build
from countersign.surfaces.local.demo import seed_demo

NOBODY = "nobody@example.com"
RULES = json.dumps([{"name": "Big spends", "when": "any", "needs": 1, "of": ["owner"]}])
POLICY = json.dumps({"version": 1, "passkeyPolicy": "every"})


@pytest.fixture
def demo(tmp_path, clean_env):
    data = tmp_path / "data"
    runtime = build(settings_mod.load({"COUNTERSIGN_DATA": str(data)}))
    info = seed_demo(runtime)
    owner = runtime.store.workspaces.get_person_by_email(info["person_email"])
    accounts.add_person(runtime.store.workspaces, owner.workspace_id, "ada@example.com", "admin", "Ada")
    accounts.add_person(runtime.store.workspaces, owner.workspace_id, "max@example.com", "member", "Max")
    (tmp_path / "policy.json").write_text(POLICY)
    return str(data), runtime, owner, str(tmp_path / "policy.json")


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _commands(policy_file: str) -> list[list[str]]:
    return [
        ["quorum", "list"], ["quorum", "set", "--rules", RULES],
        ["escalation", "list"], ["escalation", "set", "--rules", "[]"],
        ["upstream", "list"], ["upstream", "remove", "files"],
        ["webhook", "list"],
        ["grants", "list"], ["grants", "grant", "--connection", "k_x", "--tool", "buy_credits", "--name", "Top-up",
                             "--uses", "1", "--days", "1"],
        ["policy", "show"], ["policy", "import", policy_file],
    ]


def _nothing_filed(runtime, owner) -> None:
    pending, _ = runtime.store.cards.list_pending_cards(owner.workspace_id, owner.id, int(time.time()))
    assert pending == []
    assert runtime.store.workspaces.get_workspace(owner.workspace_id).setting("quorum_rules") == "[]"


def test_an_address_no_member_has_is_refused_in_the_same_words_by_every_family(capsys, demo):
    data, runtime, owner, policy_file = demo
    for argv in _commands(policy_file):
        code, out, err = _run(capsys, *argv, "--data", data, "--email", NOBODY)
        assert (code, out, err) == (2, "", f"error: no member with email {NOBODY!r}\n"), argv
    _nothing_filed(runtime, owner)


@pytest.mark.parametrize("argv, email, refusal", [
    (["quorum", "set", "--rules", RULES], "ada@example.com", "only the workspace's owner sets its quorum rules"),
    (["escalation", "set", "--rules", "[]"], "max@example.com",
     "only the workspace's owner sets its escalation rules"),
    (["upstream", "list"], "max@example.com", "only a workspace's owners and admins manage its upstream servers"),
    (["upstream", "remove", "files"], "max@example.com",
     "only a workspace's owners and admins manage its upstream servers"),
    (["webhook", "list"], "ada@example.com", "Only the workspace's owners manage its webhooks."),
])
def test_a_member_whose_role_may_not_is_refused_in_the_commands_words(capsys, demo, argv, email, refusal):
    data, runtime, owner, _ = demo
    code, out, err = _run(capsys, *argv, "--data", data, "--email", email)
    assert (code, out, err) == (2, "", f"error: {refusal}\n")
    _nothing_filed(runtime, owner)


def test_any_member_lists_the_quorum_and_escalation_rules_and_the_owner_files_a_change(capsys, demo):
    data, runtime, owner, _ = demo
    for kind in ("quorum", "escalation"):
        code, out, err = _run(capsys, kind, "list", "--data", data, "--email", "max@example.com")
        assert (code, json.loads(out), err) == (0, [], "")
    code, out, err = _run(capsys, "quorum", "set", "--rules", RULES, "--data", data, "--email", owner.email)
    assert code == 0, err
    assert json.loads(out)["title"] == "Set the quorum rules: 1 rule"
    assert err == "# nothing changes until the owner confirms it on the page\n"
