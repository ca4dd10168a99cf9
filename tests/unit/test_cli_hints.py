"""What the CLI says when a person follows it (docs/operations.md, "The CLI"): a command a hint
prints runs as printed (the same --data and --store); a command that needs a database it cannot
find names the folder it looked in and makes nothing there; a reader that stops early (``| head``)
ends the command quietly; a DynamoDB store without the AWS libraries says which extra to install."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from countersign import cli
from countersign.identity import accounts
from countersign.store.sqlite import SQLiteStore

REPO = Path(__file__).resolve().parents[2]
OWNER = "a@example.com"


@pytest.fixture
def per_user(tmp_path, monkeypatch, clean_env) -> Path:
    """The per-user data folder the CLI falls back to, moved into the test's folder (XDG_DATA_HOME)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "countersign"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _as_printed(capsys, line: str, **fill: str) -> tuple[int, str, str]:
    """Run a printed ``countersign …`` command line through the CLI's ``main`` (placeholders filled in)."""
    for placeholder, value in fill.items():
        line = line.replace(placeholder, value)
    words = shlex.split(line)
    assert words[0] == "countersign", line
    return _run(capsys, *words[1:])


def _workspace(capsys, *where: str) -> None:
    code, _, err = _run(capsys, "workspace", "create", *where, "--name", "Acme", "--owner-email", OWNER)
    assert code == 0, err


# -- hints run as printed --------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["data", "store"])
def test_the_sign_in_hint_of_member_add_runs_as_printed(capsys, tmp_path, per_user, where):
    given = (["--data", str(tmp_path / "data")] if where == "data"
             else ["--store", f"sqlite:///{tmp_path / 'elsewhere.db'}"])
    _workspace(capsys, *given)
    code, _, err = _run(capsys, "member", "add", "bea@example.com", *given, "--email", OWNER)
    assert code == 0, err
    [hint] = re.findall(r"`(countersign signin-link [^`]*)`", err)
    assert " ".join(given) in hint

    code, out, err = _as_printed(capsys, hint)
    assert code == 0, err
    assert out.strip().startswith("http://localhost:8000/signin#token=")
    assert not (per_user / "countersign.db").exists(), "the hint reached the per-user data folder"


def test_the_revoke_hints_of_connection_list_and_revoke_run_as_printed(capsys, tmp_path, per_user):
    data = str(tmp_path / "data")
    _workspace(capsys, "--data", data)
    code, out, _ = _run(capsys, "connection", "create", "--data", data, "--email", OWNER, "--name", "Agent")
    connection_id = json.loads(out)["connection_id"]

    code, out, err = _run(capsys, "connection", "list", "--data", data, "--email", OWNER)
    assert code == 0 and json.loads(out)[0]["id"] == connection_id
    [hint] = re.findall(r"^# to revoke one: (countersign .*)$", err, re.MULTILINE)
    code, out, err = _as_printed(capsys, hint, CONNECTION_ID=connection_id)
    assert code == 0, err
    assert json.loads(out)["connection"]["revoked"] is True

    code, out, err = _run(capsys, "connection", "list", "--data", data, "--email", OWNER)
    assert json.loads(out)[0]["revoked"] is True and "to revoke one" not in err  # none left to revoke

    code, _, err = _run(capsys, "connection", "revoke", "k_unknown", "--data", data, "--email", OWNER)
    assert code == 2
    [listing] = re.findall(r"`(countersign connection list [^`]*)`", err)
    code, out, err = _as_printed(capsys, listing)
    assert code == 0 and [c["id"] for c in json.loads(out)] == [connection_id]
    assert not per_user.exists()


def test_the_hints_name_the_command_the_checkout_runs(capsys, tmp_path, per_user, monkeypatch):
    """``scripts/serve`` and ``scripts/countersign`` set COUNTERSIGN_CLI: hints name that command."""
    monkeypatch.setenv("COUNTERSIGN_CLI", "scripts/countersign")
    data = str(tmp_path / "my data")
    _workspace(capsys, "--data", data)
    code, _, err = _run(capsys, "member", "add", "bea@example.com", "--data", data, "--email", OWNER)
    assert code == 0
    assert f"`scripts/countersign signin-link --data {shlex.quote(data)} --email bea@example.com`" in err
    code, _, err = _run(capsys, "keys", "forget", "--data", data)
    forget = f"scripts/countersign keys forget KEY_ID --data {shlex.quote(data)}"
    assert (code, err) == (2, f"error: name the key: {forget}\n")


# -- a database that is not there ------------------------------------------------------------------

NEEDS_A_DATABASE = [
    ["signin-link", "--email", OWNER],
    ["connection", "create", "--email", OWNER, "--name", "Agent"],
    ["connection", "list", "--email", OWNER],
    ["connection", "revoke", "k_x", "--email", OWNER],
    ["member", "list", "--email", OWNER],
    ["member", "add", "bea@example.com", "--email", OWNER],
    ["member", "remove", OWNER],
    ["keys", "in-use"],
    ["keys", "forget", "k1"],
    ["suppression", "show", "--email", OWNER],
    ["upstream", "list", "--email", OWNER],
    ["upstream", "remove", "fs", "--email", OWNER],
    ["budget", "upgrade", "--email", OWNER],
]


