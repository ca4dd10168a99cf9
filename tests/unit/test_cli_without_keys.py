"""The CLI on a machine without the deployment's keys (an operator in front of the DynamoDB table):
the commands that only read or close cards need none and make none; the ones that file a card
refuse to sign it with a key of their own, which the deployment would refuse as tampered."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from countersign import cli, settings as settings_mod
from countersign.core.card_states import CardState
from countersign.gate.ask import request_card
from countersign.runtime import build, files_cards_here
from countersign.settings import ConfigError
from countersign.surfaces.local.demo import seed_demo
from tests.support.stores import principal_by_token

pytestmark = pytest.mark.usefixtures("clean_env")  # the CLI reads the environment (tests/unit/conftest.py)


@pytest.fixture
def keys_gone(tmp_path):
    """A demo data folder with a card waiting, then its key files taken away (as on a machine that
    only has the store): (folder, runtime, demo info, the waiting card's id)."""
    data = tmp_path / "data"
    runtime = build(settings_mod.load({"COUNTERSIGN_DATA": str(data)}))
    info = seed_demo(runtime)
    held = anyio.run(request_card, runtime.desk, principal_by_token(runtime.store, info["agent_token"]),
                     "buy_credits", {"credits": 10})
    for key in (data / "keys").iterdir():
        key.unlink()
    return str(data), runtime, info, held["confirmationId"]


def test_a_command_that_files_cards_refuses_first_without_the_deployments_keys(capsys, tmp_path):
    for action in (["add", "fs", "--url", "https://files.example.com/mcp"], ["remove", "fs"], ["refresh", "fs"]):
        code = cli.main(["upstream", *action, "--email", "a@example.com", "--store", "dynamodb://countersign-table",
                         "--data", str(tmp_path / "operator")])
        err = capsys.readouterr().err
        assert code == 2
        assert err.startswith("configuration error: COUNTERSIGN_SIGNING_KEY: this command files a card that the "
                              "deployment must verify"), err
        assert "SigningKeySecretArn" in err and "StateKeysSecretArn" in err
    assert not (tmp_path / "operator" / "keys").exists()  # no key of its own was made


def test_the_deployments_keys_or_the_embedded_store_let_a_command_file_cards(tmp_path):
    arns = {"COUNTERSIGN_SIGNING_KEY": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:signing",
            "COUNTERSIGN_STATE_KEYS": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:state"}
    nowhere = {"COUNTERSIGN_STORE": "dynamodb://t", "COUNTERSIGN_DATA": str(tmp_path / "operator")}  # no key files
    files_cards_here(settings_mod.load({**nowhere, **arns}))
    files_cards_here(settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path)}))  # SQLite: its own key files
    local = tmp_path / "local"  # a local server on DynamoDB: the key files it made
    build(settings_mod.load({"COUNTERSIGN_DATA": str(local)}))
    files_cards_here(settings_mod.load({"COUNTERSIGN_STORE": "dynamodb://t", "COUNTERSIGN_DATA": str(local)}))
    for missing in arns:
        env = {**nowhere, **{k: v for k, v in arns.items() if k != missing}}
        with pytest.raises(ConfigError):
            files_cards_here(settings_mod.load(env))


def test_revoking_a_connection_needs_no_key_and_makes_none(capsys, keys_gone):
    data, runtime, info, card_id = keys_gone
    principal = principal_by_token(runtime.store, info["agent_token"])
    assert cli.main(["connection", "revoke", principal.connection.id, "--data", data,
                     "--email", info["person_email"]]) == 0
    assert json.loads(capsys.readouterr().out)["withdrawn_cards"] == 1
    assert runtime.store.cards.get_card(principal.workspace.id, card_id,
                                        runtime.desk.now()).state is CardState.WITHDRAWN
    assert list((Path(data) / "keys").iterdir()) == []


def test_removing_a_member_needs_no_key_and_makes_none(capsys, keys_gone):
    data, runtime, info, card_id = keys_gone
    principal = principal_by_token(runtime.store, info["agent_token"])
    assert cli.main(["member", "add", "bea@example.com", "--data", data, "--email", info["person_email"]]) == 0
    bea = runtime.store.workspaces.get_person_by_email("bea@example.com")
    runtime.store.workspaces.update_person(bea.workspace_id, bea.id, role="owner")
    capsys.readouterr()
    assert cli.main(["member", "remove", info["person_email"], "--data", data]) == 0
    assert json.loads(capsys.readouterr().out)["withdrawn_cards"] == 1
    assert runtime.store.cards.get_card(principal.workspace.id, card_id,
                                        runtime.desk.now()).state is CardState.WITHDRAWN
    assert cli.main(["upstream", "list", "--data", data, "--email", "bea@example.com"]) == 0  # reads: no key
    assert list((Path(data) / "keys").iterdir()) == []


def test_with_its_key_files_gone_a_command_that_files_cards_still_stops(capsys, keys_gone):
    data, _runtime, info, _card_id = keys_gone
    code = cli.main(["upstream", "remove", "fs", "--data", data, "--email", info["person_email"]])
    assert code == 2 and "the signing key is missing" in capsys.readouterr().err
