"""Bad input: every refusal names the problem, and nothing is written."""

from __future__ import annotations

import pytest

from countersign.toolkit import ActionError
from countersign.toolsets.mail.kinds import (
    KIND_CAMPAIGN,
    KIND_CONTACT,
    KIND_DESIGN,
    KIND_JOB,
    KIND_LEDGER,
    KIND_LIST,
    KIND_PROFILE,
    KIND_SENDER,
    KIND_SUPPRESSION,
    PROFILE_ID,
    pieces_kind,
)
from tests.mail.world import World


def snapshot(world) -> dict:
    kinds = [KIND_PROFILE, KIND_LEDGER, KIND_CONTACT, KIND_LIST, KIND_DESIGN, KIND_CAMPAIGN, KIND_SENDER,
             KIND_JOB, KIND_SUPPRESSION, pieces_kind(world.ids["campaign_id"])]
    return {k: [(d.id, d.version) for d in world.store.docs.list_docs(world.ws, k)] for k in kinds}


BAD = [
    ("launch_campaign", {"campaign_id": "cp_nope"}, "campaign_id: no campaign with id 'cp_nope'"),
    ("launch_campaign", {"campaign_id": 7}, "campaign_id: must be text."),
    ("launch_campaign", {}, "campaign_id: required."),
    ("launch_campaign", {"campaign_id": "x", "force": True}, "force: launch_campaign has no argument named ‘force’"),
    ("buy_credits", {"credits": 0}, "credits: must be at least 10."),
    ("buy_credits", {"credits": 1_000_000}, "credits: must be at most 100000."),
    ("buy_credits", {"credits": "lots"}, "credits: must be a whole number"),
    ("suppress_domain", {"domain": "not a domain"}, "domain: 'not a domain' is not a domain name"),
    ("update_brand_kit", {"primary_color": "red"}, "primary_color: 'red' is not a hex colour"),
    # a pattern's `$` also matches before a final line break: none gets through
    ("update_brand_kit", {"primary_color": "#aabbcc\n"}, "primary_color: '#aabbcc\\n' is not a hex colour"),
    ("update_workspace_preferences", {"sender_name": "Bo", "sender_email": "bo@acme.example\n"},
     "sender_email: 'bo@acme.example\\n' is not an email address"),
    ("update_brand_kit", {"logo_url": "http://x.example/logo.png"}, "logo_url: must be an https:// URL"),
    ("update_brand_kit", {"logo_url": "https://"}, "logo_url: must be an https:// URL"),  # no host
    ("update_brand_kit", {"logo_url": "https://x.example/a logo.png"}, "logo_url: must be an https:// URL"),
    ("update_brand_kit", {"logo_url": "https://x.example/logo.png\n"}, "logo_url: must be an https:// URL"),
    ("update_workspace_preferences", {"sender_name": "Bo", "sender_email": "bo@acme.example",
                                      "sender_meeting_link": "https://meet.example/bo\tx"},
     "sender_meeting_link: must be an https:// URL"),
    ("update_brand_kit", {}, "Give at least one of"),
    ("update_workspace_preferences", {"timezone": "Mars/Olympus"}, "timezone: 'Mars/Olympus' is not an IANA time zone"),
    ("update_workspace_preferences", {"sender_id": "sd_nope", "sender_email": "a@b.example"},
     "sender_id: no sender with id 'sd_nope'"),
    ("update_workspace_preferences", {"sender_name": "No email"}, "a new sender needs both"),
    ("import_contacts", {"contacts": []}, "contacts: must have at least 1 item."),
    ("import_contacts", {"contacts": [{"name": "A", "email": "a@x.example"}] * 81},
     "contacts: must have at most 80 items."),
    ("import_contacts", {"contacts": [{"name": "A", "email": "not-an-email"}]}, "contacts[0].email: 'not-an-email'"),
    ("import_contacts", {"contacts": [{"name": "A", "email": "a@x.example"}, {"name": "B", "email": "A@x.example"}]},
     "appears twice in this import"),
    ("import_contacts", {"contacts": [{"name": "A", "email": "a@x.example"}], "list_id": "ls_1", "new_list_name": "N"},
     "Give list_id or new_list_name, not both"),
    ("import_contacts", {"contacts": [{"name": "A", "email": "a@x.example", "shoe": 9}]},
     "contacts[0].shoe: there is no field named ‘shoe’"),
    ("generate_design_image", {"prompt": "leaves"}, "Give design_id"),
    ("set_return_address", {"name": "A", "line1": "1", "city": "X", "postal_code": "1", "country": "12"},
     "country: use a two-letter country code"),
    ("review_message", {"piece_id": "nope"}, "piece_id: no piece with id 'nope'"),
    ("review_message", {"piece_id": "x", "decision": "maybe"}, "decision: must be one of 'approve' or 'reject'."),
    ("cancel_piece", {"piece_id": "cp_x.b0000.000"}, "piece_id: no piece with id"),
    ("grant_role", {"email": "a@b.example", "role": "emperor"}, "role: must be one of 'owner', 'admin' or 'approver'."),
    ("send_piece", {"contact_id": "ct_nope", "design_id": "d", "message": "hi"}, "contact_id: no contact with id"),
    ("set_workspace_name", {"name": "Acme"}, "already called ‘Acme’"),
    ("set_workspace_name", {"name": "bad\x00name"}, "name: contains the control character U+0000"),
    ("create_campaign", {"name": "Q4 outreach"}, "name: a campaign called ‘Q4 outreach’ exists"),
    ("create_campaign", {"name": "New", "list_ids": ["ls_nope"]}, "list_ids: no list with id 'ls_nope'"),
    ("pause_campaign", {"campaign_id": None}, "campaign_id: must be text."),
]


