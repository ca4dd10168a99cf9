"""mcp-remote (npm), the stdio proxy desktop hosts put in front of remote servers, with a 2025-era
host behind it: in its plain mode (the host's own 2025-11-25 session goes through) and with
``--protocol auto`` (mcp-remote speaks 2026-07-28 to countersign on the host's behalf, and can put
form questions to the host, but not URL questions).

The agent always gets a held call's reply (id, links, instructions), whichever way it went.
``scripts/test`` installs mcp-remote into tests/clients/node_modules (see tests/clients/package.json).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.harness import TRANSCRIPT, assert_recorded

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
EDIT = {"note_id": "n1", "text": "through mcp-remote"}
MODES = ["legacy", "auto"]


def _run(tenant, mode: str, tool: str, args: dict, answer: str) -> dict:
    if shutil.which("node") is None or not (CLIENTS / "node_modules" / "mcp-remote").is_dir():
        pytest.fail("mcp-remote is not installed: run scripts/bootstrap --node (needs node and npm)")
    out = subprocess.run(["node", str(CLIENTS / "remote.mjs"), tenant.url, tenant.token, mode, tool, json.dumps(args),
                          answer], capture_output=True, text=True, timeout=90, cwd=CLIENTS)
    assert out.returncode == 0, out.stderr
    TRANSCRIPT.append(out.stdout.encode("utf-8"))  # what reached the host joins the secret scan
    run = json.loads(out.stdout.strip().splitlines()[-1])
    assert "error" not in run, run
    return run


@pytest.mark.parametrize("mode", MODES)
def test_a_card_for_a_host_that_declares_url_questions_still_gives_the_held_reply(tenant, mode):
    run = _run(tenant, mode, "publish_note", EDIT, "accept")
    body = run["result"]["structuredContent"]
    assert body["status"] == "pending" and body["confirmationUrl"].endswith(body["confirmationId"])
    assert body["pendingUrl"].endswith("/confirm") and "poll get_confirmation_status" in body["instructions"]
    if mode == "legacy":  # the 2025 session: shown the page during the call, then the reply
        assert [q.get("mode") for q in run["questions"]] == ["url"]
        assert run["questions"][0]["url"] == body["confirmationUrl"]
    else:  # never a URL question mcp-remote could not put to its host
        assert run["questions"] == []
    assert tenant.note("n1")["text"] == "text 1"
    card = tenant.confirm_on_page(body["confirmationId"])
    assert card.state.value == "completed" and tenant.note("n1")["text"] == "through mcp-remote"


@pytest.mark.parametrize("mode", MODES)
def test_a_yes_in_the_host_applies_once(tenant, mode):
    before = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1").version
    run = _run(tenant, mode, "edit_note", EDIT, "accept")
    body = run["result"]["structuredContent"]
    assert body["status"] == "completed" and body["answeredVia"] == "client", body
    (question,) = run["questions"]  # the host was asked once
    assert question["message"] == "Change note ‘Note 1’?\ntext 1 → through mcp-remote"
    assert question["requestedSchema"]["required"] == ["confirm"]
    after = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
    assert after.data["text"] == "through mcp-remote" and after.version == before + 1  # written exactly once
    now = tenant.runtime.desk.now()
    pending, _ = tenant.store.cards.list_pending_cards(tenant.workspace_id, tenant.person.id, now)
    done, _ = tenant.store.cards.list_card_history(tenant.workspace_id, tenant.person.id, now)
    assert pending == [] and [card.id for card in done] == [body["confirmationId"]]  # one request, answered
    assert_recorded(tenant, body["confirmationId"], "completed", "client", ["filed", "completed"])


@pytest.mark.parametrize("mode", MODES)
def test_a_no_in_the_host_and_a_host_that_cannot_ask(tenant, mode):
    declined = _run(tenant, mode, "edit_note", EDIT, "decline")["result"]["structuredContent"]
    assert declined["status"] == "declined" and "askAgainAfter" in declined
    other = _run(tenant, mode, "edit_note", {"note_id": "n2", "text": "no questions"}, "none")
    held = other["result"]["structuredContent"]
    assert held["status"] == "pending" and other["questions"] == []
    assert tenant.note("n1")["text"] == "text 1" and tenant.note("n2")["text"] == "text 2"


@pytest.mark.parametrize("mode", MODES)
def test_bad_input_reaches_the_host_as_the_products_sentence(tenant, mode):
    run = _run(tenant, mode, "edit_note", {"note_id": "n1", "txt": "typo"}, "none")
    assert run["result"]["isError"] is True
    text = run["result"]["content"][0]["text"]
    assert "txt: edit_note has no argument named ‘txt’; did you mean ‘text’?" in text
