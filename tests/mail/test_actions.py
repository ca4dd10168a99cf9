"""Each action's preview (a decision: names, counts, money) and what apply writes."""

from __future__ import annotations

import pytest

from countersign.toolkit import ActionError
from countersign.toolsets.mail.kinds import (
    KIND_CAMPAIGN,
    KIND_DESIGN,
    KIND_LIST,
    KIND_PROFILE,
    KIND_SENDER,
    KIND_SUPPRESSION,
    PROFILE_ID,
    REVIEW_CLEAN,
    REVIEW_EVERY,
    SUPPRESSION_ID,
)
from tests.mail.world import World


def cid(world):
    return {"campaign_id": world.ids["campaign_id"]}


def test_setup_actions(world):
    plan = world.plan("set_workspace_name", {"name": "Acme Mail"})
    assert plan.preview.title == "Rename the workspace ‘Acme’ to ‘Acme Mail’"
    world.run("set_workspace_name", {"name": "Acme Mail"})
    assert world.store.workspaces.get_workspace(world.ws).name == "Acme Mail"

    plan = world.plan("update_brand_kit", {"primary_color": "#AABBCC", "tagline": "Mail that matters"})
    assert plan.preview.title == "Update the brand kit of ‘Acme Mail’"
    assert "Primary colour: #1f3a5f → #aabbcc" in plan.preview.lines
    world.run("update_brand_kit", {"primary_color": "#AABBCC"})
    assert world.data(KIND_PROFILE, PROFILE_ID)["brand_kit"]["primary_color"] == "#aabbcc"

    with pytest.raises(ActionError, match="already finished"):
        world.plan("finish_setup", {})
    world.patch(KIND_PROFILE, PROFILE_ID, setup_finished=False, return_address=None)
    with pytest.raises(ActionError, match="return address"):
        world.plan("finish_setup", {})
    addr = {"name": "Acme", "line1": "1 Main St", "city": "Springfield", "region": "IL", "postal_code": "62701",
            "country": "us"}
    plan = world.plan("set_return_address", addr)
    assert plan.preview.title == "Set the return address to Acme, 1 Main St, Springfield, IL 62701, US"
    assert "Was: (none)" in plan.preview.lines
    assert any(line.startswith("Printed on every piece from now on") for line in plan.preview.lines)
    world.run("set_return_address", addr)
    assert world.run("finish_setup", {}) == {"setup_finished": True}
    assert [s.tool for s in world.action("finish_setup").next_steps({}, world.ctx())] == [
        "import_contacts",
        "list_designs",
    ]


def test_set_workspace_name_renames_the_workspace_record(world):
    profile_before = world.doc(KIND_PROFILE, PROFILE_ID)
    settings_before = world.store.workspaces.get_workspace(world.ws).settings
    assert world.run("set_workspace_name", {"name": "  Acme Mail  "}) == {"name": "Acme Mail"}
    renamed = world.store.workspaces.get_workspace(world.ws)
    assert renamed.name == "Acme Mail" and renamed.settings == settings_before
    assert world.doc(KIND_PROFILE, PROFILE_ID) == profile_before  # the record carries the name
    # every later plan (any toolset, confirm pages, emails) reads the record
    assert world.plan("buy_credits", {"credits": 10}).preview.lines[0] == "Charged to the payment method of ‘Acme Mail’"
    plan = world.plan("set_workspace_name", {"name": "Acme Post"})
    assert plan.subject == {"workspace_name": {"from": "Acme Mail", "to": "Acme Post"}}


def test_the_workspace_name_is_the_record_not_a_stale_profile_name(world):
    world.patch(KIND_PROFILE, PROFILE_ID, name="Old profile name")
    world.store.workspaces.rename_workspace(world.ws, "Renamed elsewhere")
    assert (
        world.plan("update_brand_kit", {"font": "Lora"}).preview.title == "Update the brand kit of ‘Renamed elsewhere’"
    )
    assert world.plan("set_workspace_name", {"name": "Acme"}).preview.title == (
        "Rename the workspace ‘Renamed elsewhere’ to ‘Acme’")