def test_bad_input_is_refused_with_a_sentence_naming_it(world):
    # one workspace per store for the whole table: a fresh moto table per case would dominate the run
    before = snapshot(world)
    for name, args, message in BAD:
        action = world.action(name)
        with pytest.raises(ActionError) as refused:
            action.plan(action.parse(args), world.ctx())
        assert message in refused.value.message, (name, args, refused.value.message)
    assert snapshot(world) == before


def test_ids_of_another_workspace_are_unknown_here(world):
    other = World(world.store)
    for name, args in (
        ("launch_campaign", {"campaign_id": other.ids["campaign_id"]}),
        ("approve_design", {"design_id": other.ids["design_id"]}),
        ("add_list_to_campaign", {"campaign_id": world.ids["campaign_id"], "list_id": other.ids["list_id"]}),
        (
            "send_piece",
            {"contact_id": other.ids["contact_ids"][0], "design_id": world.ids["design_id"], "message": "hi"},
        ),
    ):
        with pytest.raises(ActionError, match="no (campaign|design|list|contact) with id"):
            world.plan(name, args)
    other.launch()
    with pytest.raises(ActionError, match="no piece with id"):
        world.plan("cancel_piece", {"piece_id": other.pieces()[0]["id"]})
    assert world.campaign()["status"] == "draft" and other.campaign()["status"] == "live"


def test_state_errors_name_the_state(world):
    world.launch()
    with pytest.raises(ActionError, match="is already live"):
        world.plan("launch_campaign", {"campaign_id": world.ids["campaign_id"]})
    with pytest.raises(ActionError, match="cannot be resumed: it is already live"):
        world.plan("resume_campaign", {"campaign_id": world.ids["campaign_id"]})
    with pytest.raises(ActionError, match="is already published; there is no draft to approve"):
        world.plan("approve_design", {"design_id": world.ids["design_id"]})
    piece = world.pieces()[0]["id"]
    world.run("review_message", {"piece_id": piece})
    with pytest.raises(ActionError, match="is printed, not waiting for review. Use cancel_piece"):
        world.plan("review_message", {"piece_id": piece})
    with pytest.raises(ActionError, match="is printed, not waiting"):
        world.plan("bulk_approve_messages", {"campaign_id": world.ids["campaign_id"], "piece_ids": [piece]})
    world.run("cancel_piece", {"piece_id": piece})
    with pytest.raises(ActionError, match="already cancelled"):
        world.plan("cancel_piece", {"piece_id": piece})
    world.patch(KIND_PROFILE, PROFILE_ID, return_address=None)
    with pytest.raises(ActionError, match="no return address"):
        world.plan("send_piece", {"contact_id": world.ids["contact_ids"][0], "design_id": world.ids["design_id"],
                                  "message": "hi"})
