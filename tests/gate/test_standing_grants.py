"""Standing grants through the gate (both stores): a person grants one connection a bounded
permission by confirming a card; a call inside it runs at once, through the runner (one card filed
decided, its audit naming the grant, the use consumed in its commit); a call outside it — over a
bound, after expiry or revocation, ruled out by the owner — waits for the person as any call does,
and the held reply says why no grant covered it. Bad grants are refused with a sentence and nothing
is written; an agent cannot even ask for one."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from countersign.core.card_states import CardState
from countersign.core.times import iso
from countersign.gate import ask as gate_ask, standing_grants
from countersign.gate.passkey_policy import TOOLSET as PASSKEYS
from countersign.gate.question import Question
from countersign.gate.registry import Registry
from countersign.identity import accounts
from countersign.store.sqlite import SQLiteStore
from countersign.toolkit import ActionError
from countersign.toolsets.budget import TOOLSET as BUDGET
from tests.support.serial_moto import serialized_transactions
from tests.support.stepped_toolset import TOOLSET as STEPPED

from .world import GateWorld

DAY = 86400


def with_grants(world: GateWorld) -> GateWorld:
    """The world's desk serving what every deployment serves beside its toolsets: the passkey
    policy and standing grants (as countersign.runtime.build adds them)."""
    registry: Registry
    grants = standing_grants.toolset(lambda tool: registry.agent_action(tool), world.store.connections.get_connection)
    registry = Registry([BUDGET, STEPPED, PASSKEYS, grants])
    world.desk.registry = registry
    return world


@pytest.fixture
def w(world):
    return with_grants(world)


def budget(category: str = "cat_groceries", amount: str = "450.00") -> dict[str, Any]:
    return {"category_id": category, "month": "current", "amount": amount}


def grant_args(w: GateWorld, **changes: Any) -> dict[str, Any]:
    args = {"connection_id": w.plain.connection.id, "tool": "set_category_budget", "name": "Groceries top-up",
            "limits": {"amount": "500.00", "category_id": ["cat_groceries", "cat_household"]}, "uses": 3,
            "days": 7}
    args.update(changes)
    return args


def file_grant(w: GateWorld, **changes: Any):
    """The person files the grant from the confirm page: a card that waits on them."""
    action = w.desk.registry.action("create_standing_grant")
    ctx = w.desk.context(w.workspace.id, w.person, None, w.desk.now())
    card, _ = w.desk.file(Question.of(action, grant_args(w, **changes), ctx), "page")
    return card


def grant(w: GateWorld, **changes: Any):
    """Filed and confirmed: the grant, as its card's commit made it."""
    card = w.click(file_grant(w, **changes).id)
    assert card.state is CardState.COMPLETED, card
    return w.store.standing_grants.get_standing_grant(w.workspace.id, card.result["result"]["grant_id"])


def reply(w: GateWorld, args: dict[str, Any], principal=None) -> dict[str, Any]:
    done = w.call("set_category_budget", args, principal)
    assert isinstance(done, gate_ask.Done), done
    return done.payload


def budgeted(w: GateWorld, category: str = "cat_groceries") -> int:
    month = w.store.docs.get_doc(w.workspace.id, "budget_month", "2026-09-01")
    return month.data.get("budgeted", {}).get(category, 0) if month else 0


def test_a_grant_is_a_card_the_person_confirms(w):
    card = file_grant(w)
    assert card.state is CardState.PENDING and card.connection_id == ""
    assert card.title == "Let Agent without elicitation run set_category_budget without asking: Groceries top-up"
    assert card.lines == (
        "Amount budgeted: at most 500.00 a call", "Categories: Groceries, Household", "At most 3 uses",
        "For 7 days from when you confirm",
        "Each use still runs through the gate: re-planned, audited, with a receipt naming this grant",
        "Revoke it in Settings at any time; the next call then waits for you again")
    assert w.store.standing_grants.list_standing_grants(w.workspace.id) == []  # nothing until confirmed
    done = w.click(card.id)
    made = w.store.standing_grants.list_standing_grants(w.workspace.id)
    assert [(g.name, g.tool, g.connection_id, g.max_uses, g.expires_at - g.created_at, g.limits) for g in made] == [
        ("Groceries top-up", "set_category_budget", w.plain.connection.id, 3, 7 * DAY,
         {"amount": {"max": 500_000}, "category_id": {"in": ["cat_groceries", "cat_household"]}})]
    assert w.desk.registry.action("create_standing_grant").outcome_lines(done.result["result"]) == [
        f"Granted Groceries top-up: Agent without elicitation may run set_category_budget 3 times without asking, "
        f"until {iso(made[0].expires_at).replace('T', ' ').rstrip('Z')} UTC"]


