"""``countersign policy export``, ``show`` and ``test``: the workspace's policy as one document, in
words, and what would happen to one call and which rule decided, on a real local store. All three
only read: a tested call files no card and uses no grant."""

from __future__ import annotations

import json

import pytest

from countersign import cli, settings as settings_mod
from countersign.core import lifetimes
from countersign.gate import clicks, quorum_rules
from countersign.identity import accounts
from countersign.runtime import build
from countersign.surfaces.local.demo import seed_demo
from tests.support.stores import principal_by_token

BIG_BUDGETS = {"id": "q_big", "name": "Big budgets", "when": "over:500", "needs": 2, "of": ["owner", "admin"],
               "decline": "any"}
SLOW = {"id": "e_slow", "name": "Slow answers", "when": "any", "after": 30, "add": ["admin"]}
RISKY_LIFETIME = {"risky": {"wait": 7200, "remind_before": 1800}}


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


def _set(runtime, principal, **changes) -> None:
    runtime.store.workspaces.update_workspace_settings(principal.workspace.id, changes)


def _grant(capsys, data, runtime, info, principal, limit: str = "500.00") -> None:
    """A standing grant made as a person makes one: filed by ``grants grant``, confirmed on the page."""
    code, out, err = _run(capsys, "grants", "grant", "--data", data, "--email", info["person_email"],
                          "--connection", principal.connection.id, "--tool", "set_category_budget",
                          "--name", "Groceries top-up", "--limit", f"amount={limit}",
                          "--limit", "category_id=cat_groceries", "--uses", "2", "--days", "7")
    assert code == 0, err
    clicks.confirm_click(runtime.desk, principal.workspace.id, principal.person, json.loads(out)["confirmation_id"])


def _budget(amount: str) -> str:
    return json.dumps({"category_id": "cat_groceries", "month": "current", "amount": amount})


def _test(capsys, data, info, tool: str, arguments: str) -> tuple[int, list[str], str]:
    code, out, err = _run(capsys, "policy", "test", "--data", data, "--email", info["person_email"],
                          "--tool", tool, "--args", arguments)
    return code, out.splitlines(), err


def _cards(runtime, principal) -> list:
    cards, _ = runtime.store.cards.list_pending_cards(principal.workspace.id, principal.person.id, runtime.desk.now())
    return cards


def test_export_gives_each_section_in_its_own_settings_form(capsys, demo):
    data, runtime, info, principal = demo
    _grant(capsys, data, runtime, info, principal)  # (before the passkey policy: a grant is risky)
    _set(runtime, principal, passkey_policy="risky", standing_grants_never=["tool:buy_credits", "over:900"],
         card_lifetimes=lifetimes.as_text(RISKY_LIFETIME), quorum_rules=json.dumps([BIG_BUDGETS]),
         escalation_rules=json.dumps([SLOW]))

    code, out, err = _run(capsys, "policy", "export", "--data", data, "--email", info["person_email"])
    assert code == 0, err
    policy = json.loads(out)
    assert list(policy) == ["version", "passkeyPolicy", "standingGrantsNever", "lifetimes", "quorum", "escalation",
                            "editable", "standingGrants"]
    assert (policy["version"], policy["passkeyPolicy"], policy["standingGrantsNever"]) == (
        1, "risky", ["tool:buy_credits", "over:900"])
    # Lifetimes as a person writes them (and as set_card_lifetimes takes them): they read back to the stored rules.
    assert policy["lifetimes"] == {"risky": {"wait": "2h", "remind_before": "30m"}}
    workspace = runtime.store.workspaces.get_workspace(principal.workspace.id)
    assert lifetimes.as_text(lifetimes.normal(policy["lifetimes"])) == workspace.setting("card_lifetimes")
    assert policy["quorum"] == [BIG_BUDGETS] == quorum_rules.rules_of(workspace)
    assert policy["escalation"] == [SLOW]
    assert policy["editable"] == {"buy_credits": ["credits"], "review_message": ["copy_text"],
                                  "set_category_budget": ["amount"]}
    # The grants as `grants list` shows them (read-only here).
    code, out, _ = _run(capsys, "grants", "list", "--data", data, "--email", info["person_email"])
    assert policy["standingGrants"] == json.loads(out)
    assert [(g["name"], g["state"], g["terms"]) for g in policy["standingGrants"]] == [
        ("Groceries top-up", "active", ["Amount budgeted: at most 500.00 a call", "Categories: Groceries"])]

    by_workspace = _run(capsys, "policy", "export", "--data", data, "--workspace", principal.workspace.id)
    assert by_workspace[0] == 0
    whole = json.loads(by_workspace[1])
    # The same document; every grant is listed, none "yours" (no member asked).
    assert [g.pop("yours") for g in whole["standingGrants"]] == [False]
    assert [g.pop("yours") for g in policy["standingGrants"]] == [True]
    assert whole == policy