def test_set_workspace_name_refuses_names_the_workspace_cannot_hold(world):
    with pytest.raises(ActionError, match="name: "):
        world.plan("set_workspace_name", {"name": "x" * 101})
    with pytest.raises(ActionError, match="name: must not be empty"):
        world.plan("set_workspace_name", {"name": "   "})
    assert world.run("set_workspace_name", {"name": "y" * 100}) == {"name": "y" * 100}
    assert world.store.workspaces.get_workspace(world.ws).name == "y" * 100


def test_preferences_and_senders(world):
    sid = world.ids["sender_id"]
    plan = world.plan("update_workspace_preferences", {"timezone": "Europe/Paris", "sender_id": sid,
                                                       "sender_meeting_link": "https://meet.example/dana"})
    assert plan.preview.lines[0] == "Time zone: UTC → Europe/Paris"
    assert plan.preview.lines[1].endswith("meeting link: https://meet.example/demo → https://meet.example/dana")
    world.run("update_workspace_preferences", {"sender_name": "Bo", "sender_email": "bo@acme.example",
                                               "sender_default": True})
    senders = {d.data["name"]: d.data for d in world.store.docs.list_docs(world.ws, KIND_SENDER)}
    assert senders["Bo"]["default"] is True and sum(s["default"] for s in senders.values()) == 1


def test_drafting_actions(world):
    plan = world.plan("import_contacts", {"list_id": world.ids["list_id"], "contacts": [
        {"name": "Bea Smith", "email": "Bea@New.example", "company": "New Co", "line1": "1 Rd", "city": "X",
         "postal_code": "1", "country": "us"},
        {"name": "Ada Again", "email": "ada@analytical.example"}]})
    assert plan.preview.title == "Import 2 contacts into list ‘Q4 prospects’: 1 new, 1 already in the workspace"
    assert plan.preview.lines[0] == "Bea Smith, New Co <bea@new.example>"
    assert "List ‘Q4 prospects’ feeds campaign ‘Q4 outreach’ (draft)" in plan.preview.lines
    result = world.run("import_contacts", {"new_list_name": "Webinar", "contacts": [
        {"name": "Cy", "email": "cy@new.example"}, {"name": "Di", "email": "di@new.example"}]})
    assert result["imported"] == 2 and result["list"] == "Webinar"

    plan = world.plan("generate_design_image", {"design_id": world.ids["design_id"], "prompt": "golden leaves"})
    assert plan.preview.title == "Generate a new image for design ‘Autumn postcard’: draft version 2"
    world.run("generate_design_image", {"design_id": world.ids["design_id"], "prompt": "golden leaves"})
    assert world.design()["draft_version"] == 2 and world.design()["draft"]["image_prompt"] == "golden leaves"
    made = world.run("generate_design_image", {"new_design_name": "Thank-you letter", "format": "letter",
                                               "prompt": "a pen"})
    assert world.data(KIND_DESIGN, made["design_id"])["format"] == "letter"

    world.patch(KIND_CAMPAIGN, world.ids["campaign_id"], copy="hi {first_name} ,  i wanted to say thanks")
    plan = world.plan("polish_copywriting", cid(world))
    assert plan.preview.title == "Polish the copy of campaign ‘Q4 outreach’"
    world.run("polish_copywriting", cid(world))
    assert world.campaign()["copy"] == "Hi {first_name}, I wanted to say thanks."

    with pytest.raises(ActionError, match="No drafts are waiting"):
        world.plan("rewrite_waiting_drafts", {**cid(world), "instructions": "shorter"})
    world.launch()
    plan = world.plan("rewrite_waiting_drafts", {**cid(world), "instructions": "Mention the webinar."})
    assert plan.preview.title == "Rewrite 6 waiting drafts on campaign ‘Q4 outreach’"
    world.run("rewrite_waiting_drafts", {**cid(world), "instructions": "Mention the webinar."})
    assert all(p["copy"].endswith("Mention the webinar.") and p["written_by"] == "model" for p in world.pieces())


