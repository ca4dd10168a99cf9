"""Every action's class under each setting and state, read through ``gate_class``
(docs/how-a-held-write-travels.md, "Classes and assurance")."""

from __future__ import annotations

import pytest

from countersign.store.docs import DocWrite
from countersign.toolsets.mail import TOOLSET
from countersign.toolsets.mail.kinds import KIND_CAMPAIGN

HELD = "held"
RUNS = "runs"


def campaign_args(world):
    return {"campaign_id": world.ids["campaign_id"]}


def test_every_issue_tool_exists_with_its_declared_class():
    declared = {a.name: a.gate.kind for a in TOOLSET.actions}
    for name in ("set_workspace_name", "update_brand_kit", "finish_setup", "create_campaign", "pause_campaign"):
        assert declared[name] == "never", name
    for name in ("launch_campaign", "resume_campaign", "end_campaign", "send_piece", "cancel_piece", "buy_credits",
                 "suppress_domain", "grant_role", "revoke_role"):
        assert declared[name] == "always", name
    for name in ("import_contacts", "generate_design_image", "polish_copywriting", "rewrite_waiting_drafts",
                 "add_list_to_campaign"):
        assert TOOLSET_ACTION(name).gate.name == "setting:ask_before_drafting"
    for name in ("approve_design", "review_message", "bulk_approve_messages"):
        assert TOOLSET_ACTION(name).gate.name == "setting:ask_before_approvals"
    assert declared["set_return_address"] == "when"
    assert {r.name for r in TOOLSET.reads} == {"list_campaigns", "get_campaign", "list_contacts", "list_lists",
                                               "list_designs", "get_credits"}
    assert not any(a.name == "set_ask_before_approvals" for a in TOOLSET.actions)


def TOOLSET_ACTION(name):
    return next(a for a in TOOLSET.actions if a.name == name)


def test_setup_runs_on_the_call_whatever_the_settings(world):
    for settings in ({}, {"ask_before_drafting": False, "ask_before_approvals": False}):
        world.set(**settings) if settings else None
        assert world.gate("set_workspace_name", {"name": "New"}) == "never:runs"
        assert world.gate("update_brand_kit", {"font": "Inter"}) == "never:runs"
        assert world.gate("finish_setup", {}) == "never:runs"
        assert world.gate("update_workspace_preferences", {"timezone": "Europe/Paris"}) == "never:runs"


def test_return_address_is_held_once_a_campaign_or_piece_exists(world):
    addr = {"name": "Acme", "line1": "1 Main St", "city": "Springfield", "postal_code": "12345", "country": "US"}
    assert world.gate("set_return_address", addr) == "when:a campaign or piece exists:held"
    camp = world.doc(KIND_CAMPAIGN, world.ids["campaign_id"])
    world.store.docs.write_docs(world.ws, [DocWrite(KIND_CAMPAIGN, camp.id, None, camp.version)])
    assert world.gate("set_return_address", addr) == "when:a campaign or piece exists:runs"
    world.run("send_piece", {"contact_id": world.ids["contact_ids"][0], "design_id": world.ids["design_id"],
                             "message": "Hello"})
    assert world.gate("set_return_address", addr) == "when:a campaign or piece exists:held"


def test_sender_routing_is_held_once_mail_has_been_sent(world):
    sid = world.ids["sender_id"]
    link = {"sender_id": sid, "sender_meeting_link": "https://meet.example/new"}
    email = {"sender_id": sid, "sender_email": "new@acme.example"}
    name_only = {"sender_id": sid, "sender_name": "Dana"}
    assert world.gate("update_workspace_preferences", link) == "when:mail has been sent:runs"
    world.launch()  # every draft waits for review: nothing has gone out yet
    assert world.gate("update_workspace_preferences", email) == "when:mail has been sent:runs"
    world.run("bulk_approve_messages", campaign_args(world))  # now pieces are printed
    assert world.gate("update_workspace_preferences", link) == "when:mail has been sent:held"
    assert world.gate("update_workspace_preferences", email) == "when:mail has been sent:held"
    assert world.gate("update_workspace_preferences", {"sender_id": sid, "sender_default": True}).endswith(":held")
    assert world.gate("update_workspace_preferences", name_only) == "never:runs"
    assert world.gate("update_workspace_preferences", {"signature": "Best, Dana"}) == "never:runs"