def test_a_call_inside_the_grant_runs_at_once_through_the_gate_and_names_the_grant(w):
    g = grant(w)
    out = reply(w, budget())
    assert out["status"] == "completed" and out["answeredVia"] == "grant"
    assert out["message"] == f"Ran under grant ‘Groceries top-up’: 2 of 3 uses left, expires {iso(g.expires_at)}."
    assert out["grant"] == {"id": g.id, "name": "Groceries top-up", "usesLeft": 2, "uses": 3,
                            "expiresAt": iso(g.expires_at)}
    assert budgeted(w) == 450_000
    card = w.card(out["confirmationId"])
    assert (card.state, card.channel, card.result["grant"]) == (CardState.COMPLETED, "grant",
                                                                {"id": g.id, "name": "Groceries top-up"})
    trail = w.store.cards.audit_trail(w.workspace.id, card.id)
    assert [(e.event, e.actor, e.channel) for e in trail] == [
        ("filed", f"connection:{w.plain.connection.id}", "grant"), ("completed", f"person:{w.person.id}", "grant")]
    assert card.filed_by == f"connection:{w.plain.connection.id}"  # the agent asked; the grant answered
    assert trail[-1].detail == f"under standing grant ‘Groceries top-up’ ({g.id})"
    uses = w.store.standing_grants.list_standing_grant_uses(w.workspace.id, g.id)
    assert [(u.card_id, u.amount) for u in uses] == [(card.id, 450_000)]


def held_with(w: GateWorld, args: dict[str, Any], *notes: str, principal=None) -> dict[str, Any]:
    before = budgeted(w, args["category_id"])
    out = reply(w, args, principal)
    assert out["status"] == "pending", out
    assert out.get("standingGrants") == (list(notes) or None)
    assert budgeted(w, args["category_id"]) == before
    return out


def test_a_call_over_a_bound_waits_for_the_person_and_says_why(w):
    g = grant(w)
    held_with(w, budget(amount="500.01"),
              "Not run under grant ‘Groceries top-up’: 500.01 is over its limit of 500.00 a call.")
    held_with(w, budget("cat_tennis", "20.00"), "Not run under grant ‘Groceries top-up’: its category_id is not one "
              "the grant allows (categories).")
    assert w.store.standing_grants.get_standing_grant(w.workspace.id, g.id).uses == 0


def test_the_cap_and_the_uses_run_out(w):
    grant(w, cap="700.00", uses=2)
    assert reply(w, budget(amount="350.00"))["status"] == "completed"
    held_with(w, budget("cat_household", "350.01"),
              "Not run under grant ‘Groceries top-up’: 350.01 would pass its cap: 350.00 of 700.00 used.")
    done = reply(w, budget("cat_household", "350.00"))
    assert done["message"].startswith("Ran under grant ‘Groceries top-up’: 0 of 2 uses left, expires ")
    assert done["message"].endswith("; 0.00 of 700.00 left under its cap.")
    held_with(w, budget(amount="1.00"), "Not run under grant ‘Groceries top-up’: its 2 uses are used up.")


def test_after_revocation_or_expiry_the_next_call_waits(w):
    g = grant(w)
    w.store.standing_grants.revoke_standing_grant(w.workspace.id, g.id, f"person:{w.person.id}", w.clock)
    held_with(w, budget(), "Not run under grant ‘Groceries top-up’: it was revoked.")
    g2 = grant(w, name="Second")
    w.clock = g2.expires_at
    held_with(w, budget(amount="10.00"), "Not run under grant ‘Groceries top-up’: it was revoked.",
              f"Not run under grant ‘Second’: it expired at {iso(g2.expires_at)}.")


def test_another_connection_is_not_covered(w):
    grant(w)
    out = reply(w, budget(), w.asking)  # (a client that cannot ask in this call: a card)
    assert out["status"] == "pending" and "standingGrants" not in out


def test_an_owner_rule_stops_grants_made_before_it_and_refuses_new_ones(w):
    grant(w)
    w.store.workspaces.update_workspace_settings(w.workspace.id, {"standing_grants_never": ["over:400"]})
    held_with(w, budget(amount="450.00"), "Not run under grant ‘Groceries top-up’: the workspace's owner has ruled "
              "that no standing grant may cover an amount over 400.00, and this is 450.00.")
    with pytest.raises(ActionError) as refused:
        file_grant(w, name="Bigger")
    assert refused.value.message == ("limits.amount: The workspace's owner has ruled that no standing grant may cover "
                                     "an amount over 400.00, and this is 500.00. Nothing was granted.")
    rule = {"standing_grants_never": ["tool:set_category_budget"]}
    w.store.workspaces.update_workspace_settings(w.workspace.id, rule)
    held_with(w, budget(amount="10.00"), "Not run under grant ‘Groceries top-up’: the workspace's owner has ruled "
              "that no standing grant may cover set_category_budget.")