def test_add_list_to_draft_and_to_live_campaign(world):
    new = world.run("import_contacts", {"new_list_name": "Webinar", "contacts": [
        {"name": "Cy Young", "email": "cy@new.example", "line1": "1 Rd", "city": "X", "postal_code": "1",
         "country": "US"},
        {"name": "Ada Again", "email": "ada@analytical.example"}]})
    list_id = next(d.id for d in world.store.docs.list_docs(world.ws, KIND_LIST) if d.data["name"] == "Webinar")
    world.launch()
    before = world.balance()
    plan = world.plan("add_list_to_campaign", {**cid(world), "list_id": list_id})
    assert plan.preview.title == ("Add list ‘Webinar’ to live campaign ‘Q4 outreach’: 1 new contact, 1 postcard, "
                                  "2.00 credits")
    assert "1 contact of the list already in the campaign's audience" in plan.preview.lines
    result = world.run("add_list_to_campaign", {**cid(world), "list_id": list_id})
    assert result["enrolled"] == 1 and world.balance() == before - 2000
    assert {p["contact_id"] for p in world.pieces()} >= set(new["contact_ids"])
    with pytest.raises(ActionError, match="already feeds"):
        world.plan("add_list_to_campaign", {**cid(world), "list_id": list_id})


def test_launch_preview_is_a_decision_and_apply_prints_and_debits(world):
    world.patch(KIND_CAMPAIGN, world.ids["campaign_id"], copy_review=REVIEW_CLEAN)
    plan = world.plan("launch_campaign", cid(world))
    assert plan.preview.title == "Launch ‘Q4 outreach’ to 6 contacts: 6 postcards, 12.00 credits"
    lines = plan.preview.lines
    assert "Publishes design ‘Autumn postcard’ version 1" in lines
    assert ("Copy review: clean drafts print without review, while drafts a model writes wait for a person until 10 "
            "pieces on this campaign are approved (0 so far)") in lines
    assert "Prints now: 6; waits for review: 0" in lines
    result = world.launch()
    assert result["printed"] == 6 and result["published"][0]["version"] == 1
    assert world.balance() == 88_000 and world.campaign()["status"] == "live"
    (job,) = world.jobs()
    assert len(job["pieces"]) == 6 and job["return_address"]["city"] == "San Francisco"
    assert job["pieces"][0]["address"]["line1"]
    steps = world.action("launch_campaign").next_steps(result, world.ctx())
    assert [s.tool for s in steps] == ["get_campaign", "get_credits"]


def test_launch_every_draft_mode_says_so_and_next_steps_name_the_person(world):
    plan = world.plan("launch_campaign", cid(world))
    assert "Copy review: every draft waits for a person before it prints" in plan.preview.lines
    result = world.launch()
    steps = world.action("launch_campaign").next_steps(result, world.ctx())
    assert [(s.tool, s.person_must_act) for s in steps] == [
        ("get_campaign", False), ("bulk_approve_messages", True), ("get_credits", False)]
    assert steps[1].to_dict()["personMustAct"] is True


def test_review_pause_resume_end(world):
    world.launch()
    a, b, c, d = [p["id"] for p in world.pieces()[:4]]
    plan = world.plan("review_message", {"piece_id": a})
    assert plan.preview.title.startswith("Approve the postcard to ") and plan.preview.title.endswith(
        " on ‘Q4 outreach’: it prints now")
    assert world.run("review_message", {"piece_id": a}) == {"piece_id": a, "status": "printed"}
    assert world.run("review_message", {"piece_id": b, "decision": "reject"})["status"] == "cancelled"
    assert world.balance() == 88_000 + 2000
    world.run("pause_campaign", cid(world))
    assert world.run("review_message", {"piece_id": c})["status"] == "approved"
    # a contact joins the list while paused: resume enrols them
    new = world.run(
        "import_contacts",
        {
            "list_id": world.ids["list_id"],
            "contacts": [
                {
                    "name": "Eve",
                    "email": "eve@new.example",
                    "line1": "1 Rd",
                    "city": "X",
                    "postal_code": "1",
                    "country": "US",
                }
            ],
        },
    )
    plan = world.plan("resume_campaign", cid(world))
    assert plan.preview.title == "Resume ‘Q4 outreach’: 1 new contact, 1 postcard, 2.00 credits"
    assert "Approved pieces that print now: 1" in plan.preview.lines
    world.run("resume_campaign", cid(world))
    statuses = {p["id"]: p["status"] for p in world.pieces()}
    assert statuses[c] == "printed" and any(p["contact_id"] == new["contact_ids"][0] for p in world.pieces())
    plan = world.plan("end_campaign", cid(world))
    assert plan.preview.title == "End ‘Q4 outreach’: 4 pieces not yet printed cancelled, 8.00 credits returned"
    before = world.balance()
    world.run("end_campaign", cid(world))
    assert world.campaign()["status"] == "ended" and world.balance() == before + 8000
    assert statuses[d] == "waiting" and {p["status"] for p in world.pieces()} == {"printed", "cancelled"}


