"""MCP clients nobody here wrote: the TypeScript SDKs from npm, against the live local server.

``scripts/test`` installs them into tests/clients/node_modules (see tests/clients/package.json).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.harness import TRANSCRIPT

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
EDIT = {"note_id": "n1", "text": "from typescript"}


def _run(script: str, tenant, tool: str, args: dict, answer: str) -> dict:
    if shutil.which("node") is None or not (CLIENTS / "node_modules" / "@modelcontextprotocol").is_dir():
        pytest.fail("the TypeScript MCP clients are not installed: run scripts/bootstrap --node (needs node and npm)")
    out = subprocess.run(["node", str(CLIENTS / script), tenant.url, tenant.token, tool, json.dumps(args), answer],
                         capture_output=True, text=True, timeout=60, cwd=CLIENTS)
    assert out.returncode == 0, out.stderr
    TRANSCRIPT.append(out.stdout.encode("utf-8"))  # what the TypeScript client received joins the secret scan
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("script", ["sdk1.mjs", "client2.mjs"])
def test_held_call_applied_in_the_client(tenant, script):
    run = _run(script, tenant, "edit_note", EDIT, "accept")
    assert "error" not in run, run
    assert run["result"]["structuredContent"]["status"] == "completed"
    assert run["questions"][0]["message"] == "Change note ‘Note 1’?\ntext 1 → from typescript"
    assert tenant.note("n1")["text"] == "from typescript"
    if script == "sdk1.mjs":
        assert run["protocol"] == "2025-11-25"  # asked during the call on the stateful session
    else:
        assert run["era"] == "2026-07-28"  # asked through input_required


@pytest.mark.parametrize("script", ["sdk1.mjs", "client2.mjs"])
def test_held_call_without_elicitation_gets_a_card(tenant, script):
    run = _run(script, tenant, "edit_note", EDIT, "none")
    assert "error" not in run, run
    body = run["result"]["structuredContent"]
    assert body["status"] == "pending" and body["confirmationUrl"].endswith(body["confirmationId"])
    assert tenant.note("n1")["text"] == "text 1"


@pytest.mark.parametrize("script", ["sdk1.mjs", "client2.mjs"])
def test_decline_in_the_client(tenant, script):
    run = _run(script, tenant, "edit_note", EDIT, "decline")
    assert run["result"]["structuredContent"]["status"] == "declined"
    assert tenant.note("n1")["text"] == "text 1"


def test_client2_negotiates_2026(tenant):
    run = _run("client2.mjs", tenant, "list_notes", {}, "accept")
    assert run["era"] == "2026-07-28", run
    assert [n["id"] for n in run["result"]["structuredContent"]["notes"]] == ["n1", "n2"]
