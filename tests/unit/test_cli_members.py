"""``countersign member list`` and ``member add``, and ``workspace create`` refusing an owner's
email that already belongs to a member without leaving a workspace behind."""

from __future__ import annotations

import json
import shlex
import sqlite3
import time
from pathlib import Path

import anyio
import pytest

from countersign import cli, settings as settings_mod
from countersign.core.card_states import CardState
from countersign.gate.ask import request_card
from countersign.runtime import build
from countersign.store.callers import Owner
from countersign.store.hashes import secret_hash
from countersign.store.passkeys import Passkey
from countersign.surfaces.api.session import start_session
from countersign.surfaces.local.demo import seed_demo
from countersign.surfaces.mcp.auth import REVOKED, BearerAuth
from countersign.surfaces.upstream_requests import file_change
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
    assert f"(`countersign signin-link --data {shlex.quote(data)} --email bea@example.com`)" in err
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
    signin = runtime.store.sessions.consume_signin_token(secret_hash(out.strip().split("#token=", 1)[1]),
                                                         int(time.time()))
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


# -- member remove ----------------------------------------------------------------------------------


@pytest.fixture
def demo(tmp_path, capsys):
    """The demo workspace (its owner demo@example.com) with Bea, a member with an agent connection."""
    folder = str(tmp_path / "demo")
    runtime = build(settings_mod.load({"COUNTERSIGN_DATA": folder}))
    info = seed_demo(runtime)
    assert _run(capsys, "member", "add", "bea@example.com", "--data", folder, "--email", info["person_email"])[0] == 0
    code, out, _ = _run(capsys, "connection", "create", "--data", folder, "--email", "bea@example.com",
                        "--name", "Bea's agent")
    assert code == 0
    return folder, runtime, info, json.loads(out)["token"]


def test_remove_stops_everything_that_acts_for_the_member_then_removes_them(capsys, demo):
    data, runtime, info, token = demo
    store, desk = runtime.store, runtime.desk
    principal = principal_by_token(store, token)
    bea = principal.person
    held = anyio.run(request_card, desk, principal, "buy_credits", {"credits": 10})
    by_page = file_change(desk, bea.workspace_id, bea, "buy_credits", {"credits": 20})  # no connection: the CLI's way
    session_id, _signed = start_session(runtime, bea, principal.workspace)
    store.passkeys.put_passkey(Passkey(credential_id="cred-bea", workspace_id=bea.workspace_id, person_id=bea.id,
                              user_handle="h", public_key="k", name="Bea's phone", created_at=0))
    owners_card = anyio.run(request_card, desk, principal_by_token(store, info["agent_token"]), "buy_credits",
                            {"credits": 30})

    code, out, err = _run(capsys, "member", "remove", "BEA@example.com", "--data", data)
    assert code == 0, err
    answer = json.loads(out)
    assert answer["removed"]["email"] == "bea@example.com" and answer["removed"]["person_id"] == bea.id
    assert (answer["revoked_connections"], answer["withdrawn_cards"], answer["removed_passkeys"]) == (1, 2, 1)
    assert token not in out and token not in err

    now = desk.now()
    first, second = (store.cards.get_card(bea.workspace_id, cid, now) for cid in (held["confirmationId"], by_page.id))
    assert (first.state, second.state) == (CardState.WITHDRAWN, CardState.WITHDRAWN)
    assert first.decline_reason == "Withdrawn: the connection ‘Bea's agent’ that asked was revoked."
    assert second.decline_reason == "Withdrawn: bea@example.com is no longer a member of this workspace."
    assert store.cards.audit_trail(bea.workspace_id, second.id)[-1].actor == "system"
    assert store.cards.get_card(bea.workspace_id, owners_card["confirmationId"], now).state is CardState.PENDING
    assert anyio.run(BearerAuth(None, store).authenticate, token) == REVOKED
    revoked = store.connections.get_connection(bea.workspace_id, principal.connection.id)
    assert revoked.revoked_reason == "member_removed"
    assert store.callers.get_session_as(secret_hash(session_id), Owner(bea.workspace_id, bea.id), now) is None
    assert store.passkeys.list_passkeys(bea.workspace_id, bea.id) == []
    assert [m["email"] for m in _members(capsys, data, info["person_email"])] == [info["person_email"]]
    assert _run(capsys, "signin-link", "--data", data, "--email", "bea@example.com")[0] == 2

    # the address may be added again: a new person, whom the old token does not reach
    assert _run(capsys, "member", "add", "bea@example.com", "--data", data, "--email", info["person_email"])[0] == 0
    assert store.workspaces.get_person_by_email("bea@example.com").id != bea.id
    assert anyio.run(BearerAuth(None, store).authenticate, token) == REVOKED


def test_the_last_owner_stays_and_nothing_of_theirs_changes(capsys, demo):
    data, runtime, info, _token = demo
    owner = runtime.store.workspaces.get_person_by_email(info["person_email"])
    code, out, err = _run(capsys, "member", "remove", info["person_email"], "--data", data)
    assert (code, out) == (2, "")
    assert err == (f"error: email: {info['person_email']} is the workspace's last owner; make another member an "
                   "owner first (grant_role), then remove them. Nothing changed.\n")
    assert runtime.store.workspaces.get_person(owner.workspace_id, owner.id) == owner
    assert not any(c.revoked for c in runtime.store.connections.list_connections(owner.workspace_id, owner.id))
    principal_by_token(runtime.store, info["agent_token"])  # still works

    bea = runtime.store.workspaces.get_person_by_email("bea@example.com")
    runtime.store.workspaces.update_person(bea.workspace_id, bea.id, role="owner")  # (as a confirmed grant_role would)
    code, out, _ = _run(capsys, "member", "remove", info["person_email"], "--data", data)
    assert code == 0 and json.loads(out)["removed"]["role"] == "owner"
    assert [(m["email"], m["role"]) for m in _members(capsys, data, "bea@example.com")] == [
        ("bea@example.com", "owner")]


def test_removing_an_unknown_email_exits_2(capsys, demo):
    data, *_ = demo
    code, out, err = _run(capsys, "member", "remove", "nobody@example.com", "--data", data)
    assert (code, out, err) == (2, "", "error: no member with email 'nobody@example.com'\n")
