"""The command-line surface (``countersign ...``) and the demo of ``serve --demo`` (docs/operations.md)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import anyio
import pytest

from countersign import cli, settings as settings_mod
from countersign.core.tickets import Keyring
from countersign.gate.ask import request_card
from countersign.identity import accounts
from countersign.runtime import build
from countersign.store.hashes import secret_hash
from countersign.store.sqlite import SQLiteStore
from countersign.surfaces.local.demo import seed_demo
from countersign.toolkit import ActionContext
from tests.support.stores import principal_by_token

REPO = Path(__file__).resolve().parents[2]
DEMO_KEYS = {"mcp_url", "agent_token", "person_email", "confirm_url", "signin_url"}


pytestmark = pytest.mark.usefixtures("clean_env")  # the CLI reads the environment (tests/unit/conftest.py)


def _out_json(capsys) -> dict:
    out = capsys.readouterr().out
    return json.loads(out)


# -- help and keys ---------------------------------------------------------------------------------


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("serve", "keys", "workspace", "member", "connection", "signin-link", "backup", "suppression",
                    "budget", "upstream", "verify-receipt"):
        assert command in out, f"--help does not mention {command}"


def _keys(capsys) -> dict[str, str]:
    assert cli.main(["keys"]) == 0
    out = capsys.readouterr().out
    values = {}
    for line in out.splitlines():
        if "=" in line and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name] = value
    assert set(values) == {"COUNTERSIGN_SIGNING_KEY", "COUNTERSIGN_STATE_KEYS"}, out
    return values


def test_keys_prints_values_the_settings_accept(capsys):
    env = _keys(capsys)
    loaded = settings_mod.load(env)
    assert loaded.signing_key == env["COUNTERSIGN_SIGNING_KEY"]
    assert loaded.state_keys == (env["COUNTERSIGN_STATE_KEYS"],)
    keyring = Keyring.from_secrets([env["COUNTERSIGN_SIGNING_KEY"]])
    assert keyring.key_id


def test_keys_are_fresh_each_run(capsys):
    first, second = _keys(capsys), _keys(capsys)
    assert first["COUNTERSIGN_SIGNING_KEY"] != second["COUNTERSIGN_SIGNING_KEY"]
    assert first["COUNTERSIGN_STATE_KEYS"] != second["COUNTERSIGN_STATE_KEYS"]


# -- a wrong environment value ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "variable, value",
    [("COUNTERSIGN_CARD_TTL", "abc"), ("COUNTERSIGN_FALLBACK", "sms"), ("COUNTERSIGN_PUBLIC_URL", "localhost:8000")],
)
def test_a_wrong_environment_value_stops_with_exit_2_naming_it(monkeypatch, capsys, tmp_path, variable, value):
    monkeypatch.setenv(variable, value)
    data = tmp_path / "data"
    code = cli.main(["workspace", "create", "--data", str(data), "--name", "X", "--owner-email", "a@example.com"])
    assert code == 2
    captured = capsys.readouterr()
    assert variable in captured.err
    assert captured.out == ""
    assert not (data / "countersign.db").exists(), "nothing is created when the configuration is wrong"


# -- workspace, connection, signin-link ------------------------------------------------------------


def test_workspace_connection_and_signin_link(capsys, tmp_path):
    data = str(tmp_path / "data")
    assert cli.main(["workspace", "create", "--data", data, "--name", "X", "--owner-email", "a@example.com"]) == 0
    ws = _out_json(capsys)
    assert ws["workspace_id"] and ws["owner_id"] and ws["owner_email"] == "a@example.com"

    assert (
        cli.main(["connection", "create", "--data", data, "--email", "a@example.com", "--name", "Claude on laptop"])
        == 0
    )
    conn = _out_json(capsys)
    assert conn["connection_id"]
    assert conn["token"].startswith("cs_")
    assert conn["mcp_url"] == "http://localhost:8000/mcp"

    # The token is stored only as a hash, bound to the member and workspace just created.
    store = build(settings_mod.load({"COUNTERSIGN_DATA": data})).store
    stored = store.connections.get_connection_by_token_hash(secret_hash(conn["token"]))
    assert stored is not None and stored.id == conn["connection_id"]
    assert stored.workspace_id == ws["workspace_id"] and stored.person_id == ws["owner_id"]
    assert stored.name == "Claude on laptop"

    assert cli.main(["signin-link", "--data", data, "--email", "a@example.com"]) == 0
    url = capsys.readouterr().out.strip()
    assert url.startswith("http://localhost:8000/signin#token=")
    token = url.split("#token=", 1)[1]
    assert token
    signin = store.sessions.consume_signin_token(secret_hash(token), int(time.time()))
    assert signin is not None and signin.person_id == ws["owner_id"]


def test_unknown_email_exits_2(capsys, tmp_path):
    data = str(tmp_path / "data")
    assert cli.main(["workspace", "create", "--data", data, "--name", "X", "--owner-email", "a@example.com"]) == 0
    capsys.readouterr()
    assert cli.main(["connection", "create", "--data", data, "--email", "nobody@example.com", "--name", "Agent"]) == 2
    assert "nobody@example.com" in capsys.readouterr().err
    assert cli.main(["signin-link", "--data", data, "--email", "nobody@example.com"]) == 2
    assert "nobody@example.com" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "email", "refusal"), [
    ("Acme\nMail", "a@example.com", "error: name: a workspace name is one line, without tabs, line breaks"),
    ("   ", "a@example.com", "error: name: a workspace needs a name"),
    ("Acme", "not an email", "error: email: 'not an email' is not an email address"),
])
def test_a_bad_workspace_exits_2_naming_the_problem_and_creates_nothing(capsys, tmp_path, name, email, refusal):
    data = str(tmp_path / "data")
    assert cli.main(["workspace", "create", "--data", data, "--name", name, "--owner-email", email]) == 2
    err = capsys.readouterr().err
    assert err.startswith(refusal) and "Traceback" not in err
    assert cli.main(["signin-link", "--data", data, "--email", "a@example.com"]) == 2  # no member was created


def test_a_connection_name_on_two_lines_exits_2_naming_it(capsys, tmp_path):
    data = str(tmp_path / "data")
    assert cli.main(["workspace", "create", "--data", data, "--name", "X", "--owner-email", "a@example.com"]) == 0
    capsys.readouterr()
    assert cli.main(["connection", "create", "--data", data, "--email", "a@example.com", "--name", "A\ngent"]) == 2
    assert capsys.readouterr().err.startswith("error: name: a connection's name is one line")


# -- the demo --------------------------------------------------------------------------------------


def _read(runtime, name: str, ctx: ActionContext, **args) -> dict:
    read = runtime.registry.reads[name]
    return read.run(read.parse(args), ctx)


def test_demo_seeds_every_toolset_and_survives_a_restart(tmp_path):
    data = tmp_path / "data"
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(data)})
    assert settings.packs == ("budget", "mail", "gateway")
    runtime = build(settings)
    assert {t.name for t in runtime.registry.toolsets} == {"budget", "mail", "gateway", "passkeys", "standing_grants",
                                                           "card_lifetimes", "quorum", "escalation", "smoke"}

    info = seed_demo(runtime)
    path = data / "demo.json"
    assert path.exists()
    on_disk = json.loads(path.read_text())
    assert set(on_disk) == DEMO_KEYS
    assert on_disk == info
    assert info["mcp_url"] == "http://localhost:8000/mcp"
    assert info["confirm_url"] == settings.pending_url
    assert info["signin_url"].startswith("http://localhost:8000/signin#token=")

    principal = principal_by_token(runtime.store, info["agent_token"])
    assert principal.person.email == info["person_email"]
    ctx = ActionContext(runtime.store.docs, principal.workspace, principal.person, principal.connection,
                        runtime.desk.now())

    # Budget: a realistic ledger.
    txns = _read(runtime, "list_transactions", ctx, limit=1)
    assert txns["total"] >= 200
    assert _read(runtime, "list_transactions", ctx, uncategorised=True, limit=1)["total"] > 0
    assert _read(runtime, "list_transactions", ctx, unapproved=True, limit=1)["total"] > 0
    groups = _read(runtime, "list_categories", ctx)["groups"]
    categories = [c for g in groups if not g["internal"] for c in g["categories"]]
    assert len(categories) >= 20

    # Mail: a campaign, a list, a draft design and credits.
    campaigns = _read(runtime, "list_campaigns", ctx)["campaigns"]
    assert campaigns
    lists = _read(runtime, "list_lists", ctx)["lists"]
    assert lists and lists[0]["contacts"] > 0
    designs = _read(runtime, "list_designs", ctx)["designs"]
    assert any(d["state"] == "draft" for d in designs)
    assert _read(runtime, "get_credits", ctx)["balance_milli"] > 0

    # A card filed before the restart.
    category = categories[0]
    held = anyio.run(request_card, runtime.desk, principal, "set_category_budget",
                     {"category_id": category["id"], "month": "current", "amount": "987.65"})
    assert held["status"] == "pending"
    card_id = held["confirmationId"]

    # Restart: a second runtime on the same data folder, demo seeded again.
    restarted = build(settings_mod.load({"COUNTERSIGN_DATA": str(data)}))
    assert restarted.keyring.key_id == runtime.keyring.key_id, "the local keys are reused"
    again = seed_demo(restarted)
    assert set(json.loads(path.read_text())) == DEMO_KEYS
    assert again["agent_token"] == info["agent_token"]
    assert again["person_email"] == info["person_email"]
    assert again["signin_url"] != info["signin_url"], "each start mints a fresh sign-in link"

    principal2 = principal_by_token(restarted.store, again["agent_token"])
    assert principal2.connection.id == principal.connection.id
    assert principal2.workspace.id == principal.workspace.id
    assert [p.id for p in restarted.store.workspaces.list_persons(principal.workspace.id)] == [principal.person.id]
    assert restarted.store.workspaces.get_person_by_email(again["person_email"]).workspace_id == principal.workspace.id
    assert len(restarted.store.connections.list_connections(principal.workspace.id)) == 1

    # The demo data was not seeded twice.
    ctx2 = ActionContext(restarted.store.docs, principal2.workspace, principal2.person, principal2.connection,
                         restarted.desk.now())
    assert _read(restarted, "list_transactions", ctx2, limit=1)["total"] == txns["total"]
    assert len(_read(restarted, "list_campaigns", ctx2)["campaigns"]) == len(campaigns)

    card = restarted.store.cards.get_card(principal.workspace.id, card_id, restarted.desk.now())
    assert card.state.value == "pending"
    assert card.tool == "set_category_budget"

    # The new sign-in link works; its token is spent once.
    token = again["signin_url"].split("#token=", 1)[1]
    now = restarted.desk.now()
    signin = restarted.store.sessions.consume_signin_token(secret_hash(token), now)
    assert signin is not None and signin.person_id == principal.person.id
    assert restarted.store.sessions.consume_signin_token(secret_hash(token), now) is None


# -- backup ------------------------------------------------------------------------------------------


def test_backup_holds_the_commits_still_in_the_wal(capsys, tmp_path, monkeypatch):
    data = tmp_path / "data"
    running = build(settings_mod.load({"COUNTERSIGN_DATA": str(data)}))  # a server's store: its connections stay open
    workspace, _ = accounts.create_workspace(running.store.workspaces, "Acme", "a@example.com")
    database = data / "countersign.db"
    assert (data / "countersign.db-wal").stat().st_size > 0, "the recent commits are in the -wal"
    shutil.copy(database, tmp_path / "copied.db")  # what copying the .db alone would keep
    with sqlite3.connect(tmp_path / "copied.db") as copied:
        assert not copied.execute("SELECT name FROM sqlite_master WHERE name = 'workspaces'").fetchall()

    assert cli.main(["backup", str(tmp_path / "backup.db"), "--data", str(data)]) == 0
    captured = capsys.readouterr()
    backup = Path(captured.out.strip())
    assert backup == tmp_path / "backup.db"
    assert "keys" in captured.err
    assert backup.stat().st_mode & 0o777 == 0o600
    assert not Path(f"{backup}-wal").exists(), "one self-contained file"
    restored = SQLiteStore(str(backup))
    assert restored.workspaces.get_workspace(workspace.id).name == "Acme"
    restored.close()

    # Never over an existing file; into a folder, under a dated name.
    assert cli.main(["backup", str(backup), "--data", str(data)]) == 2
    assert "already exists" in capsys.readouterr().err
    folder = tmp_path / "backups"
    folder.mkdir()
    assert cli.main(["backup", str(folder), "--data", str(data)]) == 0
    (dated,) = folder.iterdir()
    assert dated.name.startswith("countersign-") and dated.suffix == ".db"
    assert Path(capsys.readouterr().out.strip()) == dated
    assert cli.main(["backup", str(tmp_path / "new" / "folder") + "/", "--data", str(data)]) == 0  # made
    (made,) = (tmp_path / "new" / "folder").iterdir()
    assert Path(capsys.readouterr().out.strip()) == made
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [], "no partial file is left"
    # keys given in the environment (as after a rotation): the reminder names them, and keys/ still
    monkeypatch.setenv("COUNTERSIGN_SIGNING_KEY", "k" * 43)
    assert cli.main(["backup", str(tmp_path / "with-env-keys.db"), "--data", str(data)]) == 0
    assert f"keep a copy of COUNTERSIGN_SIGNING_KEY and {data / 'keys'} too" in capsys.readouterr().err


def test_backup_of_a_missing_database_creates_nothing(capsys, tmp_path):
    data = tmp_path / "data"
    assert cli.main(["backup", str(tmp_path / "b.db"), "--data", str(data)]) == 2
    assert "no database" in capsys.readouterr().err
    assert not (data / "countersign.db").exists() and not (tmp_path / "b.db").exists()


def test_backup_refuses_a_dynamodb_store(capsys, tmp_path):
    assert cli.main(["backup", str(tmp_path / "b.db"), "--store", "dynamodb://table"]) == 2
    assert "DynamoDB" in capsys.readouterr().err


# -- scripts/countersign -------------------------------------------------------------------------------


def test_the_wrapper_runs_the_cli_of_this_checkout(tmp_path):
    done = subprocess.run([str(REPO / "scripts" / "countersign"), "signin-link", "--data", str(tmp_path / "d"),
                           "--email", "nobody@example.com"], capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")})
    # The CLI itself answered, naming the data folder it found no database in (and made nothing there).
    assert done.returncode == 2 and f"no countersign database in {tmp_path / 'd'} (--data)" in done.stderr
    assert not (tmp_path / "d").exists()


def test_the_wrappers_hints_name_the_wrapper_as_it_was_typed(tmp_path):
    """Run from the checkout as ``scripts/countersign``, the hints it prints say
    ``scripts/countersign …`` (``countersign`` is not on PATH there), so they work as printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")}
    data = str(tmp_path / "d")

    def wrapper(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["scripts/countersign", *args], cwd=REPO, capture_output=True, text=True, timeout=300,
                              env=env)

    made = wrapper("workspace", "create", "--data", data, "--name", "T", "--owner-email", "o@example.com")
    assert made.returncode == 0
    added = wrapper("member", "add", "bea@example.com", "--email", "o@example.com", "--data", data)
    assert added.returncode == 0
    assert f"`scripts/countersign signin-link --data {data} --email bea@example.com`" in added.stderr, added.stderr