def test_show_says_the_policy_in_the_words_settings_uses(capsys, demo):
    data, runtime, info, principal = demo
    _grant(capsys, data, runtime, info, principal)  # (before the passkey policy: a grant is risky)
    _set(runtime, principal, passkey_policy="risky", standing_grants_never=["tool:buy_credits", "over:900"],
         card_lifetimes=lifetimes.as_text(RISKY_LIFETIME), quorum_rules=json.dumps([BIG_BUDGETS]),
         escalation_rules=json.dumps([SLOW]))
    code, out, err = _run(capsys, "policy", "show", "--data", data, "--email", info["person_email"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"Policy of workspace Demo workspace ({principal.workspace.id})"
    assert lines[1:14] == [
        "Passkey: for cards that spend, send, grant or cannot be undone (passkey policy risky)",
        "No standing grant may cover: buy_credits; an amount over 900",
        "Card lifetimes:",
        "  Every card: waits 1 day, no reminder; unanswered, it expires (this deployment's default).",
        "  Cards that spend, send, grant or cannot be undone: waits 2 hours, a reminder 30 minutes before it "
        "lapses; unanswered, it expires.",
        "Quorum rules:",
        "  Big budgets: an amount over 500 needs 2 of owners, admins; one no declines it",
        "Escalation rules:",
        "  Slow answers: every held request unanswered after 30 minutes is shown to admins too",
        "Editable on a card before confirming:",
        "  buy_credits: credits (credits to buy, a whole number)",
        "  review_message: copy_text (copy, text)",
        "  set_category_budget: amount (amount budgeted, an amount)",
    ]
    assert lines[14] == "Standing grants:"
    assert lines[15].startswith("  ‘Groceries top-up’ (active): Demo agent may run set_category_budget without "
                                "asking; Amount budgeted: at most 500.00 a call; Categories: Groceries; "
                                "2 of 2 uses left; expires ")
    assert len(lines) == 16


def test_a_held_call_says_how_it_is_asked_and_what_decides_its_card(capsys, demo):
    data, runtime, info, principal = demo
    code, lines, err = _test(capsys, data, info, "set_category_budget", _budget("450.00"))
    assert code == 0, err
    assert lines == [
        "set_category_budget: Budget Groceries for " + lines[0].split(" for ")[1],
        "Held for a person (class client): asked in the client when it can ask (form elicitation), else on the "
        "confirm page.",
        f"  No standing grant of connection Demo agent ({principal.connection.id}) covers set_category_budget.",
        "No passkey needed (passkey policy never).",
        "No quorum rule covers it: one person's yes runs it.",
        "Its card waits 1 day, no reminder; unanswered, it expires (lifetime rules: wait built-in, reminder "
        "built-in, lapse built-in).",
        "No escalation rule covers it.",
    ]
    assert lines[0].endswith("→ 450.00?")
    assert _cards(runtime, principal) == []  # nothing filed

    code, lines, _ = _test(capsys, data, info, "set_workspace_name", json.dumps({"name": "Renamed"}))
    assert code == 0 and lines[1] == "Runs at once: set_workspace_name is of class never and this call is not held."
    assert runtime.store.workspaces.get_workspace(principal.workspace.id).name == "Demo workspace"


def test_a_call_inside_a_grant_runs_at_once_and_one_over_its_bound_is_held(capsys, demo):
    data, runtime, info, principal = demo
    _grant(capsys, data, runtime, info, principal)
    [grant] = runtime.store.standing_grants.list_standing_grants(principal.workspace.id)

    code, lines, err = _test(capsys, data, info, "set_category_budget", _budget("450.00"))
    assert code == 0, err
    assert lines[1:] == [f"Runs at once: covered by standing grant ‘Groceries top-up’ ({grant.id}) for connection "
                         f"Demo agent ({principal.connection.id}); 2 of 2 uses left."]
    code, lines, _ = _test(capsys, data, info, "set_category_budget", _budget("520.00"))
    assert lines[1:3] == [
        "Held for a person (class client): asked in the client when it can ask (form elicitation), else on the "
        "confirm page.",
        "  Not run under grant ‘Groceries top-up’: 520.00 is over its limit of 500.00 a call."]
    # Only read: the grant's uses are untouched and no card was filed.
    assert runtime.store.standing_grants.get_standing_grant(principal.workspace.id, grant.id).uses == 0
    assert _cards(runtime, principal) == []


def test_a_call_under_a_quorum_rule_names_the_rule_and_who_approves(capsys, demo):
    data, runtime, info, principal = demo
    _set(runtime, principal, quorum_rules=json.dumps([BIG_BUDGETS]), escalation_rules=json.dumps([SLOW]),
         card_lifetimes=lifetimes.as_text({"client": {"lapse": "declined"}}))
    _grant(capsys, data, runtime, info, principal, limit="900.00")
    code, lines, err = _test(capsys, data, info, "set_category_budget", _budget("600.00"))
    assert code == 0, err
    assert lines[1:] == [
        "Held for a person (class client): confirmed on the confirm page only (a quorum rule).",
        "  Not run under a standing grant: the quorum rule ‘Big budgets’ covers this request and needs 2 approvals.",
        "No passkey needed (passkey policy never).",
        "Quorum rule applies: Big budgets: an amount over 500 needs 2 of owners, admins; one no declines it.",
        "  Refused when filed: This request falls under the quorum rule ‘Big budgets’, which needs 2 approvals of "
        "owners, admins, and only 1 member is one of them now. Nothing was filed; ask the workspace's owner to "
        "change the rule.",
        "Its card waits 1 day, no reminder; unanswered, it counts as declined (lifetime rules: wait built-in, "
        "reminder built-in, lapse client).",
        "Escalation: Slow answers: every held request unanswered after 30 minutes is shown to admins too.",
    ]
    accounts.add_person(runtime.store.workspaces, principal.workspace.id, "bea@example.com", "admin", "Bea")
    code, lines, _ = _test(capsys, data, info, "set_category_budget", _budget("600.00"))
    assert not any("Refused when filed" in line for line in lines)
    assert _cards(runtime, principal) == []


def test_a_call_the_passkey_policy_covers_needs_the_passkey_on_the_page(capsys, demo):
    data, runtime, info, principal = demo
    _set(runtime, principal, passkey_policy="risky", card_lifetimes=lifetimes.as_text(RISKY_LIFETIME))
    code, lines, err = _test(capsys, data, info, "buy_credits", json.dumps({"credits": 100}))
    assert code == 0, err
    assert lines[1:] == [
        "Held for a person (class always): confirmed on the confirm page only (the passkey policy).",
        f"  No standing grant of connection Demo agent ({principal.connection.id}) covers buy_credits.",
        "Needs the person's passkey (passkey policy risky: for cards that spend, send, grant or cannot be undone).",
        "No quorum rule covers it: one person's yes runs it.",
        "Its card waits 2 hours, a reminder 30 minutes before it lapses; unanswered, it expires (lifetime rules: "
        "wait risky, reminder risky, lapse built-in).",
        "No escalation rule covers it.",
    ]


@pytest.mark.parametrize("tool, arguments, message", [
    ("publish_nothing", "{}", "error: Unknown tool 'publish_nothing'."),
    ("set_passkey_policy", '{"policy": "every"}', "error: Unknown tool 'set_passkey_policy'."),  # no agent's tool
    ("set_category_budget", '{"category_id": "cat_groceries", "month": "current", "amount": "lots"}',
     "error: amount: "),
    ("set_category_budget", "[1]", "error: --args must be a JSON object of the tool's arguments"),
    ("set_category_budget", "{", "error: --args is not JSON"),
])
def test_bad_input_gets_the_products_sentence_and_exit_status_2(capsys, demo, tool, arguments, message):
    data, runtime, info, principal = demo
    code, lines, err = _test(capsys, data, info, tool, arguments)
    assert (code, lines) == (2, []) and err.startswith(message), err
    assert _cards(runtime, principal) == []


def test_an_unknown_member_or_workspace_is_refused(capsys, demo):
    data, *_ = demo
    code, _, err = _run(capsys, "policy", "show", "--data", data, "--email", "nobody@example.com")
    assert code == 2 and err == "error: no member with email 'nobody@example.com'\n"
    code, _, err = _run(capsys, "policy", "export", "--data", data, "--workspace", "w_nope")
    assert code == 2 and err == "error: no workspace with id 'w_nope'\n"
