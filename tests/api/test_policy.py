"""``GET /api/policy`` over real HTTP: the workspace's whole policy as the one document ``countersign
policy export`` prints, with the words ``countersign policy show`` says it in, for the workspace's
members only (401 signed out; another workspace's rules never); the owner alone is told what a rule
may name. It only reads."""

from __future__ import annotations

import json

import pytest

from countersign.core import lifetimes
from countersign.identity import accounts

pytestmark = pytest.mark.anyio

BIG_BUDGETS = {"id": "q_big", "name": "Big budgets", "when": "over:500", "needs": 2, "of": ["owner", "admin"],
               "decline": "any"}
SLOW = {"id": "e_slow", "name": "Slow answers", "when": "any", "after": 30, "add": ["admin"]}
RISKY_LIFETIME = {"risky": {"wait": 7200, "remind_before": 1800}}


# What the build's toolsets let a person edit on a card, and in words (of those this run serves:
# COUNTERSIGN_TEST_PACKS may narrow them).
EDITABLE = {"buy_credits": ("credits", "credits (credits to buy, a whole number)"),
            "review_message": ("copy_text", "copy_text (copy, text)"),
            "set_category_budget": ("amount", "amount (amount budgeted, an amount)")}


def _editable(tenant) -> dict[str, tuple[str, str]]:
    return {tool: both for tool, both in EDITABLE.items() if tool in tenant.runtime.desk.registry.actions}


def test_signed_out_is_401_and_nothing_of_the_policy_is_said(page, tenant):
    answer = page.get("/api/policy")
    assert answer.status_code == 401 and answer.json() == {"error": {
        "code": "signed_out", "message": "You are signed out. Ask for a sign-in link to continue."}}


def test_a_member_reads_the_exact_document_and_its_words_and_may_not_change_it(tenant, other_tenant):
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {
        "passkey_policy": "risky", "standing_grants_never": ["tool:publish_note", "over:900"],
        "card_lifetimes": lifetimes.as_text(RISKY_LIFETIME), "quorum_rules": json.dumps([BIG_BUDGETS]),
        "escalation_rules": json.dumps([SLOW])})
    accounts.add_person(tenant.store.workspaces, tenant.workspace_id, f"ana.{tenant.workspace_id}@example.com", "admin",
                        "Ana Costa")
    member = tenant.add_person("member")
    before = tenant.store.workspaces.get_workspace(tenant.workspace_id).settings

    answer = tenant.page(member).get("/api/policy")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["policy"] == {
        "version": 1, "passkeyPolicy": "risky", "standingGrantsNever": ["tool:publish_note", "over:900"],
        "lifetimes": {"risky": {"wait": "2h", "remind_before": "30m"}}, "quorum": [BIG_BUDGETS],
        "escalation": [SLOW], "editable": {tool: [argument] for tool, (argument, _) in _editable(tenant).items()},
        "standingGrants": []}
    assert [(s["key"], s["title"], s["summary"]) for s in body["sections"]] == [
        ("passkeyPolicy", "Passkey", "for cards that spend, send, grant or cannot be undone (passkey policy risky)"),
        ("standingGrantsNever", "No standing grant may cover", "publish_note; an amount over 900"),
        ("lifetimes", "Card lifetimes", ""),
        ("quorum", "Quorum rules", ""),
        ("escalation", "Escalation rules", ""),
        ("editable", "Editable on a card before confirming", ""),
        ("standingGrants", "Standing grants", "none")]
    sections = {s["key"]: s for s in body["sections"]}
    assert sections["lifetimes"]["lines"] == [
        "Every card: waits 1 day, no reminder; unanswered, it expires (this deployment's default).",
        "Cards that spend, send, grant or cannot be undone: waits 2 hours, a reminder 30 minutes before it lapses; "
        "unanswered, it expires."]
    assert sections["quorum"]["lines"] == sections["quorum"]["ruleWords"] == [
        "Big budgets: an amount over 500 needs 2 of owners, admins; one no declines it"]
    assert sections["escalation"]["lines"] == sections["escalation"]["ruleWords"] == [
        "Slow answers: every held request unanswered after 30 minutes is shown to admins too"]
    assert sections["standingGrantsNever"]["ruleWords"] == ["publish_note", "an amount over 900"]
    assert sections["standingGrantsNever"]["lines"] == sections["passkeyPolicy"]["ruleWords"] == []
    assert sections["editable"]["lines"] == [f"{tool}: {words}" for tool, (_, words) in _editable(tenant).items()]
    assert (body["canChange"], body["choices"]) == (False, None)  # only the owner changes it
    # the owner reads the same, and what a rule may name
    owner = tenant.page().get("/api/policy").json()
    assert (owner["policy"], owner["sections"], owner["canChange"]) == (body["policy"], body["sections"], True)
    # another workspace reads its own policy, none of this one's
    theirs = other_tenant.page().get("/api/policy").json()
    assert (theirs["policy"]["quorum"], theirs["policy"]["passkeyPolicy"], theirs["policy"]["escalation"]) == (
        [], "never", [])
    assert tenant.store.workspaces.get_workspace(tenant.workspace_id).settings == before  # it only reads