def test_suppression_show_and_lift(capsys, tmp_path):
    from countersign.store.suppressions import Suppression

    data = str(tmp_path / "data")
    assert cli.main(["workspace", "create", "--data", data, "--name", "X", "--owner-email", "a@example.com"]) == 0
    capsys.readouterr()
    store = build(settings_mod.load({"COUNTERSIGN_DATA": data})).store
    store.suppressions.suppress_address(Suppression("a@example.com", "bounce", 1_790_000_000, "General"))

    assert cli.main(["suppression", "show", "--data", data, "--email", "A@Example.com"]) == 0
    assert _out_json(capsys) == {"email": "a@example.com", "suppressed": True, "reason": "bounce",
                                 "since": "2026-09-21T14:13:20Z", "detail": "General"}
    assert cli.main(["suppression", "lift", "--data", data, "--email", "a@example.com"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["lifted"] is True and json.loads(captured.out)["suppressed"] is False
    assert "delete-suppressed-destination --email-address a@example.com" in captured.err
    assert store.suppressions.address_suppression("a@example.com") is None  # card emails go to it again

    assert cli.main(["suppression", "lift", "--data", data, "--email", "a@example.com"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"email": "a@example.com", "suppressed": False, "lifted": False}
    assert "was not suppressed: nothing changed" in captured.err


def test_suppression_refuses_what_is_not_an_address_before_it_opens_the_store(capsys, tmp_path):
    data = tmp_path / "data"
    for action in ("show", "lift"):
        assert cli.main(["suppression", action, "--data", str(data), "--email", "bea example.com"]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == "error: email: 'bea example.com' is not an email address\n"
    assert not data.exists()  # no store was made for it


def test_verify_receipt_names_a_missing_or_unreadable_file_and_a_file_that_is_not_json(capsys, tmp_path):
    missing = tmp_path / "nope.json"
    assert cli.main(["verify-receipt", str(missing)]) == 2
    assert capsys.readouterr().err == f"error: cannot read {missing}: No such file or directory\n"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00")
    assert cli.main(["verify-receipt", str(binary)]) == 2
    assert capsys.readouterr().err.startswith(f"error: cannot read {binary}: 'utf-8' codec can't decode")
    text = tmp_path / "notes.json"
    text.write_text("not a receipt")
    assert cli.main(["verify-receipt", str(text)]) == 1
    assert capsys.readouterr().out.startswith(f"FAILED: the receipt does not verify: {text} is not JSON")