DRAFTING_CALLS = [
    ("import_contacts", lambda w: {"contacts": [{"name": "Bea", "email": "bea@x.example"}]}),
    ("generate_design_image", lambda w: {"design_id": w.ids["design_id"], "prompt": "autumn leaves"}),
    ("polish_copywriting", lambda w: {"campaign_id": w.ids["campaign_id"]}),
    ("rewrite_waiting_drafts", lambda w: {"campaign_id": w.ids["campaign_id"], "instructions": "shorter"}),
    ("add_list_to_campaign", lambda w: {"campaign_id": w.ids["campaign_id"], "list_id": "ls_any"}),
]


@pytest.mark.parametrize("name,args", DRAFTING_CALLS, ids=[c[0] for c in DRAFTING_CALLS])
def test_drafting_steps_follow_ask_before_drafting(world, name, args):
    assert world.gate(name, args(world)) == "setting:ask_before_drafting:held"
    world.set(ask_before_drafting=False)
    assert world.gate(name, args(world)) == "setting:ask_before_drafting:runs"


def test_adding_a_list_to_a_live_campaign_is_always_held(world):
    world.set(ask_before_drafting=False)
    args = {"campaign_id": world.ids["campaign_id"], "list_id": world.ids["list_id"]}
    assert world.gate("add_list_to_campaign", args) == "setting:ask_before_drafting:runs"
    world.launch()
    assert world.gate("add_list_to_campaign", args) == "always:held"
    world.run("pause_campaign", campaign_args(world))
    assert world.gate("add_list_to_campaign", args) == "setting:ask_before_drafting:runs"


def test_turning_drafting_off_is_always_held_and_on_runs(world):
    assert world.gate("set_ask_before_drafting", {"enabled": False}) == "always:held"
    world.set(ask_before_drafting=False)
    assert world.gate("set_ask_before_drafting", {"enabled": False}) == "always:held"
    assert world.gate("set_ask_before_drafting", {"enabled": True}) == "never:runs"


def test_approvals_are_held_only_in_states_that_print(world):
    design = {"design_id": world.ids["design_id"]}
    # a draft design no live campaign uses: approving prints nothing
    assert world.gate("approve_design", design) == "never:runs"
    world.launch()
    piece = world.pieces()[0]["id"]
    assert world.gate("review_message", {"piece_id": piece}) == "setting:ask_before_approvals:held"
    assert world.gate("review_message", {"piece_id": piece, "decision": "reject"}) == "never:runs"
    assert world.gate("bulk_approve_messages", campaign_args(world)) == "setting:ask_before_approvals:held"
    # a new draft of a design a live campaign prints
    world.run("generate_design_image", {"design_id": world.ids["design_id"], "prompt": "winter"})
    assert world.gate("approve_design", design) == "setting:ask_before_approvals:held"
    world.set(ask_before_approvals=False)
    assert world.gate("approve_design", design) == "setting:ask_before_approvals:runs"
    assert world.gate("review_message", {"piece_id": piece}) == "setting:ask_before_approvals:runs"
    world.set(ask_before_approvals=True)
    world.run("pause_campaign", campaign_args(world))
    assert world.gate("review_message", {"piece_id": piece}) == "never:runs"
    assert world.gate("bulk_approve_messages", campaign_args(world)) == "never:runs"
    assert world.gate("approve_design", design) == "never:runs"


def test_always_class_is_held_with_every_setting_off(world):
    world.set(ask_before_drafting=False, ask_before_approvals=False, confirm_in_client=True)
    calls = {
        "launch_campaign": campaign_args(world), "resume_campaign": campaign_args(world),
        "end_campaign": campaign_args(world), "buy_credits": {"credits": 50},
        "send_piece": {"contact_id": "c", "design_id": "d", "message": "m"}, "cancel_piece": {"piece_id": "p"},
        "suppress_domain": {"domain": "globex.com"}, "grant_role": {"email": "a@b.example", "role": "admin"},
        "revoke_role": {"email": "a@b.example"},
    }
    for name, args in calls.items():
        assert world.gate(name, args) == "always:held", name
        assert (
            not world.action(name).gate_class(world.action(name).parse(args), world.ctx()).allows_in_client(world.ctx())
        )