@pytest.mark.parametrize("argv", NEEDS_A_DATABASE, ids=lambda argv: " ".join(argv[:2]))
def test_without_data_a_command_names_the_per_user_folder_and_makes_nothing(capsys, per_user, argv):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(f"error: there is no countersign database in {per_user} (the per-user data folder, "
                          "used when neither --data nor COUNTERSIGN_DATA names one), and nothing was made there. "
                          "Name the data folder your server uses with --data FOLDER"), err
    assert not per_user.exists() and not per_user.parent.exists()


@pytest.mark.parametrize("how", ["--data", "COUNTERSIGN_DATA", "--store", "COUNTERSIGN_STORE"])
def test_a_folder_or_file_given_without_a_database_is_named_with_what_chose_it(capsys, tmp_path, per_user,
                                                                               monkeypatch, how):
    folder = tmp_path / "not made"
    database = folder / "countersign.db"
    given = {"--data": ["--data", str(folder)], "--store": ["--store", f"sqlite:///{database}"]}.get(how, [])
    if how.startswith("COUNTERSIGN_"):
        monkeypatch.setenv(how, str(folder) if how == "COUNTERSIGN_DATA" else f"sqlite:///{database}")
    code, _, err = _run(capsys, "member", "list", *given, "--email", OWNER)
    assert code == 2
    named = f"in {folder}" if how in ("--data", "COUNTERSIGN_DATA") else f"at {database}"
    assert err.startswith(f"error: there is no countersign database {named} ({how}), and nothing was made"), err
    assert not folder.exists() and not per_user.exists()


def test_workspace_create_still_makes_the_database(capsys, tmp_path, per_user):
    _workspace(capsys)
    assert (per_user / "countersign.db").is_file()
    code, out, _ = _run(capsys, "member", "list", "--email", OWNER)
    assert code == 0 and [m["email"] for m in json.loads(out)["members"]] == [OWNER]


# -- a reader that stops early ---------------------------------------------------------------------


def _closed_stdout(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``countersign ARGV | head -0``, made certain: the pipe's reading end is closed before the
    command writes a byte."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "countersign.cli", *argv], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, cwd=REPO, env=env, timeout=60)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("many", [False, True], ids=["a few lines", "more than a buffer"])
def test_a_closed_stdout_ends_the_command_quietly(tmp_path, per_user, many):
    """A closed stdout is found at the command's last flush (a few lines) or while it prints (more
    than a buffer holds): either way it ends without a word on stderr and with status 1, as the
    Python documentation's note on SIGPIPE does, not as a data folder that cannot be used
    (``--help``, which argparse prints and ends itself, ends quietly too)."""
    data = tmp_path / "data"
    data.mkdir()
    store = SQLiteStore(str(data / "countersign.db"))
    workspace, _ = accounts.create_workspace(store.workspaces, "Acme", OWNER)
    for n in range(200 if many else 0):
        accounts.add_person(store.workspaces, workspace.id, f"member{n}@example.com")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    for argv in (["member", "list", "--data", str(data), "--email", OWNER], ["keys"]):
        done = _closed_stdout(*argv, env=env)
        assert (done.returncode, done.stderr) == (1, ""), (argv, done.stderr)
    done = _closed_stdout("--help", env=env)
    assert (done.returncode, done.stderr) == (0, "")


# -- DynamoDB without the AWS libraries ------------------------------------------------------------


@pytest.mark.parametrize("how", ["--store", "COUNTERSIGN_STORE"])
def test_a_dynamodb_store_without_the_aws_libraries_names_the_extra(tmp_path, how):
    """``pip install .`` has no boto3 (the ``aws`` extra has): a ``dynamodb://`` command says so,
    naming the option or variable that chose it, instead of failing at the first call."""
    script = ("import sys\n"
              "sys.modules['boto3'] = sys.modules['botocore'] = sys.modules['aws_lambda_powertools'] = None\n"
              "from countersign.cli import main\n"
              "sys.exit(main(sys.argv[1:]))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    argv = ["member", "list", "--email", OWNER]
    if how == "--store":
        argv += ["--store", "dynamodb://countersign-table"]
    else:
        env["COUNTERSIGN_STORE"] = "dynamodb://countersign-table"
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"configuration error: {how}: this value needs the AWS libraries"), done.stderr
    assert "pip install 'countersign[aws]'" in done.stderr and "'.[aws]'" in done.stderr
    assert not (tmp_path / "xdg").exists()


def test_a_dynamodb_store_without_a_region_is_named_not_a_traceback(monkeypatch, capsys, tmp_path):
    """boto3 installed but no region anywhere: the command says what to set, exit 2, no traceback."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    code = cli.main(["member", "list", "--store", "dynamodb://countersign-table", "--workspace", "ws_x"])
    err = capsys.readouterr().err
    assert code == 2
    assert "dynamodb://countersign-table: no AWS region is set" in err
    assert "AWS_REGION" in err
    assert "Traceback" not in err
