"""Every tool says what it did in a person's words (``Action.outcome_lines``): each action of the
budget and mail toolsets is run, in process, through the toolsets' own fixtures, and the lines its
real result reads as hold no field name, no id and no amount in thousandths. A new action without
a run here, or with a result and no formatter of its own, fails. (The gateway's actions are run
against a real upstream in tests/gateway/test_outcomes.py.)"""

from __future__ import annotations

import pytest

from countersign.settings import KNOWN_PACKS
from countersign.store.sqlite import SQLiteStore
from countersign.toolkit import Action
from countersign.toolsets.budget import TOOLSET as BUDGET
from countersign.toolsets.mail import TOOLSET as MAIL
from countersign.toolsets.mail.kinds import KIND_CAMPAIGN, KIND_LIST, KIND_PROFILE, PROFILE_ID
from tests.budget.ledger import RECAT, new_book
from tests.mail.world import World
from tests.support.outcomes import assert_reads_to_a_person

# The packs this file and tests/gateway/test_outcomes.py run every action of: a new toolset fails here.
COVERED = {"budget", "mail", "gateway"}


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(str(tmp_path / "countersign.db"))
    yield s
    s.close()


def mail_results(world: World) -> dict[str, dict]:
    """Every mail action, run once in an order that makes each possible: its result by tool."""
    results: dict[str, dict] = {}

    def run(tool: str, args: dict, person=None) -> dict:
        results[tool] = world.run(tool, args, person)
        return results[tool]

    campaign = {"campaign_id": world.ids["campaign_id"]}
    design = world.ids["design_id"]
    run("set_workspace_name", {"name": "Acme Mail"})
    run("update_brand_kit", {"primary_color": "#AABBCC", "tagline": "Mail that matters"})
    world.patch(KIND_PROFILE, PROFILE_ID, setup_finished=False)
    run("set_return_address", {"name": "Acme", "line1": "1 Main St", "city": "Springfield", "region": "IL",
                               "postal_code": "62701", "country": "us"})
    run("finish_setup", {})
    run("update_workspace_preferences", {"timezone": "Europe/Paris", "signature": "Olive, Acme"})
    run("set_ask_before_drafting", {"enabled": False})
    run("import_contacts", {"new_list_name": "Webinar", "contacts": [
        {"name": "Cy Young", "email": "cy@new.example", "line1": "1 Rd", "city": "X", "postal_code": "1",
         "country": "US"},
        {"name": "Ada Again", "email": "ada@analytical.example"}]})
    webinar = next(d.id for d in world.store.docs.list_docs(world.ws, KIND_LIST) if d.data["name"] == "Webinar")
    run("create_campaign", {"name": "Summer"})
    world.patch(KIND_CAMPAIGN, world.ids["campaign_id"], copy="hi {first_name} ,  i wanted to say thanks")
    run("polish_copywriting", campaign)
    run("launch_campaign", campaign)
    run("rewrite_waiting_drafts", {**campaign, "instructions": "Mention the webinar."})
    run("add_list_to_campaign", {**campaign, "list_id": webinar})
    waiting = [p["id"] for p in world.pieces() if p["status"] == "waiting"]
    run("review_message", {"piece_id": waiting[0]})
    run("bulk_approve_messages", campaign)
    run("generate_design_image", {"design_id": design, "prompt": "golden leaves"})
    run("approve_design", {"design_id": design})
    run("pause_campaign", campaign)
    run("resume_campaign", campaign)
    run("send_piece", {"contact_id": world.ids["contact_ids"][0], "design_id": design, "message": "Thank you!"})
    printed = next(p["id"] for p in world.pieces() if p["status"] == "printed")
    run("cancel_piece", {"piece_id": printed})
    run("buy_credits", {"credits": 250})
    run("suppress_domain", {"domain": "globex.example"})
    other = world.add_person("member")
    run("grant_role", {"email": other.email, "role": "admin"})
    run("revoke_role", {"email": other.email})
    run("end_campaign", campaign)
    return results


def budget_results(store) -> dict[str, dict]:
    """Every budget action, run once on the small September 2026 budget: its result by tool."""
    book = new_book(store)
    results: dict[str, dict] = {}

    def do(tool: str, **args) -> dict:
        results[tool] = book.do(tool, **args)
        return results[tool]

    do("apply_categories", **RECAT)
    budgeted = do("set_category_budget", category_id="cat_restaurants", month="2026-09", amount=150)
    do("update_category", category_id="cat_books", name="Books & comics")
    do("create_category", group_id="grp_fun", name="Pets")
    do("create_transactions", account_id="acc_savings", transactions=[
        {"date": "2026-09-18", "payee": "Bank", "amount": "1.25", "category_id": None}])
    do("split_transaction", transaction_id="t_bistro", lines=[
        {"amount": "-30.00", "category_id": "cat_restaurants"}, {"amount": "-12.50", "category_id": "cat_books"}])
    do("approve_transactions", transaction_ids=["t_market", "t_pay"])
    do("reconcile_account", account_id="acc_checking", balance="2240.00")
    do("undo_operation", operation_id=budgeted["operation_id"])
    return results


def test_every_toolset_of_the_build_has_its_outcomes_run():
    assert set(KNOWN_PACKS) == COVERED, "run every action of the new toolset here and give each an outcome_lines"


def test_every_mail_action_words_its_result(store):
    results = mail_results(World(store))
    for action in MAIL.actions:
        assert action.name in results, f"run {action.name} in mail_results and check its outcome"
        assert_reads_to_a_person(action, results[action.name])


def test_every_budget_action_words_its_result(store):
    results = budget_results(store)
    for action in BUDGET.actions:
        assert action.name in results, f"run {action.name} in budget_results and check its outcome"
        assert_reads_to_a_person(action, results[action.name])


def test_a_purchase_a_send_and_a_budget_read_as_sentences(store):
    world = World(store)
    world.set(ask_before_drafting=False)
    bought = world.run("buy_credits", {"credits": 250})
    assert world.action("buy_credits").outcome_lines(bought) == [
        "Bought 250.00 credits · balance 350.00 credits",
        "Charged 250.00 USD to the workspace's payment method",
    ]
    sent = world.run("send_piece", {"contact_id": world.ids["contact_ids"][0], "design_id": world.ids["design_id"],
                                    "message": "Thank you!"})
    assert world.action("send_piece").outcome_lines(sent) == [
        "Published design ‘Autumn postcard’ version 1", "Sent · 2.00 credits spent"]

    book = new_book(store)
    result = book.do("set_category_budget", category_id="cat_restaurants", month="2026-09", amount="150.5")
    action = next(a for a in BUDGET.actions if a.name == "set_category_budget")
    assert action.outcome_lines(result) == ["Budgeted 150.50 for September 2026"]
    recategorised = book.do("apply_categories", **RECAT)
    action = next(a for a in BUDGET.actions if a.name == "apply_categories")
    assert action.outcome_lines(recategorised) == [
        "Recategorised 2 transactions", "1 transaction now in Groceries", "1 transaction now in Household"]


def test_an_action_with_nothing_to_say_says_it_ran():
    assert Action().outcome_lines({}) == ["Done."]
