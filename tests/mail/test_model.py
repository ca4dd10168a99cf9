"""The mail model: copy, audience, enrolment, pieces and the demo data (on both stores)."""

from __future__ import annotations

import pytest

from countersign.toolkit import ActionError
from countersign.toolsets.mail import TOOLSET
from countersign.toolsets.mail.action import create
from countersign.toolsets.mail.copywriting import polish, render_copy
from countersign.toolsets.mail.kinds import (
    KIND_CAMPAIGN,
    KIND_CONTACT,
    KIND_LEDGER,
    KIND_SUPPRESSION,
    LEDGER_ID,
    REVIEW_CLEAN,
    REVIEW_EVERY,
    SUPPRESSION_ID,
    batch_name,
    piece_id,
    pieces_kind,
    split_piece_id,
)
from countersign.toolsets.mail.printing import enrol
from countersign.toolsets.mail.publishing import is_draft
from countersign.toolsets.mail.snapshot import Mail
from countersign.toolsets.mail.text import credits, format_counts


def test_render_copy_marks_unresolved_placeholders_unclean():
    text, clean, by = render_copy("Hi {first_name} at {company}", {"name": "Ada Lovelace", "company": "AE"}, False)
    assert (text, clean, by) == ("Hi Ada at AE", True, "template")
    text, clean, _ = render_copy("Hi {first_name} at {company}", {"name": "Ada Lovelace", "company": ""}, False)
    assert clean is False and text == "Hi Ada at "
    _, clean, _ = render_copy("Hi {nickname}", {"name": "Ada"}, False)
    assert clean is False
    text, clean, by = render_copy("Hi {first_name}", {"name": "Ada", "company": "AE"}, True)
    assert by == "model" and "AE" in text and clean


def test_polish_and_money_text():
    assert polish("  hello there ,  i think this is great  ") == "Hello there, I think this is great."
    assert polish("Done.") == "Done."
    assert credits(480000) == "480.00 credits"
    assert format_counts({"postcard": 240, "letter": 1}) == "1 letter, 240 postcards"
    assert format_counts({"handwritten": 2}) == "2 handwritten notes"


def test_piece_ids_round_trip():
    pid = piece_id("cp_abc", batch_name(3), 17)
    assert pid == "cp_abc.b0003.017"
    assert split_piece_id(pid) == ("cp_abc", "b0003", 17)
    for bad in ("", "x", "a.b", "a.b.c", None, 7):
        assert split_piece_id(bad)[0] is None


def test_demo_seeds_contacts_list_draft_design_campaign_and_credits(world):
    mail = Mail(world.ctx())
    assert len(mail.contacts) == 6 and len(mail.lists) == 1
    (design,) = mail.designs.values()
    assert is_draft(design) and design.data["draft_version"] == 1
    (camp,) = mail.campaigns.values()
    assert camp.data["status"] == "draft" and camp.data["copy_review"] == REVIEW_EVERY
    assert mail.balance() == 100_000
    assert mail.profile.data["return_address"]["city"] == "San Francisco"
    assert TOOLSET.demo is not None


def test_audience_skips_suppressed_and_addressless_contacts(world):
    ids = world.ids["contact_ids"]
    world.patch(KIND_CONTACT, ids[0], suppressed=True)
    world.patch(KIND_CONTACT, ids[1], address={"line1": "x"})
    world.store.docs.write_docs(world.ws, [create(KIND_SUPPRESSION, SUPPRESSION_ID,
                                               {"domains": ["bletchley.example"], "contacts": []})])
    mail = Mail(world.ctx())
    people, skipped = mail.audience(mail.campaigns[world.ids["campaign_id"]])
    assert len(people) == 3
    assert skipped == {"suppressed": 2, "no mailing address": 1}


def test_enrolment_follows_the_copy_review_mode(world):
    cid = world.ids["campaign_id"]
    world.patch(KIND_CAMPAIGN, cid, copy_review=REVIEW_CLEAN, copy="Hi {first_name}")
    mail = Mail(world.ctx())
    camp = mail.campaigns[cid]
    people, _ = mail.audience(camp)
    designs = [mail.designs[world.ids["design_id"]]]
    e = enrol(mail, camp, people, designs, world.ctx())
    assert (e.printed, e.waiting, e.spend) == (6, 0, 12_000)
    # drafts a model writes wait until 10 pieces on the campaign are approved
    world.patch(KIND_CAMPAIGN, cid, personalize=True)
    mail = Mail(world.ctx())
    camp = mail.campaigns[cid]
    assert enrol(mail, camp, people, designs, world.ctx()).waiting == 6
    assert enrol(mail, camp, people, designs, world.ctx(), approved=10).printed == 6
    world.patch(KIND_CAMPAIGN, cid, copy_review=REVIEW_EVERY, personalize=False)
    mail = Mail(world.ctx())
    assert enrol(mail, mail.campaigns[cid], people, designs, world.ctx()).waiting == 6


def test_a_launch_keeps_its_pieces_in_batches_of_at_most_100(store):
    from tests.mail.world import World

    contacts = [(f"Person {i:03d}", "Co", f"p{i}@co.example", f"{i} Road", "Town", "12345", "US") for i in range(130)]
    w = World(store, credits=1000, contacts=contacts)
    plan = w.plan("launch_campaign", {"campaign_id": w.ids["campaign_id"]})
    assert plan.preview.title == "Launch ‘Q4 outreach’ to 130 contacts: 130 postcards, 260.00 credits"
    w.launch()
    batches = store.docs.list_docs(w.ws, pieces_kind(w.ids["campaign_id"]))
    assert [len(b.data["pieces"]) for b in batches] == [100, 30]
    assert len(w.pieces()) == 130 and w.balance() == 1000_000 - 260_000
    batch, index, piece = Mail(w.ctx()).piece(w.pieces()[120]["id"])
    assert batch.id == "b0001" and index == 20 and piece["status"] == "waiting"


def test_piece_lookup_refuses_unknown_and_foreign_ids(world):
    mail = Mail(world.ctx())
    for bad in ("nope", "cp_x.b0000.000", f"{world.ids['campaign_id']}.b0000.999"):
        with pytest.raises(ActionError, match="no piece"):
            mail.piece(bad)


def test_serve_demo_fills_a_mail_workspace(store, tmp_path):
    from countersign.runtime import build
    from countersign.settings import Settings
    from countersign.surfaces.local.demo import seed_demo

    runtime = build(Settings(data_dir=tmp_path), toolsets=[TOOLSET], store=store)
    info = seed_demo(runtime)
    person = store.workspaces.get_person_by_email(info["person_email"])
    campaigns = store.docs.list_docs(person.workspace_id, KIND_CAMPAIGN)
    assert [c.data["name"] for c in campaigns] == ["Q4 outreach"]
    assert store.docs.get_doc(person.workspace_id, KIND_LEDGER, LEDGER_ID).data["balance"] == 100_000
    assert len(store.docs.list_docs(person.workspace_id, KIND_CONTACT)) == 6