def test_the_owner_is_told_what_a_rule_may_name_in_the_policy_words(tenant):
    ana = accounts.add_person(tenant.store.workspaces, tenant.workspace_id, f"ana.{tenant.workspace_id}@example.com",
                              "admin", "Ana Costa")
    choices = tenant.page().get("/api/policy").json()["choices"]
    assert choices["when"] == [
        {"value": "any", "words": "every held request"},
        {"value": "risky", "words": "what spends, sends, grants or cannot be undone"},
        {"value": "class:always", "words": "requests of class always"},
        {"value": "class:client", "words": "requests of class client"},
        {"value": "class:setting", "words": "requests of class setting"},
        {"value": "class:when", "words": "requests of class when"}]
    assert choices["who"] == [
        {"value": "owner", "words": "owners"}, {"value": "admin", "words": "admins"},
        {"value": "approver", "words": "approvers"}, {"value": "member", "words": "members"},
        {"value": f"person:{tenant.person.id}", "words": tenant.person.name or tenant.person.email},
        {"value": f"person:{ana.id}", "words": "Ana Costa"}]
    assert choices["decline"] == [{"value": "any", "words": "one no declines it"},
                                  {"value": "majority", "words": "a majority's no declines it"}]
    assert "publish_note" in choices["tools"] and "get_confirmation_status" not in choices["tools"]
    assert choices["tools"] == sorted(choices["tools"])


def test_what_no_grant_may_cover_is_changed_by_a_held_card_only_the_owner_files(tenant):
    page = tenant.page()
    admin = tenant.page(tenant.add_person("admin"))
    refused = admin.post("/api/standing-grants/rules", {"rules": ["risky"]})
    assert refused.status_code == 403 and refused.json()["error"]["message"] == (
        "Only the workspace's owner can rule what no standing grant may cover.")
    bad = page.post("/api/standing-grants/rules", {"rules": ["risky", "tool:no_such_tool"]})
    assert bad.status_code == 422 and bad.json() == {"error": {"code": "invalid", "message": (
        "rules[1]: there is no tool 'no_such_tool' here, so no rule can be for it. Nothing was changed.")},
        "field": "rules[1]"}
    assert tenant.store.cards.list_pending_cards(tenant.workspace_id, tenant.person.id, tenant.runtime.desk.now())[
        0] == []  # nothing filed

    filed = page.post("/api/standing-grants/rules", {"rules": ["risky", "over:250"]})
    assert filed.status_code == 201, filed.text
    card = filed.json()
    assert (card["tool"], card["state"], card["title"], card["lines"]) == (
        "set_standing_grants_never", "pending", "Change what no standing grant may cover", [
            "Now: (no rule: any tool that declares bounds)",
            "After: what spends, sends, grants or cannot be undone; an amount over 250",
            "Checked when granting and at every call: a grant made before a rule stops covering what it rules out"])
    assert card["askedBy"]["you"] is True
    assert page.get("/api/policy").json()["policy"]["standingGrantsNever"] == []  # nothing before the Confirm
    assert page.post(f"/api/cards/{card['id']}/confirm").json()["state"] == "completed"
    policy = page.get("/api/policy").json()
    assert policy["policy"]["standingGrantsNever"] == ["risky", "over:250"]
    assert policy["sections"][1]["summary"] == "what spends, sends, grants or cannot be undone; an amount over 250"
