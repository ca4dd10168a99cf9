"""``countersign smoke`` against the live local server on 127.0.0.1: ``smoke setup`` makes the smoke
workspace and its credentials, ``smoke --url`` files a card over MCP, confirms it on the confirm
API, checks it completed once and cleans up, in one line with an exit status. The credentials can do
nothing else: the smoke session only reads and answers cards, the smoke agent files only
``countersign_smoke``, which runs nowhere but in the smoke workspace."""

from __future__ import annotations

import json
import stat

import httpx2
import pytest

from countersign.cli import main
from countersign.core.card_states import CardState
from countersign.core.smoke import SMOKE_EMAIL, SMOKE_TOOL, SMOKE_WORKSPACE_ID
from countersign.store.hashes import secret_hash
from tests.support.harness import mcp_client


@pytest.fixture
def smoke(live, tmp_path, capsys):
    """(the server's origin, the credentials file, its JSON) after ``countersign smoke setup``."""
    runtime, server = live
    path = tmp_path / "smoke.json"
    assert main(["smoke", "setup", "--data", str(runtime.settings.data_dir), "--out", str(path)]) == 0
    said = capsys.readouterr().out
    assert f"written to {path} (mode 0600)" in said and "countersign smoke --url" in said
    return server.origin, path, json.loads(path.read_text())


def run(capsys, *args: str) -> tuple[int, str]:
    status = main(["smoke", *args])
    out = capsys.readouterr()
    return status, out.out + out.err


def smoke_cards(runtime, state: CardState | None = None):
    person = runtime.store.workspaces.get_person_by_email(SMOKE_EMAIL)
    now = runtime.desk.now()
    pending, _ = runtime.store.cards.list_pending_cards(SMOKE_WORKSPACE_ID, person.id, now, limit=100)
    done, _ = runtime.store.cards.list_card_history(SMOKE_WORKSPACE_ID, person.id, now, limit=100)
    cards = [runtime.store.cards.get_card(SMOKE_WORKSPACE_ID, c.id, now) for c in [*pending, *done]]
    return [c for c in cards if state is None or c.state is state]


def test_the_smoke_test_files_confirms_and_cleans_up_in_one_line(live, smoke, capsys):
    runtime, _ = live
    origin, path, credentials = smoke
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert set(credentials) == {"agent_token", "session", "csrf_token", "expires_at"}
    assert credentials["expires_at"] - runtime.desk.now() >= 399 * 86400

    status, said = run(capsys, "--url", origin, "--credentials", str(path))

    assert status == 0, said
    assert said.count("\n") == 1 and said.startswith(f"smoke ok: {origin} card c")
    assert "filed over MCP, confirmed on the confirm API, completed once, nothing waiting (" in said
    completed = smoke_cards(runtime, CardState.COMPLETED)
    assert len(completed) == 1 and completed[0].tool == SMOKE_TOOL and completed[0].channel == "page"
    assert completed[0].id in said
    assert smoke_cards(runtime, CardState.PENDING) == []
    person = runtime.store.workspaces.get_person_by_email(SMOKE_EMAIL)
    assert (person.role, person.agent_requests_email) == ("member", False)
    for secret in (credentials["agent_token"], credentials["session"], credentials["csrf_token"]):
        assert secret not in said

    assert run(capsys, "--url", origin, "--credentials", str(path))[0] == 0  # and again, every 5 minutes
    assert len(smoke_cards(runtime, CardState.COMPLETED)) == 2


def test_a_failed_step_is_named_and_its_card_withdrawn_by_the_next_run(live, smoke, capsys):
    runtime, _ = live
    origin, path, credentials = smoke
    broken = path.with_name("broken.json")
    broken.write_text(json.dumps({**credentials, "session": "not-the-session"}))

    status, said = run(capsys, "--url", origin, "--credentials", str(broken))

    assert status == 1
    assert said.startswith("smoke FAILED at read: GET /api/cards/c")
    assert "answered 401 (signed_out), expected 200" in said
    assert "may still wait (the next run withdraws it)" in said and said.count("\n") == 1
    (waiting,) = smoke_cards(runtime, CardState.PENDING)

    status, said = run(capsys, "--url", origin, "--credentials", str(path))

    assert status == 0 and said.rstrip().endswith("s)") and "; withdrew 1 left by an earlier run (" in said
    assert runtime.store.cards.get_card(SMOKE_WORKSPACE_ID, waiting.id, runtime.desk.now()).state is CardState.WITHDRAWN
    assert smoke_cards(runtime, CardState.PENDING) == []


