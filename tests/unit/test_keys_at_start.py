"""Keys fail loudly: a server never starts on a key that cannot verify the cards that wait, and
never on an empty or short key. Key files and the database are readable by their owner only."""

from __future__ import annotations

import asyncio
import shlex
import stat

import pytest

from countersign import cli, settings as settings_mod
from countersign.core.tickets import new_secret
from countersign.gate import ask as gate_ask
from countersign.identity import accounts
from countersign.identity.principal import Principal
from countersign.runtime import build
from countersign.settings import ConfigError
from tests.support.harness import all_toolsets
from tests.support.sample_toolset import seed_notes


def local(data) -> settings_mod.Settings:
    return settings_mod.load({"COUNTERSIGN_DATA": str(data)})


def file_a_card(runtime) -> str:
    store = runtime.store
    workspace, person = accounts.create_workspace(store.workspaces, "Acme", "keys@example.com")
    seed_notes(store, workspace.id)
    conn = accounts.create_connection(store.workspaces, store.connections, workspace.id, person.id, "agent").connection
    principal = Principal(store.workspaces.get_workspace(workspace.id), person, conn)
    held = asyncio.run(gate_ask.request_card(runtime.desk, principal, "publish_note", {"note_id": "n1", "text": "x"}))
    return held["confirmationId"]


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_data_folder_keys_and_database_are_private(tmp_path):
    data = tmp_path / "data"
    runtime = build(local(data), toolsets=all_toolsets())
    file_a_card(runtime)
    assert mode(data) == 0o700 and mode(data / "keys") == 0o700
    assert mode(data / "keys" / "signing.key") == 0o600 and mode(data / "keys" / "state.key") == 0o600
    for name in ("countersign.db", "countersign.db-wal", "countersign.db-shm"):
        if (data / name).exists():
            assert mode(data / name) == 0o600, name
    runtime.store.close()


@pytest.mark.parametrize("content", ["", "\n", "short", "not base64 at all but long enough to be something"])
def test_an_empty_or_broken_signing_key_file_stops_start_up_naming_it(tmp_path, content):
    (tmp_path / "keys").mkdir(parents=True)
    (tmp_path / "keys" / "signing.key").write_text(content)
    with pytest.raises(ConfigError) as stopped:
        build(local(tmp_path), toolsets=all_toolsets())
    assert stopped.value.variable == str(tmp_path / "keys" / "signing.key")
    assert "Restore the file from your backup" in str(stopped.value)
    assert "cards signed by the old one can no longer be confirmed" in str(stopped.value)


def test_a_short_state_key_file_stops_start_up(tmp_path):
    build(local(tmp_path), toolsets=all_toolsets()).store.close()
    (tmp_path / "keys" / "state.key").write_text("short\n")
    with pytest.raises(ConfigError) as stopped:
        build(local(tmp_path), toolsets=all_toolsets())
    assert stopped.value.variable.endswith("state.key")
    # what deleting it costs is said for this key: not the signing key's loss
    assert "answers in flight to 2026-07-28 questions are lost" in str(stopped.value)
    assert "no longer be confirmed" not in str(stopped.value)


def test_a_lost_keys_folder_stops_start_up_while_cards_wait_and_makes_no_new_key(tmp_path):
    runtime = build(local(tmp_path), toolsets=all_toolsets())
    file_a_card(runtime)
    key_id = runtime.keyring.key_id
    runtime.store.close()
    for f in (tmp_path / "keys").iterdir():
        f.unlink()
    (tmp_path / "keys").rmdir()
    with pytest.raises(ConfigError) as stopped:
        build(local(tmp_path), toolsets=all_toolsets())
    assert stopped.value.variable == str(tmp_path / "keys" / "signing.key")
    assert "cards it signed that can still be answered" in str(stopped.value)
    assert not (tmp_path / "keys" / "signing.key").exists()
    # the operator decides the key is lost for good: forget it, and the server starts
    assert cli.main(["keys", "forget", key_id, "--data", str(tmp_path)]) == 0
    restarted = build(local(tmp_path), toolsets=all_toolsets())
    assert restarted.keyring.key_id != key_id
    restarted.store.close()


def test_a_replaced_signing_key_stops_start_up_naming_the_key_and_the_fix(tmp_path, capsys):
    runtime = build(local(tmp_path), toolsets=all_toolsets())
    file_a_card(runtime)
    old = runtime.keyring.key_id
    runtime.store.close()
    (tmp_path / "keys" / "signing.key").write_text(new_secret() + "\n")
    with pytest.raises(ConfigError) as stopped:
        build(local(tmp_path), toolsets=all_toolsets())
    assert old in str(stopped.value) and "countersign keys forget" in str(stopped.value)
    assert cli.main(["keys", "in-use", "--data", str(tmp_path)]) == 0
    assert old in capsys.readouterr().out


def test_the_environment_key_must_be_long_enough(tmp_path):
    with pytest.raises(ConfigError) as stopped:
        settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path), "COUNTERSIGN_SIGNING_KEY": "tooshort"})
    assert stopped.value.variable == "COUNTERSIGN_SIGNING_KEY"


def test_a_data_folder_open_to_others_is_named_once_at_start_and_left_as_it_is(tmp_path, caplog):
    data = tmp_path / "shared data"  # a space: the command said is one to paste
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    caplog.set_level("WARNING", logger="countersign")
    runtime = build(local(data), toolsets=all_toolsets())
    said = [r.getMessage() for r in caplog.records if "open to other users" in r.getMessage()]
    assert said == [f"the data folder {data} is open to other users (mode 755): its files are 0600, but run "
                    f"chmod 700 {shlex.quote(str(data))} so that no one else can list them"]
    assert mode(data) == 0o755  # the owner's choice, said and not changed
    assert mode(data / "keys" / "signing.key") == 0o600
    runtime.store.close()


def test_the_demo_file_and_the_outbox_are_private_whatever_the_umask(tmp_path):
    import os

    from countersign.surfaces.local.demo import seed_demo

    data = tmp_path / "data"
    old = os.umask(0o022)
    try:
        data.mkdir(mode=0o700)
        (data / "demo.json").write_text("{}")  # an older demo.json, made 0644 under this umask
        assert mode(data / "demo.json") == 0o644
        runtime = build(local(data), toolsets=all_toolsets())
        seed_demo(runtime)
        assert mode(data / "demo.json") == 0o600
        file_a_card(runtime)  # its email goes to the outbox
        assert mode(data / "outbox") == 0o700
        assert [mode(f) for f in (data / "outbox").iterdir()] and all(
            mode(f) == 0o600 for f in (data / "outbox").iterdir())
        runtime.store.close()
    finally:
        os.umask(old)
