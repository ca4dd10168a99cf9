"""``countersign connection list`` and ``revoke``: what the confirm page's Connections section does,
from the command line."""

from __future__ import annotations

import json
import shlex

import anyio
import pytest

from countersign import cli, settings as settings_mod
from countersign.core.card_states import CardState
from countersign.gate.ask import request_card
from countersign.runtime import build
from countersign.surfaces.local.demo import seed_demo
from countersign.surfaces.mcp.auth import REVOKED, BearerAuth
from tests.support.stores import principal_by_token


@pytest.fixture
def demo(tmp_path, clean_env):
    data = tmp_path / "data"
    runtime = build(settings_mod.load({"COUNTERSIGN_DATA": str(data)}))
    info = seed_demo(runtime)
    return str(data), runtime, info


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_shows_the_members_connections_and_never_a_token(capsys, demo):
    data, _runtime, info = demo
    code, out, _ = _run(capsys, "connection", "create", "--data", data, "--email", info["person_email"],
                        "--name", "Claude on laptop")
    assert code == 0
    made = json.loads(out)
    code, out, _ = _run(capsys, "connection", "list", "--data", data, "--email", info["person_email"])
    assert code == 0
    listed = json.loads(out)
    assert [c["name"] for c in listed][-1] == "Claude on laptop" and listed[-1]["id"] == made["connection_id"]
    assert all(set(c) == {"id", "name", "createdAt", "revoked", "revokedReason", "revokedWhy", "lastUsedAt", "oauth"}
               for c in listed)
    assert not any(c["revoked"] for c in listed)
    assert made["token"] not in out and info["agent_token"] not in out


def test_revoke_stops_the_token_and_withdraws_the_cards_it_filed(capsys, demo):
    data, runtime, info = demo
    principal = principal_by_token(runtime.store, info["agent_token"])
    held = anyio.run(request_card, runtime.desk, principal, "buy_credits", {"credits": 10})
    assert held["status"] == "pending"

    code, out, _ = _run(capsys, "connection", "revoke", principal.connection.id, "--data", data,
                        "--email", info["person_email"])
    assert code == 0
    answer = json.loads(out)
    assert answer["withdrawn_cards"] == 1 and answer["connection"]["revoked"] is True
    assert answer["connection"]["revokedReason"] == "operator"
    assert answer["connection"]["revokedWhy"] == "It was revoked from the command line."
    card = runtime.store.cards.get_card(principal.workspace.id, held["confirmationId"], runtime.desk.now())
    assert card.state is CardState.WITHDRAWN
    auth = BearerAuth(None, runtime.store)
    assert anyio.run(auth.authenticate, info["agent_token"]) == REVOKED

    code, out, err = _run(capsys, "connection", "revoke", principal.connection.id, "--data", data,
                          "--email", info["person_email"])
    assert code == 0 and json.loads(out)["withdrawn_cards"] == 0
    assert "revoked already: nothing changed" in err


def test_revoke_refuses_an_unknown_id_and_another_members_connection(capsys, demo):
    data, runtime, info = demo
    principal = principal_by_token(runtime.store, info["agent_token"])
    code, _, _ = _run(capsys, "workspace", "create", "--data", data, "--name", "Other", "--owner-email",
                      "other@example.com")
    assert code == 0
    for connection_id in ("k_nope", "not an id", principal.connection.id):
        code, out, err = _run(capsys, "connection", "revoke", connection_id, "--data", data,
                              "--email", "other@example.com")
        assert code == 2 and out == ""
        listing = f"countersign connection list --data {shlex.quote(data)} --email other@example.com"
        assert err == f"error: other@example.com has no connection {connection_id!r}; `{listing}` shows theirs\n"
    assert not runtime.store.connections.get_connection(principal.workspace.id, principal.connection.id).revoked
    code, _, err = _run(capsys, "connection", "list", "--data", data, "--email", "nobody@example.com")
    assert code == 2 and err == "error: no member with email 'nobody@example.com'\n"


def test_list_revokes_an_oauth_connection_whose_client_never_spent_its_code(capsys, demo):
    from countersign.identity.oauth import CODE_TTL, grants
    from countersign.store.authorizations import PendingAuthorization

    data, runtime, info = demo
    principal = principal_by_token(runtime.store, info["agent_token"])
    long_ago = runtime.desk.now() - CODE_TTL - 120
    pending = PendingAuthorization(
        request_hash="r1", client_id="https://client.example/meta.json", client_name="Slow client",
        redirect_uri="http://127.0.0.1:4000/cb", redirect_uri_provided_explicitly=True, code_challenge="c" * 43,
        resource="http://localhost:8000/mcp", created_at=long_ago, expires_at=long_ago + 600, state=None)
    clock = runtime.desk.clock
    runtime.desk.clock = lambda: long_ago
    try:
        allowed = grants.allow(runtime.desk, pending, principal.person, principal.workspace)
    finally:
        runtime.desk.clock = clock
    code, out, _ = _run(capsys, "connection", "list", "--data", data, "--email", info["person_email"])
    assert code == 0
    [shown] = [c for c in json.loads(out) if c["id"] == allowed.connection.id]
    assert shown["revoked"] is True and shown["oauth"]["connected"] is False
    assert runtime.store.connections.get_connection(principal.workspace.id, allowed.connection.id).revoked
    assert not runtime.store.connections.get_connection(principal.workspace.id, principal.connection.id).revoked