def test_setup_again_stops_the_earlier_credentials(live, smoke, capsys, tmp_path):
    runtime, _ = live
    origin, path, _ = smoke
    fresh = tmp_path / "fresh.json"
    assert main(["smoke", "setup", "--data", str(runtime.settings.data_dir), "--out", str(fresh)]) == 0
    capsys.readouterr()

    status, said = run(capsys, "--url", origin, "--credentials", str(path))

    assert status == 1 and said.startswith("smoke FAILED at connect: "), said
    assert run(capsys, "--url", origin, "--credentials", str(fresh))[0] == 0


def test_the_smoke_session_only_reads_and_answers_cards(live, smoke):
    runtime, _ = live
    origin, _, credentials = smoke
    headers = {"Cookie": f"__Host-cs_session={credentials['session']}", "Origin": origin,
               "X-CSRF-Token": credentials["csrf_token"]}
    with httpx2.Client(base_url=origin, headers=headers) as page:
        assert page.get("/api/session").json()["person"]["email"] == SMOKE_EMAIL
        assert page.get("/api/cards").status_code == 200
        for method, path, body in (("GET", "/api/settings", None), ("GET", "/api/connections", None),
                                   ("POST", "/api/connections", {"name": "mine"}),
                                   ("PATCH", "/api/settings/me", {"agent_requests_email": True}),
                                   ("PATCH", "/api/settings/workspace", {"confirm_in_client": False}),
                                   ("GET", "/api/settings/members", None), ("GET", "/api/passkeys", None),
                                   ("POST", "/api/passkeys/register/options", {}),
                                   ("GET", "/api/oauth/requests/r1", None),
                                   ("POST", "/api/settings/upstreams", {"name": "x", "url": "https://x.example"}),
                                   ("POST", "/api/signout", None)):
            response = page.request(method, path, json=body)
            assert response.status_code == 403, (method, path, response.text)
            assert response.json()["error"] == {"code": "smoke_only", "message": (
                "The smoke test's credential may only read and answer the smoke workspace's cards.")}, path
    person = runtime.store.workspaces.get_person_by_email(SMOKE_EMAIL)
    assert [c.name for c in runtime.store.connections.list_connections(SMOKE_WORKSPACE_ID, person.id)
            if not c.revoked] == ["countersign smoke"]
    assert runtime.store.sessions.get_session(secret_hash(credentials["session"]), runtime.desk.now()) is not None


@pytest.mark.anyio
async def test_the_smoke_agent_files_countersign_smoke_only(live, smoke):
    _, _, credentials = smoke
    origin = smoke[0]
    async with mcp_client(f"{origin}/mcp", credentials["agent_token"]) as agent:
        for name, arguments in (("request_confirmation", {"tool": "edit_note", "arguments": {"note_id": "n1",
                                                                                             "text": "x"}}),
                                ("edit_note", {"note_id": "n1", "text": "x"})):
            result = await agent.call_tool(name, arguments)
            assert result.is_error, name
            assert "In the smoke workspace an agent may file countersign_smoke only. Nothing was written." in \
                result.content[0].text


@pytest.mark.anyio
async def test_countersign_smoke_is_in_no_tool_list_and_unknown_in_a_real_workspace(tenant):
    async with tenant.client() as agent:
        assert SMOKE_TOOL not in {t.name for t in (await agent.list_tools()).tools}
        result = await agent.call_tool("request_confirmation", {"tool": SMOKE_TOOL,
                                                                "arguments": {"run": "smoke_0123456789"}})
    assert result.is_error and "Unknown tool 'countersign_smoke'." in result.content[0].text
    assert tenant.store.cards.list_pending_cards(tenant.workspace_id, tenant.person.id, tenant.runtime.desk.now(),
                                                 limit=10)[0] == []


@pytest.mark.parametrize(("url", "why"), [
    ("http://confirm.example.com", "plain http only to this machine"),
    ("ftp://localhost", "is not an http(s) URL"),
    ("https://confirm.example.com/?a=1", "without a user, query or fragment"),
])
def test_plain_http_beyond_loopback_and_odd_urls_are_refused_before_any_request(url, why, capsys, tmp_path):
    status, said = run(capsys, "--url", url, "--credentials", str(tmp_path / "none.json"))
    assert status == 2 and said.startswith("configuration error: --url: ") and why in said


def test_credentials_that_are_not_the_smokes_are_refused(capsys, tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"token": "x"}')
    status, said = run(capsys, "--url", "http://127.0.0.1:9", "--credentials", str(path))
    assert status == 2 and "not the smoke credentials `countersign smoke setup` writes" in said
    status, said = run(capsys, "--url", "http://127.0.0.1:9")
    assert status == 2 and "--credentials FILE or --secret ARN" in said
