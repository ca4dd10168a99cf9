"""Card lifetimes over real HTTP and MCP: the owner files the rules as a held card and confirms it;
an agent's card then waits as long as its class says, and once it lapses the agent is told, in the
exact sentence, whether it expired or counts as declined (asking again within the answer memory
gets that answer). Bad rules are refused naming every problem, and nothing is filed."""

from __future__ import annotations

import pytest

from countersign.core.times import iso
from tests.support.harness import mcp_client

pytestmark = pytest.mark.anyio

RULES = {"default": {"wait": "2h", "remind_before": "30m"}, "client": {"wait": "30m", "lapse": "declined"},
         "risky": {"wait": "1d", "remind_before": "1h"}}


def set_rules(tenant, rules: dict) -> dict:
    page = tenant.page()
    filed = page.post("/api/settings/card-lifetimes", {"rules": rules})
    assert filed.status_code == 201, filed.text
    card = filed.json()
    assert (card["tool"], card["state"]) == ("set_card_lifetimes", "pending")
    confirmed = page.post(f"/api/cards/{card['id']}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["state"] == "completed", confirmed.text
    return card


async def call(tenant, tool: str, arguments: dict) -> dict:
    async with mcp_client(tenant.url, tenant.token) as client:
        result = await client.call_tool(tool, arguments)
    return result.structured_content


async def test_the_owner_files_the_rules_as_a_held_card_and_settings_shows_them_in_words(tenant, clock):
    page = tenant.page()
    before = page.get("/api/settings/card-lifetimes").json()
    assert before == {"rules": {}, "canChange": True,
                      "words": ["Every card: waits 1 day, no reminder; unanswered, it expires (this deployment's "
                                "default)."]}
    filed = page.post("/api/settings/card-lifetimes", {"rules": RULES}).json()
    assert filed["title"] == "Change how long cards wait, their reminders and what a lapse means"
    assert filed["lines"] == [
        "Now:", "  Every card: waits 1 day, no reminder; unanswered, it expires (this deployment's default).",
        "After:", "  Every card: waits 2 hours, a reminder 30 minutes before it lapses; unanswered, it expires.",
        "  Cards of class client: waits 30 minutes, no reminder; unanswered, it counts as declined.",
        "  Cards that spend, send, grant or cannot be undone: waits 1 day, a reminder 1 hour before it lapses; "
        "unanswered, it expires.",
        "Cards already waiting keep the lifetime they were filed with"]
    assert page.get("/api/settings/card-lifetimes").json()["rules"] == {}  # nothing changes before the yes
    assert page.post(f"/api/cards/{filed['id']}/confirm").json()["state"] == "completed"
    after = page.get("/api/settings/card-lifetimes").json()
    assert after["rules"] == RULES
    assert after["words"] == [
        "Every card: waits 2 hours, a reminder 30 minutes before it lapses; unanswered, it expires.",
        "Cards of class client: waits 30 minutes, no reminder; unanswered, it counts as declined.",
        "Cards that spend, send, grant or cannot be undone: waits 1 day, a reminder 1 hour before it lapses; "
        "unanswered, it expires.",
    ]
    member = tenant.add_person("admin")
    shown = tenant.page(member).get("/api/settings/card-lifetimes").json()
    assert shown["words"] == after["words"] and shown["canChange"] is False
    refused = tenant.page(member).post("/api/settings/card-lifetimes", {"rules": {}})
    assert refused.status_code == 422
    assert refused.json()["error"]["message"] == ("Only the workspace's owner can change how long cards wait; you "
                                                  "are admin.")


async def test_bad_rules_are_refused_naming_every_problem_and_nothing_is_filed(tenant):
    page = tenant.page()
    refused = page.post("/api/settings/card-lifetimes", {"rules": {
        "default": {"wait": "2m"}, "weekly": {"wait": "1d"}, "risky": {"wait": "1h", "remind_before": "2h",
                                                                       "lapse": "maybe"}}})
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["message"] == (
        "rules.default.wait: must be from 5 minutes to 7 days, such as 30m, 2h or 7d. "
        "rules.weekly: unknown class 'weekly'; the classes are default, always, client, setting, when, risky. "
        "rules.risky.remind_before: 2 hours is not less than the wait of 1 hour: the reminder would come before the "
        "card is filed. "
        "rules.risky.lapse: must be expired or declined. Nothing was filed.")
    assert refused.json()["field"] == "rules.default.wait"
    assert page.get("/api/cards").json()["cards"] == []
    same = page.post("/api/settings/card-lifetimes", {"rules": {}})
    assert same.status_code == 422 and same.json()["error"]["message"] == ("The card lifetimes are already exactly "
                                                                           "these.")


async def test_a_card_waits_as_its_class_says_and_its_lapse_counts_as_declined(tenant, clock):
    set_rules(tenant, RULES)
    start = int(clock.now)
    held = await call(tenant, "edit_note", {"note_id": "n1", "text": "class client"})
    assert held["status"] == "pending" and held["expiresAt"] == iso(start + 1800)
    risky = await call(tenant, "publish_note", {"note_id": "n2", "text": "class always, destructive"})
    assert risky["expiresAt"] == iso(start + 86400)
    clock.advance(1800)
    status = await call(tenant, "get_confirmation_status", {"confirmation_id": held["confirmationId"]})
    deadline, until = iso(start + 1800), iso(start + 1800 + 900)
    sentence = (f"No one answered within 30 minutes, so this request was declined at {deadline}: this workspace "
                "counts an unanswered request as declined. Nothing ran.")
    assert (status["status"], status["reason"], status["message"], status["askAgainAfter"]) == (
        "declined", sentence, sentence, until)
    assert status["instructions"] == (
        f"No one answered in time, and this workspace counts that as no; nothing was written. Calling edit_note again "
        f"with the same changes before {until} returns this same answer without asking anyone; after that it asks "
        "afresh. Tell the person rather than asking again at once.")
    again = await call(tenant, "edit_note", {"note_id": "n1", "text": "class client"})
    assert (again["status"], again["confirmationId"], again["reason"]) == ("declined", held["confirmationId"], sentence)
    clock.advance(900)
    fresh = await call(tenant, "edit_note", {"note_id": "n1", "text": "class client"})
    assert fresh["status"] == "pending" and fresh["confirmationId"] != held["confirmationId"]


async def test_a_lapse_that_expires_says_so(tenant, clock):
    set_rules(tenant, {"default": {"wait": "10m"}})
    start = int(clock.now)
    held = await call(tenant, "publish_note", {"note_id": "n1", "text": "lapses"})
    assert held["expiresAt"] == iso(start + 600)
    clock.advance(600)
    status = await call(tenant, "get_confirmation_status", {"confirmation_id": held["confirmationId"]})
    assert (status["status"], status["message"]) == (
        "expired", f"No one answered within 10 minutes, so this request expired at {iso(start + 600)}. Nothing ran.")
    again = await call(tenant, "publish_note", {"note_id": "n1", "text": "lapses"})
    assert again["status"] == "pending" and again["confirmationId"] != held["confirmationId"]


async def test_history_and_the_card_say_what_a_lapse_meant(tenant, clock):
    """A lapse the workspace counts as declined is listed (History) and shown (the card) as declined,
    with the sentence the agent is told; one that expires stays expired, with no reason."""
    set_rules(tenant, {"client": {"wait": "30m", "lapse": "declined"}, "risky": {"wait": "30m"}})
    start = int(clock.now)
    declined = await call(tenant, "edit_note", {"note_id": "n1", "text": "class client"})
    expired = await call(tenant, "publish_note", {"note_id": "n2", "text": "class always, destructive"})
    clock.advance(1800)
    sentence = (f"No one answered within 30 minutes, so this request was declined at {iso(start + 1800)}: this "
                "workspace counts an unanswered request as declined. Nothing ran.")
    page = tenant.page()
    listed = {c["id"]: c for c in page.get("/api/history").json()["cards"]}
    shown = {i: page.get(f"/api/cards/{i}").json() for i in (declined["confirmationId"], expired["confirmationId"])}
    for view in (listed[declined["confirmationId"]], shown[declined["confirmationId"]]):
        assert (view["state"], view["status"], view["lapse"], view["reason"]) == ("expired", "declined", "declined",
                                                                                   sentence)
    assert (listed[expired["confirmationId"]]["state"], listed[expired["confirmationId"]]["status"]) == (
        "expired", "expired")
    assert {"lapse", "reason"}.isdisjoint(listed[expired["confirmationId"]])  # (a listing leaves out what is unset)
    one = shown[expired["confirmationId"]]
    assert (one["state"], one["status"], one["lapse"], one["reason"]) == ("expired", "expired", None, None)
