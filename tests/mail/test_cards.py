"""Cards in process (both stores): publishing rules per role, drift at the click, credits that
never go negative when two cards are confirmed in a row, errors at the call and at the click."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.store.docs import DocWrite
from countersign.toolkit import ActionError
from countersign.toolsets.mail.kinds import DIRECT, KIND_CAMPAIGN, KIND_CONTACT, KIND_DESIGN, KIND_LEDGER, LEDGER_ID
from countersign.toolsets.mail.printing import ledger_after
from countersign.toolsets.mail.snapshot import Mail


def cid(world):
    return {"campaign_id": world.ids["campaign_id"]}


def pending(world, person=None):
    cards, _ = world.store.cards.list_pending_cards(world.ws, (person or world.owner).id, world.desk.now())
    return cards


# -- publishing ----------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["owner", "admin", "approver"])
def test_a_person_who_may_publish_sees_the_designs_on_the_card_and_publishing_runs_first(world, role):
    person = world.owner if role == "owner" else world.add_person(role)
    reply = world.request("launch_campaign", cid(world), person)
    assert reply["status"] == "pending"
    assert "Publishes design ‘Autumn postcard’ version 1" in reply["lines"]
    card = world.click(reply["confirmationId"], person)
    assert card.state is CardState.COMPLETED
    assert card.result["result"]["published"] == [
        {"design": world.ids["design_id"], "name": "Autumn postcard", "version": 1}]
    assert world.design()["published_version"] == 1 and world.campaign()["status"] == "live"


def test_a_member_is_refused_before_any_card_when_a_design_is_a_draft(world):
    member = world.add_person("member")
    with pytest.raises(ActionError, match="still a draft, and you \\(member\\) cannot publish"):
        world.request("launch_campaign", cid(world), member)
    with pytest.raises(ActionError, match="cannot publish"):
        world.request("send_piece", {"contact_id": world.ids["contact_ids"][0], "design_id": world.ids["design_id"],
                                     "message": "hi"}, member)
    assert pending(world, member) == [] and world.design()["published_version"] is None
    # once published, a member may launch: the card publishes nothing
    world.run("approve_design", {"design_id": world.ids["design_id"]})
    reply = world.request("launch_campaign", cid(world), member)
    assert not any(line.startswith("Publishes") for line in reply["lines"])
    assert "Prints design ‘Autumn postcard’ version 1" in reply["lines"]
    assert world.click(reply["confirmationId"], member).state is CardState.COMPLETED


def test_only_publishers_approve_designs(world):
    member, approver = world.add_person("member"), world.add_person("approver")
    with pytest.raises(ActionError, match="only an owner, admin or approver can approve designs; you are member"):
        world.request("approve_design", {"design_id": world.ids["design_id"]}, member)
    assert world.run("approve_design", {"design_id": world.ids["design_id"]}, approver)["published_version"] == 1


def test_a_design_changed_after_the_card_was_drawn_is_refused_with_nothing_published(world):
    reply = world.request("launch_campaign", cid(world))
    world.set(ask_before_drafting=False)
    world.run("generate_design_image", {"design_id": world.ids["design_id"], "prompt": "new look"})
    with pytest.raises(Refusal) as refused:
        world.click(reply["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert world.design()["published_version"] is None and world.campaign()["status"] == "draft"
    assert world.balance() == 100_000
    card = world.store.cards.get_card(world.ws, reply["confirmationId"], world.desk.now())
    assert card.state is CardState.DECLINED and "changed since this card was drawn" in card.refusal


def test_losing_the_right_to_publish_before_the_click_refuses_it(world):
    approver = world.add_person("approver")
    reply = world.request("launch_campaign", cid(world), approver)
    world.run("revoke_role", {"email": approver.email})
    with pytest.raises(Refusal, match="cannot publish"):
        world.click(reply["confirmationId"], approver)
    assert world.design()["published_version"] is None
    assert world.campaign()["status"] == "draft" and world.balance() == 100_000 and world.pieces() == []
    card = world.store.cards.get_card(world.ws, reply["confirmationId"], world.desk.now())
    assert card.state is CardState.DECLINED and "you (member) cannot publish designs" in card.refusal
    assert [e.event for e in world.store.cards.audit_trail(world.ws, card.id)] == ["filed", "refused"]


def before_commit(world, n: int, meanwhile) -> None:
    """Run ``meanwhile`` just before the desk's ``n``-th commit: another writer lands in between."""
    real = world.desk.commit
    count = {"n": 0}

    def commit(c, answer=None):
        count["n"] += 1
        if count["n"] == n:
            meanwhile()
        return real(c, answer)

    world.desk.commit = commit