def test_a_grant_made_without_a_passkey_does_not_cover_what_the_policy_now_covers(w):
    grant(w)
    w.store.workspaces.update_workspace_settings(w.workspace.id, {"passkey_policy": "every"})
    held_with(w, budget(), "Not run under grant ‘Groceries top-up’: it was granted without a passkey and the "
              "workspace's passkey policy now asks for one for this request.")


@pytest.mark.parametrize("changes, message", [
    ({"limits": {"amount": "500", "category_id": ["cat_groceries"], "payee": "x"}},
     "limits.payee: set_category_budget does not declare 'payee' as something a grant may bound; it declares "
     "amount (amount budgeted), category_id (categories). Nothing was granted."),
    ({"limits": {"amount": "500"}}, "limits.category_id: required: every bound set_category_budget declares is set "
                                    "(amount (amount budgeted), category_id (categories))."),
    ({"limits": {"amount": "500.001", "category_id": ["cat_groceries"]}},
     "limits.amount: 500.001 has more decimals than this amount takes (at most 2 decimals)."),
    ({"limits": {"amount": "500", "category_id": ["cat_elsewhere"]}},
     "limits.category_id: 'cat_elsewhere' is not one of this workspace's choices."),
    ({"tool": "create_transactions"}, "tool: create_transactions declares nothing a standing grant could bound, so no "
                                      "grant can cover it."),
    ({"tool": "create_standing_grant"}, "tool: Unknown tool 'create_standing_grant'."),
    ({"connection_id": "c_nowhere"}, "connection_id: no connection 'c_nowhere' in this workspace. Nothing was "
                                     "granted."),
    ({"cap": "0"}, "cap: must be more than zero."),
])
def test_a_bad_grant_is_refused_with_a_sentence_and_nothing_is_filed(w, changes, message):
    with pytest.raises(ActionError) as refused:
        file_grant(w, **changes)
    assert refused.value.message == message
    assert w.store.cards.list_pending_cards(w.workspace.id, w.person.id, w.clock)[0] == []


@pytest.mark.parametrize("changes", [{"days": 31}, {"uses": 0}, {"uses": "3"}])
def test_the_argument_checker_refuses_an_expiry_over_30_days_and_bad_uses(w, changes):
    with pytest.raises(ActionError) as refused:
        file_grant(w, **changes)
    assert next(iter(changes)) in refused.value.message and "Nothing was written." in refused.value.message


def test_a_grant_for_another_persons_or_workspaces_connection_or_a_revoked_one_is_refused(w, store):
    colleague = accounts.add_person(store.workspaces, w.workspace.id, "colleague@example.com", now=w.clock)
    theirs = accounts.create_connection(store.workspaces, store.connections, w.workspace.id, colleague.id,
                                        "Their agent").connection
    with pytest.raises(ActionError) as refused:
        file_grant(w, connection_id=theirs.id)
    assert refused.value.message == ("connection_id: that connection is another person's; only the person it acts "
                                     "for can give it a standing grant. Nothing was granted.")
    other_ws, other_person = accounts.create_workspace(store.workspaces, "Elsewhere", "else@example.com", now=w.clock)
    elsewhere = accounts.create_connection(store.workspaces, store.connections, other_ws.id, other_person.id,
                                           "Their agent").connection
    with pytest.raises(ActionError) as refused:
        file_grant(w, connection_id=elsewhere.id)
    assert refused.value.message == f"connection_id: no connection {elsewhere.id!r} in this workspace. Nothing was " \
                                    "granted."
    store.connections.revoke_connection(w.workspace.id, w.plain.connection.id, w.clock, "person")
    with pytest.raises(ActionError) as refused:
        file_grant(w)
    assert refused.value.message == ("connection_id: Agent without elicitation was revoked; it can be granted nothing."
                                     " Nothing was granted.")


def test_an_agent_cannot_grant_itself_anything(w):
    with pytest.raises(ActionError) as refused:
        w.call("create_standing_grant", grant_args(w))
    assert refused.value.message == "Unknown tool 'create_standing_grant'."
    with pytest.raises(ActionError):
        asyncio.run(gate_ask.request_card(w.desk, w.plain, "create_standing_grant", grant_args(w)))
    assert w.store.cards.list_pending_cards(w.workspace.id, w.person.id, w.clock)[0] == []


