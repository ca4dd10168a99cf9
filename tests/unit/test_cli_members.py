"""``countersign member list`` and ``member add``, and ``workspace create`` refusing an owner's
email that already belongs to a member without leaving a workspace behind."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from countersign import cli, settings as settings_mod
from countersign.runtime import build
from countersign.store.records import secret_hash
from tests.support.stores import principal_by_token

pytestmark = pytest.mark.usefixtures("clean_env")  # the CLI reads the environment (tests/unit/conftest.py)


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def data(tmp_path, capsys) -> str:
    """A data folder with one workspace, ``Acme``, owned by owner@example.com."""
    folder = str(tmp_path / "data")
    assert _run(capsys, "workspace", "create", "--data", folder, "--name", "Acme", "--owner-email",
                "owner@example.com", "--owner-name", "Olive")[0] == 0
    return folder


def _workspaces(data: str) -> list[str]:
    with sqlite3.connect(Path(data) / "countersign.db") as db:
        return [name for (name,) in db.execute("SELECT name FROM workspaces ORDER BY created_at, id")]


def _members(capsys, data: str, email: str = "owner@example.com") -> list[dict]:
    code, out, err = _run(capsys, "member", "list", "--data", data, "--email", email)
    assert code == 0, err
    return json.loads(out)["members"]


def test_add_makes_a_member_who_can_sign_in_and_authorise_an_agent(capsys, data):
    code, out, err = _run(capsys, "member", "add", "bea@example.com", "--data", data, "--email", "owner@example.com",
                          "--name", "  Bea  ")
    assert code == 0, err
    added = json.loads(out)
    assert (added["email"], added["name"], added["role"]) == ("bea@example.com", "Bea", "member")
    assert "signin-link --email bea@example.com" in err
    listed = _members(capsys, data, "BEA@example.com")  # any member names the workspace, in any case
    assert [(m["email"], m["name"], m["role"]) for m in listed] == [
        ("owner@example.com", "Olive", "owner"), ("bea@example.com", "Bea", "member")]
    assert listed[1]["person_id"] == added["person_id"]

    code, out, _ = _run(capsys, "connection", "create", "--data", data, "--email", "bea@example.com",
                        "--name", "Claude on laptop")
    assert code == 0
    runtime = build(settings_mod.load({"COUNTERSIGN_DATA": data}))
    principal = principal_by_token(runtime.store, json.loads(out)["token"])
    assert (principal.person.id, principal.person.role) == (added["person_id"], "member")
    code, out, _ = _run(capsys, "signin-link", "--data", data, "--email", "bea@example.com")
    assert code == 0
    signin = runtime.store.consume_signin_token(secret_hash(out.strip().split("#token=", 1)[1]), int(time.time()))
    assert signin is not None and signin.person_id == added["person_id"]


def test_list_and_add_name_the_workspace_by_its_id_too(capsys, data):
    code, out, _ = _run(capsys, "member", "list", "--data", data, "--email", "owner@example.com")
    workspace_id = json.loads(out)["workspace_id"]
    assert json.loads(out)["workspace"] == "Acme"
    assert _run(capsys, "member", "add", "cy@example.com", "--data", data, "--workspace", workspace_id)[0] == 0
    code, out, _ = _run(capsys, "member", "list", "--data", data, "--workspace", workspace_id)
    assert [m["email"] for m in json.loads(out)["members"]] == ["owner@example.com", "cy@example.com"]


def test_an_address_is_a_member_of_one_workspace_only(capsys, data):
    assert _run(capsys, "workspace", "create", "--data", data, "--name", "Other", "--owner-email",
                "other@example.com")[0] == 0
    for taken in ("OTHER@example.com", "owner@example.com"):
        code, out, err = _run(capsys, "member", "add", taken, "--data", data, "--email", "owner@example.com")
        assert (code, out) == (2, "")
        assert err == (f"error: {taken!r} already belongs to a member; an address is a member of one workspace "
                       "only. Nothing was written.\n")
    assert [m["email"] for m in _members(capsys, data)] == ["owner@example.com"]
    assert [m["role"] for m in _members(capsys, data, "other@example.com")] == ["owner"]


@pytest.mark.parametrize(("argv", "refusal"), [
    (["--name", "Bea\nBad"], "error: name: a member's name is one line"),
    (["--name", "b" * 101], "error: name: 101 characters; a member's name has at most 100."),
])
def test_a_bad_name_exits_2_naming_it_and_adds_nobody(capsys, data, argv, refusal):
    code, _, err = _run(capsys, "member", "add", "bea@example.com", "--data", data, "--email", "owner@example.com",
                        *argv)
    assert code == 2 and err.startswith(refusal) and "Traceback" not in err
    assert [m["email"] for m in _members(capsys, data)] == ["owner@example.com"]


@pytest.mark.parametrize(("which", "refusal"), [
    (["--workspace", "w_nope"], "error: no workspace with id 'w_nope'"),
    (["--email", "nobody@example.com"], "error: no member with email 'nobody@example.com'"),
])
def test_an_unknown_workspace_or_member_exits_2(capsys, data, which, refusal):
    for command in (["member", "add", "bea@example.com"], ["member", "list"]):
        code, out, err = _run(capsys, *command, "--data", data, *which)
        assert (code, out) == (2, "") and err.startswith(refusal)
    assert [m["email"] for m in _members(capsys, data)] == ["owner@example.com"]


def test_not_an_email_exits_2(capsys, data):
    code, _, err = _run(capsys, "member", "add", "bea at example", "--data", data, "--email", "owner@example.com")
    assert code == 2 and err.startswith("error: email: 'bea at example' is not an email address")


def test_workspace_create_with_an_owner_email_taken_exits_2_and_leaves_no_workspace(capsys, data):
    code, out, err = _run(capsys, "workspace", "create", "--data", data, "--name", "Second", "--owner-email",
                          "Owner@Example.com")
    assert (code, out) == (2, "")
    assert err.startswith("error: The email 'Owner@Example.com' already belongs to a member.")
    assert "Traceback" not in err
    assert _workspaces(data) == ["Acme"]


def test_workspace_create_with_an_owner_name_on_two_lines_exits_2_and_writes_nothing(capsys, data):
    code, _, err = _run(capsys, "workspace", "create", "--data", data, "--name", "Second", "--owner-email",
                        "second@example.com", "--owner-name", "Two\nLines")
    assert code == 2 and err.startswith("error: name: a member's name is one line")
    assert _workspaces(data) == ["Acme"]