def test_send_and_cancel_pieces(world):
    world.set(ask_before_drafting=False)
    contact = world.ids["contact_ids"][0]
    plan = world.plan("send_piece", {"contact_id": contact, "design_id": world.ids["design_id"],
                                     "message": "Thank you!"})
    assert plan.preview.title == "Send a postcard to Ada Lovelace (Analytical Engines): 2.00 credits"
    assert "Publishes design ‘Autumn postcard’ version 1" in plan.preview.lines
    sent = world.run(
        "send_piece", {"contact_id": contact, "design_id": world.ids["design_id"], "message": "Thank you!"}
    )
    assert sent["status"] == "sent" and world.balance() == 98_000
    assert world.design()["published_version"] == 1
    with pytest.raises(ActionError, match="already sent"):
        world.plan("cancel_piece", {"piece_id": sent["piece_id"]})
    world.patch(KIND_CAMPAIGN, world.ids["campaign_id"], copy_review=REVIEW_CLEAN)
    world.launch()
    printed = world.pieces()[0]
    plan = world.plan("cancel_piece", {"piece_id": printed["id"]})
    assert plan.preview.title == f"Cancel the postcard to {printed['name']} on ‘Q4 outreach’: 2.00 credits returned"
    assert plan.preview.lines == ("It is in the print queue; it is pulled before the mail run",)
    world.run("cancel_piece", {"piece_id": printed["id"]})
    job = next(j for j in world.jobs() if j["source"] == "enrolment")
    assert next(e for e in job["pieces"] if e["piece_id"] == printed["id"])["status"] == "cancelled"
    assert world.balance() == 98_000 - 12_000 + 2000


def test_credits_suppression_and_roles(world):
    plan = world.plan("buy_credits", {"credits": 500})
    assert plan.preview.title == "Buy 500.00 credits for 500.00 USD"
    world.run("buy_credits", {"credits": 500})
    assert world.balance() == 600_000

    world.patch(KIND_CAMPAIGN, world.ids["campaign_id"], copy_review=REVIEW_EVERY)
    world.launch()
    plan = world.plan("suppress_domain", {"domain": "@Analytical.example"})
    assert plan.preview.title == ("Suppress the domain analytical.example: 1 contact never mailed again; 1 piece not "
                                  "yet mailed cancelled, 2.00 credits returned")
    world.run("suppress_domain", {"domain": "analytical.example"})
    assert world.data(KIND_SUPPRESSION, SUPPRESSION_ID)["domains"] == ["analytical.example"]
    with pytest.raises(ActionError, match="cannot be mailed: the domain analytical.example is suppressed"):
        world.plan("send_piece", {"contact_id": world.ids["contact_ids"][0], "design_id": world.ids["design_id"],
                                  "message": "hi"})
    # what the card promised: a contact imported later at that domain is listed as suppressed, never mailed
    assert any(line.startswith("From now on no address at this domain is mailed") for line in plan.preview.lines)
    ann = {"list_id": world.ids["list_id"], "contacts": [
        {"name": "Ann", "email": "ann@analytical.example", "line1": "1 Rd", "city": "X", "postal_code": "1",
         "country": "US"}]}
    assert ("List ‘Q4 prospects’ feeds campaign ‘Q4 outreach’ (live): the new contacts are not mailed by it "
            "unless it is paused and resumed") in world.plan("import_contacts", ann).preview.lines
    later = world.run("import_contacts", ann)["contact_ids"][0]
    read = world.registry.reads["list_contacts"]
    listed = read.run(read.parse({"list_id": world.ids["list_id"]}), world.ctx())["contacts"]
    assert [c["suppressed"] for c in listed if c["id"] == later] == [True]
    assert not any(p["contact_id"] == later for p in world.pieces())

    bea = world.add_person("member")
    plan = world.plan("grant_role", {"email": bea.email, "role": "approver"})
    assert plan.preview.title == f"Make {bea.email} an approver (now member)"
    world.run("grant_role", {"email": bea.email, "role": "approver"})
    assert world.store.workspaces.get_person(world.ws, bea.id).role == "approver"
    plan = world.plan("revoke_role", {"email": bea.email})
    assert plan.preview.title == f"Revoke the approver role of {bea.email}: back to member"
    world.run("revoke_role", {"email": bea.email})
    assert world.store.workspaces.get_person(world.ws, bea.id).role == "member"