# -- races through the whole gate --------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "dynamodb"])
def racing(request, tmp_path):
    if request.param == "sqlite":
        s = SQLiteStore(str(tmp_path / "gate-grant-races.db"))
        yield with_grants(GateWorld(s))
        s.close()
        return
    from tests.support.aws import moto_dynamodb_store

    with moto_dynamodb_store() as s, serialized_transactions():
        yield with_grants(GateWorld(s))


@pytest.mark.parametrize("last", ["use", "cap"])
def test_two_calls_racing_for_the_last_use_or_cap_exactly_one_runs(racing, last):
    w = racing
    g = grant(w, uses=1) if last == "use" else grant(w, uses=5, cap="500.00")
    calls = [budget("cat_groceries", "300.00"), budget("cat_household", "300.00")]
    barrier = threading.Barrier(2)

    def call(args):
        barrier.wait()
        return reply(w, args)

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(call, calls))
    assert sorted(o["status"] for o in outcomes) == ["completed", "pending"], outcomes
    after = w.store.standing_grants.get_standing_grant(w.workspace.id, g.id)
    assert (after.uses, after.spent) == (1, 300_000)
    groceries_ran = outcomes[0]["status"] == "completed"
    assert (budgeted(w, "cat_groceries"), budgeted(w, "cat_household")) == (
        (300_000, 0) if groceries_ran else (400_000, 300_000))
    ran = [o for o in outcomes if o["status"] == "completed"][0]
    assert [u.card_id for u in w.store.standing_grants.list_standing_grant_uses(w.workspace.id, g.id)] == [
        ran["confirmationId"]]


# -- the connection's hint: its grants are read only when one could cover the call or be named --------


def as_read(w: GateWorld, principal=None):
    """The caller as a call reads it: its connection as it is now (with the tools it holds grants for)."""
    principal = principal or w.plain
    return dataclasses.replace(principal, connection=w.store.connections.get_connection(
        w.workspace.id, principal.connection.id))


def test_a_caller_read_afresh_is_covered_and_an_ended_grant_is_named_until_a_day_past_its_expiry(w):
    assert as_read(w).connection.grants_until == {}
    held_with(w, budget(amount="5.00"), principal=as_read(w))  # no grant: held, nothing to say
    g = grant(w)
    assert as_read(w).connection.grants_until == {"set_category_budget": g.expires_at}
    assert reply(w, budget(), as_read(w))["answeredVia"] == "grant"
    w.store.standing_grants.revoke_standing_grant(w.workspace.id, g.id, f"person:{w.person.id}", w.clock)
    held_with(w, budget(amount="10.00"), "Not run under grant ‘Groceries top-up’: it was revoked.",
              principal=as_read(w))
    w.clock = g.expires_at + standing_grants.NOTED_FOR - 1
    held_with(w, budget(amount="11.00"), "Not run under grant ‘Groceries top-up’: it was revoked.",
              principal=as_read(w))
    w.clock = g.expires_at + standing_grants.NOTED_FOR
    held_with(w, budget(amount="12.00"), principal=as_read(w))


def test_a_grant_for_one_tool_leaves_the_others_unread_and_another_connection_unread(w):
    grant(w)
    assert as_read(w, w.asking).connection.grants_until == {}
    out = reply(w, budget(), as_read(w, w.asking))
    assert out["status"] == "pending" and "standingGrants" not in out


@pytest.fixture
def on_dynamodb():
    """The gate on DynamoDB (moto), each Query the store's client sends noted by what it asked for."""
    from tests.support.aws import moto_dynamodb_store

    with moto_dynamodb_store() as store:
        world = with_grants(GateWorld(store))
        world.queries = []

        def noted(params, **_):
            world.queries.append(str(params.get("ExpressionAttributeValues", {}).get(":prefix", {}).get("S", "")))

        store.client.meta.events.register("provide-client-params.dynamodb.Query", noted)
        yield world


def test_on_dynamodb_a_held_call_reads_the_grants_only_when_its_connection_holds_one_for_the_tool(on_dynamodb):
    w = on_dynamodb
    held_with(w, budget(amount="5.00"), principal=as_read(w))
    assert "SGRANT#" not in w.queries  # no grant: not one query of them
    g = grant(w)
    w.queries.clear()
    held_with(w, budget(amount="500.01"),
              "Not run under grant ‘Groceries top-up’: 500.01 is over its limit of 500.00 a call.",
              principal=as_read(w))
    assert w.queries.count("SGRANT#") == 1
    w.queries.clear()
    held_with(w, budget(amount="20.00"), principal=as_read(w, w.asking))  # (another connection: none for it)
    assert "SGRANT#" not in w.queries
    w.clock = g.expires_at + standing_grants.NOTED_FOR
    w.queries.clear()
    held_with(w, budget(amount="13.00"), principal=as_read(w))
    assert "SGRANT#" not in w.queries
