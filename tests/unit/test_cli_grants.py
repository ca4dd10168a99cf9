"""``countersign grants grant``, ``list`` and ``revoke``: what the confirm page's "Allow this again…"
and Settings, Grants do, from the command line. ``grant`` only files the held request; the grant
is made by the member's Confirm of its card; a call inside it runs at once and is listed as a use;
revoking stops the next call. Bad input is refused with the sentence the page gets, nothing filed."""

from __future__ import annotations

import json
from dataclasses import replace

import anyio
import pytest

from countersign import cli, settings as settings_mod
from countersign.core.card_states import CardState
from countersign.gate import ask as gate_ask, clicks
from countersign.runtime import build
from countersign.surfaces.local.demo import seed_demo
from tests.support.stores import principal_by_token

GROCERIES = ("--tool", "set_category_budget", "--name", "Groceries top-up", "--limit", "amount=500.00",
             "--limit", "category_id=cat_groceries", "--uses", "2", "--days", "7")


@pytest.fixture
def demo(tmp_path, clean_env):
    data = tmp_path / "data"
    runtime = build(settings_mod.load({"COUNTERSIGN_DATA": str(data)}))
    info = seed_demo(runtime)
    principal = principal_by_token(runtime.store, info["agent_token"])
    return str(data), runtime, info, principal


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _budget(runtime, principal, amount: str) -> dict:
    # its connection read afresh, as every call reads its caller (it says which tools it holds grants for)
    principal = replace(principal, connection=runtime.store.connections.get_connection(
        principal.workspace.id, principal.connection.id))
    call = gate_ask.Call(principal=principal, tool="set_category_budget",
                         arguments={"category_id": "cat_groceries", "month": "current", "amount": amount})
    return anyio.run(gate_ask.ask, runtime.desk, call).payload


def test_grant_files_a_card_the_member_confirms_then_list_shows_its_use_and_revoke_stops_it(capsys, demo):
    data, runtime, info, principal = demo
    email = info["person_email"]
    code, out, err = _run(capsys, "grants", "grant", "--data", data, "--email", email,
                          "--connection", principal.connection.id, *GROCERIES)
    assert code == 0, err
    filed = json.loads(out)
    assert filed["title"].endswith("without asking: Groceries top-up")
    assert filed["lines"][:2] == ["Amount budgeted: at most 500.00 a call", "Categories: Groceries"]
    assert filed["url"].endswith(f"/confirm?card={filed['confirmation_id']}")
    assert f"nothing is granted until {email} confirms it on the page" in err
    code, out, _ = _run(capsys, "grants", "list", "--data", data, "--email", email)
    assert (code, json.loads(out)) == (0, [])  # nothing granted before the Confirm

    card = runtime.store.cards.get_card(principal.workspace.id, filed["confirmation_id"], runtime.desk.now())
    assert card.asker.kind == "cli" and card.state is CardState.PENDING
    confirmed = clicks.confirm_click(runtime.desk, principal.workspace.id, principal.person, card.id)
    assert confirmed.state is CardState.COMPLETED
    ran = _budget(runtime, principal, "450.00")
    assert ran["status"] == "completed" and ran["answeredVia"] == "grant", ran

    code, out, err = _run(capsys, "grants", "list", "--data", data, "--email", email)
    assert code == 0
    (grant,) = json.loads(out)
    assert (grant["name"], grant["tool"], grant["state"], grant["usesLeft"], grant["uses"], grant["yours"]) == (
        "Groceries top-up", "set_category_budget", "active", 1, 2, True)
    assert grant["terms"] == ["Amount budgeted: at most 500.00 a call", "Categories: Groceries"]
    assert [(u["cardId"], u["amount"]) for u in grant["useList"]] == [(ran["confirmationId"], "450.00")]
    assert "grants revoke GRANT_ID" in err and info["agent_token"] not in out + err

    code, out, err = _run(capsys, "grants", "revoke", grant["id"], "--data", data, "--email", email)
    assert code == 0 and json.loads(out)["state"] == "revoked"
    assert "the next call it would have covered waits for a person again" in err
    held = _budget(runtime, principal, "460.00")
    assert held["status"] == "pending"
    assert held["standingGrants"] == ["Not run under grant ‘Groceries top-up’: it was revoked."]
    code, out, err = _run(capsys, "grants", "revoke", grant["id"], "--data", data, "--email", email)
    assert code == 0 and "revoked already: nothing changed" in err


@pytest.mark.parametrize("change, message", [
    (("--limit", "memo=x"), "error: limits.memo: set_category_budget does not declare 'memo' as something a grant "
                            "may bound"),
    (("--days", "31"), "error: days: "),
    (("--tool", "publish_nothing"), "error: tool: "),
    (("--limit", "amount"), "error: --limit 'amount': write ARGUMENT=VALUE"),
])
def test_a_bad_grant_is_refused_and_nothing_is_filed(capsys, demo, change, message):
    data, runtime, info, principal = demo
    code, _, err = _run(capsys, "grants", "grant", "--data", data, "--email", info["person_email"],
                        "--connection", principal.connection.id, *GROCERIES, *change)
    assert code == 2 and err.startswith(message), err
    cards, _ = runtime.store.cards.list_pending_cards(principal.workspace.id, principal.person.id, runtime.desk.now())
    assert [c.tool for c in cards if c.tool == "create_standing_grant"] == []


def test_another_members_connection_or_grant_is_not_theirs(capsys, demo):
    data, runtime, info, principal = demo
    code, out, _ = _run(capsys, "member", "add", "bea@example.com", "--data", data,
                        "--workspace", principal.workspace.id)
    assert code == 0, out
    code, _, err = _run(capsys, "grants", "grant", "--data", data, "--email", "bea@example.com",
                        "--connection", principal.connection.id, *GROCERIES)
    assert code == 2 and "that connection is another person's" in err
    _run(capsys, "grants", "grant", "--data", data, "--email", info["person_email"],
         "--connection", principal.connection.id, *GROCERIES)
    code, out, _ = _run(capsys, "grants", "grant", "--data", data, "--email", info["person_email"],
                        "--connection", principal.connection.id, *GROCERIES)
    card_id = json.loads(out)["confirmation_id"]
    clicks.confirm_click(runtime.desk, principal.workspace.id, principal.person, card_id)
    grant_id = runtime.store.standing_grants.list_standing_grants(principal.workspace.id)[0].id
    code, _, err = _run(capsys, "grants", "revoke", grant_id, "--data", data, "--email", "bea@example.com")
    assert code == 2 and "has no grant" in err
    code, _, err = _run(capsys, "grants", "list", "--all", "--data", data, "--email", "bea@example.com")
    assert code == 2 and "only a workspace's owners and admins" in err