def test_designs_stay_published_when_the_launch_then_stops(world):
    reply = world.request("launch_campaign", cid(world))
    before_commit(world, 2, lambda: world.run("buy_credits", {"credits": 10}))  # between publishing and launching
    card = world.click(reply["confirmationId"])
    assert card.state is CardState.FAILED
    error = card.result["error"]
    assert "designs it published stay published" in error and "What moved: the credit balance" in error
    assert card.result["done"] == ["publish ‘Autumn postcard’ version 1"]
    assert card.result["not_done"] == ["launch ‘Q4 outreach’"]
    assert world.design()["published_version"] == 1
    assert world.campaign()["status"] == "draft" and world.pieces() == [] and world.balance() == 110_000
    events = [e.event for e in world.store.cards.audit_trail(world.ws, card.id)]
    assert events == ["filed", "running", "failed"]


def test_a_design_race_publishes_nothing(world):
    reply = world.request("launch_campaign", cid(world))
    before_commit(world, 1, lambda: world.patch(KIND_DESIGN, world.ids["design_id"], name="Renamed"))
    with pytest.raises(Refusal) as refused:
        world.click(reply["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert world.design()["published_version"] is None and world.balance() == 100_000
    assert world.campaign()["status"] == "draft"


# -- credits -------------------------------------------------------------------------------------


def test_two_launch_cards_confirmed_in_a_row_never_overdraw(world):
    world.patch(KIND_LEDGER, LEDGER_ID, balance=20_000)
    second = world.run("create_campaign", {"name": "Q4 follow-up", "list_ids": [world.ids["list_id"]],
                                           "design_ids": [world.ids["design_id"]], "copy_template": "Hi again"})
    one = world.request("launch_campaign", cid(world))
    two = world.request("launch_campaign", {"campaign_id": second["campaign_id"]})
    assert one["title"].endswith("12.00 credits") and two["title"].endswith("12.00 credits")
    assert world.click(one["confirmationId"]).state is CardState.COMPLETED
    with pytest.raises(Refusal, match="Not enough credits: launching ‘Q4 follow-up’ needs 12.00 credits, and the "
                                      "balance is 8.00 credits"):
        world.click(two["confirmationId"])
    assert world.balance() == 8000
    assert world.data(KIND_CAMPAIGN, second["campaign_id"])["status"] == "draft"


def test_two_send_cards_confirmed_in_a_row_never_overdraw(world):
    world.run("approve_design", {"design_id": world.ids["design_id"]})
    world.patch(KIND_LEDGER, LEDGER_ID, balance=3000)
    a, b = world.ids["contact_ids"][:2]
    design = world.ids["design_id"]
    one = world.request("send_piece", {"contact_id": a, "design_id": design, "message": "hi"})
    two = world.request("send_piece", {"contact_id": b, "design_id": design, "message": "hi"})
    world.click(one["confirmationId"])
    with pytest.raises(Refusal, match="Not enough credits"):
        world.click(two["confirmationId"])
    assert world.balance() == 1000 and len(world.pieces(DIRECT)) == 1


def test_insufficient_credits_is_an_error_at_the_call(world):
    world.patch(KIND_LEDGER, LEDGER_ID, balance=11_990)
    with pytest.raises(ActionError, match="needs 12.00 credits, and the balance is 11.99 credits"):
        world.request("launch_campaign", cid(world))
    assert pending(world) == []


def test_the_ledger_refuses_to_go_negative_even_if_a_plan_got_it_wrong(world):
    mail = Mail(world.ctx())
    with pytest.raises(ActionError, match="Not enough credits"):
        ledger_after(mail, spend=100_001)


# -- drift and refusals at the click ---------------------------------------------------------------


def test_the_audience_moving_refuses_the_click(world):
    reply = world.request("launch_campaign", cid(world))
    world.patch(KIND_CONTACT, world.ids["contact_ids"][0], suppressed=True)
    with pytest.raises(Refusal) as refused:
        world.click(reply["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert world.campaign()["status"] == "draft" and world.balance() == 100_000


def test_unrelated_changes_do_not_refuse_the_click(world):
    reply = world.request("launch_campaign", cid(world))
    world.run("buy_credits", {"credits": 10})  # more credits: the decision is unchanged
    world.run("update_brand_kit", {"font": "Lora"})
    assert world.click(reply["confirmationId"]).state is CardState.COMPLETED


def test_an_ended_campaign_is_an_error_at_the_call_and_refuses_the_click(world):
    reply = world.request("launch_campaign", cid(world))
    world.run("end_campaign", cid(world))
    with pytest.raises(Refusal, match="has ended"):
        world.click(reply["confirmationId"])
    card = world.store.cards.get_card(world.ws, reply["confirmationId"], world.desk.now())
    assert card.state is CardState.DECLINED and "has ended" in card.refusal
    assert [e.event for e in world.store.cards.audit_trail(world.ws, card.id)] == ["filed", "refused"]
    assert world.campaign()["status"] == "ended" and world.balance() == 100_000
    assert world.pieces() == [] and world.jobs() == []
    with pytest.raises(ActionError, match="has ended; an ended campaign cannot be launched again"):
        world.request("launch_campaign", cid(world))
    assert pending(world) == []
    for name in ("resume_campaign", "end_campaign", "polish_copywriting"):
        with pytest.raises(ActionError, match="ended"):
            world.plan(name, cid(world))


def test_a_suppressed_recipient_is_an_error_at_the_call_and_refuses_the_click(world):
    contact = world.ids["contact_ids"][1]
    args = {"contact_id": contact, "design_id": world.ids["design_id"], "message": "hi"}
    reply = world.request("send_piece", args)
    world.run("suppress_domain", {"domain": "cobol.example"})
    with pytest.raises(Refusal, match="cannot be mailed"):
        world.click(reply["confirmationId"])
    with pytest.raises(ActionError, match="Grace Hopper cannot be mailed"):
        world.request("send_piece", args)
    assert world.balance() == 100_000 and world.design()["published_version"] is None


def test_a_write_racing_the_click_on_something_the_card_does_not_show_is_no_drift(world):
    """The click's first commit finds the campaign moved (its copy edited): the request is planned
    again on fresh state, still matches what the person saw, and commits — keeping the edit."""
    world.run("approve_design", {"design_id": world.ids["design_id"]})
    world.launch()
    reply = world.request("end_campaign", cid(world))
    before_commit(world, 1, lambda: world.patch(KIND_CAMPAIGN, world.ids["campaign_id"], copy="changed"))
    card = world.click(reply["confirmationId"])
    assert card.state is CardState.COMPLETED
    assert world.campaign()["status"] == "ended" and world.campaign()["copy"] == "changed"


def test_never_class_actions_can_be_asked_for_a_card_and_run_at_the_click(world):
    reply = world.request("set_workspace_name", {"name": "Acme Mail"})
    assert reply["status"] == "pending" and reply["title"] == "Rename the workspace ‘Acme’ to ‘Acme Mail’"
    assert world.store.workspaces.get_workspace(world.ws).name == "Acme"
    card = world.click(reply["confirmationId"])
    assert card.state is CardState.COMPLETED and world.store.workspaces.get_workspace(world.ws).name == "Acme Mail"
    assert card.result["next"] == [{"tool": "update_brand_kit", "description": "Set the brand colours, logo and font.",
                                    "personMustAct": False}]


def test_a_rename_between_the_card_and_the_click_is_drift(world):
    reply = world.request("set_workspace_name", {"name": "Acme Mail"})
    world.store.workspaces.rename_workspace(world.ws, "Acme Elsewhere")
    with pytest.raises(Refusal) as refused:
        world.click(reply["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert "The workspace name changed between the preview and the answer" in refused.value.message
    assert world.store.workspaces.get_workspace(world.ws).name == "Acme Elsewhere"


def test_a_campaign_deleted_before_the_commit_is_drift_and_nothing_runs(world):
    world.run("approve_design", {"design_id": world.ids["design_id"]})
    world.launch()
    reply = world.request("end_campaign", cid(world))
    balance = world.balance()

    def delete():
        campaign = world.doc(KIND_CAMPAIGN, world.ids["campaign_id"])
        world.store.docs.write_docs(world.ws, [DocWrite(campaign.kind, campaign.id, None, campaign.version)])

    before_commit(world, 1, delete)
    with pytest.raises(Refusal) as refused:
        world.click(reply["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert "campaign_id" in refused.value.message
    assert world.doc(KIND_CAMPAIGN, world.ids["campaign_id"]) is None and world.balance() == balance


def test_turning_drafting_off_through_a_card(world):
    reply = world.request("set_ask_before_drafting", {"enabled": False})
    assert reply["title"] == "Stop asking before drafting steps"
    assert world.store.workspaces.get_workspace(world.ws).setting("ask_before_drafting") is True
    world.click(reply["confirmationId"])
    assert world.store.workspaces.get_workspace(world.ws).setting("ask_before_drafting") is False
