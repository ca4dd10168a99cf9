"""The CLI files upstream changes as held requests; a server killed after an upstream call was
sent, before its answer was recorded, leaves a card that recovery closes as *outcome unknown*:
the upstream is never called a second time (it has no idempotency key)."""

import json

import pytest

from countersign import cli
from countersign.core.card_states import CardState as S
from tests.crash.harness import Crashable

from .support import HttpUpstream

FAST = {"countersign_run_lease": "1", "countersign_sweep_interval": "1"}
# The server that dies after the upstream call holds the card's lease longer than the call can take
# under load: with one second, its own upkeep settled the card while the call was still going.
DYING = {"countersign_run_lease": "3", "countersign_sweep_interval": "1"}
PRIVATE = {"countersign_upstream_private": "1"}

pytestmark = pytest.mark.slow


@pytest.fixture
def crash(tmp_path):
    (tmp_path / "server").mkdir()
    c = Crashable(tmp_path / "server")
    yield c
    c.close()


def run_cli(capsys, *argv: str) -> dict | list:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_killed_after_sending_the_upstream_call_it_is_outcome_unknown_never_sent_again(crash, tmp_path, capsys,
                                                                                      monkeypatch):
    up = HttpUpstream(tmp_path / "files")
    try:
        monkeypatch.setenv("COUNTERSIGN_UPSTREAM_PRIVATE", "1")
        crash.start(**PRIVATE)
        data = ("--data", str(crash.data), "--email", crash.person.email)
        filed = run_cli(capsys, "upstream", "add", "fs", "--url", up.url, "--header", "X-Key: k-1234567890abcdef",
                        *data)
        assert filed["title"] == "Put the MCP server fs behind the gate?"
        assert run_cli(capsys, "upstream", "list", *data) == []  # nothing changes before the click
        assert crash.click(filed["confirmation_id"]).status_code == 200
        listed = run_cli(capsys, "upstream", "list", *data)
        assert listed[0]["name"] == "fs" and listed[0]["credential"] is True
        assert "k-1234567890abcdef" not in json.dumps(listed)
        card_id = crash.call("fs__write_file", {"path": "a.txt", "content": "x"})["confirmationId"]
        crash.start(countersign_fault="after_outside", **PRIVATE, **DYING)
        with pytest.raises(Exception):  # noqa: B017 - the connection drops with the process
            crash.click(card_id)
        assert crash.server.killed(), crash.server.output()
        assert up.calls() == ["write_file a.txt"] and up.read("a.txt") == "x"
        assert crash.card(card_id).state is S.RUNNING
        crash.start(**PRIVATE, **FAST)
        crash.wait_for(lambda: crash.card(card_id).state is S.FAILED, what="the recovered card")
        card = crash.card(card_id)
        assert card.result["error"].startswith("Outcome unknown:") and "it is not sent again" in card.result["error"]
        assert up.calls() == ["write_file a.txt"]
    finally:
        up.kill()
