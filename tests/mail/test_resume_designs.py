"""What a resume prints: the new contacts' pieces print the design version the card names, and a
design published again before the click refuses it; pieces approved while paused print the
version they were drafted with, and the card says which."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason

EVE = {"name": "Eve", "email": "eve@new.example", "line1": "1 Rd", "city": "X", "postal_code": "1", "country": "US"}


def _paused(world):
    world.set(ask_before_drafting=False)
    world.run("approve_design", {"design_id": world.ids["design_id"]})  # version 1
    world.launch()
    world.run("pause_campaign", {"campaign_id": world.ids["campaign_id"]})


def _publish_again(world):
    design = world.ids["design_id"]
    world.run("generate_design_image", {"design_id": design, "prompt": "winter snow"})
    world.run("approve_design", {"design_id": design})  # runs at once: the campaign is paused


def test_a_design_published_again_before_the_click_refuses_the_resume(world):
    _paused(world)
    new = world.run("import_contacts", {"list_id": world.ids["list_id"], "contacts": [EVE]})
    held = world.request("resume_campaign", {"campaign_id": world.ids["campaign_id"]})
    assert "New contacts' pieces print design ‘Autumn postcard’ version 1" in held["lines"]
    balance = world.balance()
    _publish_again(world)
    assert world.design()["published_version"] == 2
    with pytest.raises(Refusal) as refused:
        world.click(held["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert world.campaign()["status"] == "paused" and world.balance() == balance
    assert not any(p["contact_id"] == new["contact_ids"][0] for p in world.pieces())
    again = world.request("resume_campaign", {"campaign_id": world.ids["campaign_id"]})
    assert "New contacts' pieces print design ‘Autumn postcard’ version 2" in again["lines"]
    assert world.click(again["confirmationId"]).state is CardState.COMPLETED
    eve = [p for p in world.pieces() if p["contact_id"] == new["contact_ids"][0]]
    assert [p["design_version"] for p in eve] == [2]


def test_the_card_names_the_version_each_released_piece_prints(world):
    _paused(world)
    world.run("bulk_approve_messages", {"campaign_id": world.ids["campaign_id"]})  # approved with version 1
    approved = [p for p in world.pieces() if p["status"] == "approved"]
    assert approved and {p["design_version"] for p in approved} == {1}
    _publish_again(world)
    held = world.request("resume_campaign", {"campaign_id": world.ids["campaign_id"]})
    assert f"{len(approved)} approved pieces print design ‘Autumn postcard’ version 1" in held["lines"]
    assert not any("version 2" in line for line in held["lines"])  # no new contacts: nothing prints version 2
    assert world.click(held["confirmationId"]).state is CardState.COMPLETED
    assert {p["design_version"] for p in world.pieces() if p["id"] in {a["id"] for a in approved}} == {1}