def test_role_rules(world):
    admin, member = world.add_person("admin"), world.add_person("member")
    with pytest.raises(ActionError, match="Only an owner or admin"):
        world.plan("grant_role", {"email": admin.email, "role": "approver"}, person=member)
    with pytest.raises(ActionError, match="Only an owner can"):
        world.plan("grant_role", {"email": member.email, "role": "owner"}, person=admin)
    with pytest.raises(ActionError, match="own role"):
        world.plan("revoke_role", {"email": admin.email}, person=admin)
    with pytest.raises(ActionError, match="Only an owner can"):
        world.plan("revoke_role", {"email": world.owner.email}, person=admin)
    second = world.add_person("owner")
    assert world.plan("revoke_role", {"email": world.owner.email}, person=second).subject["to"] == "member"
    with pytest.raises(ActionError, match="there is no role to revoke"):
        world.plan("revoke_role", {"email": member.email})
    with pytest.raises(ActionError, match="nobody with the email"):
        world.plan("grant_role", {"email": "ghost@example.com", "role": "admin"})


def test_set_ask_before_drafting_changes_the_workspace_setting(world):
    plan = world.plan("set_ask_before_drafting", {"enabled": False})
    assert plan.preview.title == "Stop asking before drafting steps"
    world.run("set_ask_before_drafting", {"enabled": False})
    assert world.store.workspaces.get_workspace(world.ws).setting("ask_before_drafting") is False
    with pytest.raises(ActionError, match="already off"):
        world.plan("set_ask_before_drafting", {"enabled": False})
    member = world.add_person("member")
    world.run("set_ask_before_drafting", {"enabled": True}, person=member)  # anyone may tighten it
    with pytest.raises(ActionError, match="Only an owner or admin"):
        world.plan("set_ask_before_drafting", {"enabled": False}, person=member)


def test_reads(world):
    world.launch()
    reads = {r.name: r for r in world.registry.reads.values()}
    ctx = world.ctx()
    camps = reads["list_campaigns"].run(reads["list_campaigns"].parse({}), ctx)["campaigns"]
    assert camps[0]["status"] == "live" and camps[0]["pieces"]["waiting"] == 6
    got = reads["get_campaign"].run(reads["get_campaign"].parse({**cid(world), "limit": 2}), ctx)
    assert got["piece_total"] == 6 and len(got["piece_list"]) == 2 and got["audience"] == 6
    contacts = reads["list_contacts"].run(reads["list_contacts"].parse({"list_id": world.ids["list_id"]}), ctx)
    assert contacts["total"] == 6 and contacts["contacts"][0]["suppressed"] is False
    lists = reads["list_lists"].run(reads["list_lists"].parse({}), ctx)["lists"]
    assert lists[0]["feeds"][0]["status"] == "live"
    designs = reads["list_designs"].run(reads["list_designs"].parse({}), ctx)["designs"]
    assert designs[0]["state"] == "published" and designs[0]["live_campaigns"] == [world.ids["campaign_id"]]
    credits = reads["get_credits"].run(reads["get_credits"].parse({}), ctx)
    assert credits["balance"] == "88.00" and credits["prices"]["postcard"] == "2.00"


def test_buy_credits_reports_in_the_balance_units_and_suggests_retrying_a_launch_it_may_have_held_up(store):
    from countersign.gate.question import Question
    from countersign.gate.runner import run_unheld

    short = World(store, credits=5)  # the demo campaign's launch needs 12.00 credits
    ran = run_unheld(short.desk, Question.of(short.action("buy_credits"), {"credits": 10}, short.ctx()))
    assert ran["result"] == {"bought": "10.00", "bought_milli": 10_000, "balance": "15.00", "balance_milli": 15_000,
                             "charged_usd": "10.00"}
    assert ran["next"] == [
        {"tool": "get_credits", "personMustAct": False, "description": "Check the new balance."},
        {"tool": "launch_campaign", "personMustAct": True, "description": "If a launch was refused for want of "
         "credits, it can go ahead now that the balance is 15.00 credits: launch it again."},
    ]

