"""The mail toolset end to end: the live MCP server, the real Python client, and the confirm click
(``gate.clicks.confirm_click``, the function the confirm API calls)."""

from __future__ import annotations

import pytest

from countersign.core.card_states import Refusal, RefusalReason
from countersign.gate.question import Question
from countersign.gate.runner import run_unheld
from countersign.store.docs import DocWrite
from countersign.toolkit import ActionContext
from countersign.toolsets.mail import TOOLSET
from countersign.toolsets.mail.demo import seed
from countersign.toolsets.mail.kinds import KIND_CAMPAIGN, KIND_DESIGN, KIND_LEDGER, KIND_LIST, LEDGER_ID, pieces_kind
from tests.support.harness import mcp_client

pytestmark = pytest.mark.anyio

PENDING, COMPLETED = "pending", "completed"


@pytest.fixture
def mail(tenant):
    ctx = ActionContext(tenant.store.docs, tenant.store.workspaces.get_workspace(tenant.workspace_id), tenant.person,
                        None, 0)
    tenant.ids = seed(tenant.store.docs, ctx)
    return tenant


def ctx_of(t, person=None):
    return ActionContext.reading(t.store.docs, t.store.workspaces, t.store.workspaces.get_workspace(t.workspace_id),
                                 person or t.person, None,
                            t.runtime.desk.now())


def run(t, name, args, person=None):
    """Arrange state directly through the toolset (not through MCP): plan, apply, commit at once."""
    q = Question.of(t.runtime.registry.action(name), args, ctx_of(t, person))
    return run_unheld(t.runtime.desk, q)["result"]


def doc(t, kind, doc_id):
    return t.store.docs.get_doc(t.workspace_id, kind, doc_id).data


def settings(t, **values):
    t.store.workspaces.update_workspace_settings(t.workspace_id, values)


async def call(client, tool, args):
    r = await client.call_tool(tool, args)
    if r.is_error:
        return {"status": "error", "error": r.content[0].text}
    return r.structured_content


async def status(client, card_id):
    return await call(client, "get_confirmation_status", {"confirmation_id": card_id})


def cid(t):
    return {"campaign_id": t.ids["campaign_id"]}


async def test_the_mail_tools_are_served(mail):
    async with mail.client() as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        credits = await call(c, "get_credits", {})
    for name in ("launch_campaign", "import_contacts", "approve_design", "set_return_address", "list_campaigns",
                 "set_ask_before_drafting", "update_workspace_preferences", "grant_role"):
        assert name in tools
    assert "Always waits for a person" in tools["launch_campaign"].description
    assert "Runs at once" in tools["set_workspace_name"].description
    assert tools["list_campaigns"].annotations.read_only_hint is True
    assert "contacts" in tools["import_contacts"].input_schema["properties"]
    assert credits["balance"] == "100.00"


async def test_never_class_runs_on_the_call_and_always_class_is_held_with_every_setting_off(mail):
    settings(mail, ask_before_drafting=False, ask_before_approvals=False)
    async with mail.client() as c:
        renamed = await call(c, "set_workspace_name", {"name": "Acme Mail"})
        kit = await call(c, "update_brand_kit", {"font": "Lora"})
        prefs = await call(c, "update_workspace_preferences", {"timezone": "Europe/Paris"})
        launch = await call(c, "launch_campaign", cid(mail))
        buy = await call(c, "buy_credits", {"credits": 20})
        suppress = await call(c, "suppress_domain", {"domain": "globex.example"})
    assert [renamed["status"], kit["status"], prefs["status"]] == [COMPLETED] * 3
    assert renamed["next"][0]["tool"] == "update_brand_kit"
    assert [launch["status"], buy["status"], suppress["status"]] == [PENDING] * 3
    assert launch["title"] == "Launch ‘Q4 outreach’ to 6 contacts: 6 postcards, 12.00 credits"
    assert doc(mail, KIND_CAMPAIGN, mail.ids["campaign_id"])["status"] == "draft"


async def test_drafting_steps_follow_the_setting(mail):
    args = {"design_id": mail.ids["design_id"], "prompt": "golden leaves"}
    async with mail.client() as c:
        held = await call(c, "generate_design_image", args)
        settings(mail, ask_before_drafting=False)
        ran = await call(c, "generate_design_image", {**args, "prompt": "red leaves"})
        imported = await call(c, "import_contacts", {"contacts": [{"name": "Bea", "email": "bea@new.example"}]})
    assert held["status"] == PENDING
    assert held["title"] == "Generate a new image for design ‘Autumn postcard’: draft version 2"
    assert ran["status"] == COMPLETED and ran["result"]["draft_version"] == 2
    assert imported["status"] == COMPLETED and imported["result"]["imported"] == 1


async def test_turning_drafting_off_is_itself_held_and_confirmed_on_the_page(mail):
    async with mail.client() as c:
        off = await call(c, "set_ask_before_drafting", {"enabled": False})
        assert off["status"] == PENDING and off["title"] == "Stop asking before drafting steps"
        image = {"design_id": mail.ids["design_id"], "prompt": "frost"}
        still_held = await call(c, "generate_design_image", image)
        assert still_held["status"] == PENDING
        mail.confirm_on_page(off["confirmationId"])
        done = await status(c, off["confirmationId"])
        at_once = await call(c, "generate_design_image", {**image, "prompt": "snow"})
        on = await call(c, "set_ask_before_drafting", {"enabled": True})
        held_again = await call(c, "generate_design_image", {**image, "prompt": "rain"})
    assert done["status"] == COMPLETED and done["result"] == {"ask_before_drafting": False}
    assert done["next"] == [{"tool": "list_campaigns", "description": "Carry on with the drafting work.",
                             "personMustAct": False}]
    assert at_once["status"] == COMPLETED
    assert on["status"] == COMPLETED and held_again["status"] == PENDING
    assert mail.store.workspaces.get_workspace(mail.workspace_id).setting("ask_before_drafting") is True


async def test_a_list_feeding_a_live_campaign_is_held_even_with_drafting_off(mail):
    run(mail, "launch_campaign", cid(mail))
    new = run(mail, "import_contacts", {"new_list_name": "Webinar", "contacts": [
        {"name": "Cy", "email": "cy@new.example", "line1": "1 Rd", "city": "X", "postal_code": "1", "country": "US"}]})
    list_id = next(d.id for d in mail.store.docs.list_docs(mail.workspace_id, KIND_LIST) if d.data["name"] == "Webinar")
    settings(mail, ask_before_drafting=False)
    second = run(mail, "create_campaign", {"name": "Spring", "design_ids": [mail.ids["design_id"]]})
    async with mail.client() as c:
        live = await call(c, "add_list_to_campaign", {**cid(mail), "list_id": list_id})
        draft = await call(c, "add_list_to_campaign", {"campaign_id": second["campaign_id"], "list_id": list_id})
        mail.confirm_on_page(live["confirmationId"])
        done = await status(c, live["confirmationId"])
    assert live["status"] == PENDING
    assert live["title"] == "Add list ‘Webinar’ to live campaign ‘Q4 outreach’: 1 new contact, 1 postcard, 2.00 credits"
    assert draft["status"] == COMPLETED
    assert done["status"] == COMPLETED and done["result"]["enrolled"] == 1
    assert any(s["tool"] == "bulk_approve_messages" and s["personMustAct"] for s in done["next"])
    assert new["contact_ids"][0] in {p["contact_id"] for b in mail.store.docs.list_docs(
        mail.workspace_id, pieces_kind(mail.ids["campaign_id"])) for p in b.data["pieces"]}


async def test_state_dependent_actions_move_between_running_and_held(mail):
    address = {"name": "Acme", "line1": "2 Side St", "city": "Springfield", "postal_code": "12345", "country": "US"}
    link = {"sender_id": mail.ids["sender_id"], "sender_meeting_link": "https://meet.example/new"}
    camp = mail.store.docs.get_doc(mail.workspace_id, KIND_CAMPAIGN, mail.ids["campaign_id"])
    async with mail.client() as c:
        held_address = await call(c, "set_return_address", address)
        mail.store.docs.write_docs(mail.workspace_id, [DocWrite(KIND_CAMPAIGN, camp.id, None, camp.version)])
        saved_address = await call(c, "set_return_address", {**address, "line1": "3 Side St"})
        link_before = await call(c, "update_workspace_preferences", link)
        run(mail, "send_piece", {"contact_id": mail.ids["contact_ids"][0], "design_id": mail.ids["design_id"],
                                 "message": "Hello"})
        link_after = await call(c, "update_workspace_preferences", {**link,
                                                                    "sender_meeting_link": "https://m.example/x"})
        signature_after = await call(c, "update_workspace_preferences", {"signature": "Best"})
        address_after = await call(c, "set_return_address", {**address, "line1": "4 Side St"})
    assert held_address["status"] == PENDING and held_address["title"].startswith("Set the return address to Acme")
    assert saved_address["status"] == COMPLETED
    assert link_before["status"] == COMPLETED
    assert link_after["status"] == PENDING and any("landing pages" in line for line in link_after["lines"])
    assert signature_after["status"] == COMPLETED
    assert address_after["status"] == PENDING


async def test_approvals_are_held_only_while_the_item_prints_and_the_setting_is_on(mail):
    async with mail.client() as c:
        design_now = await call(c, "approve_design", {"design_id": mail.ids["design_id"]})  # no live campaign
        run(mail, "launch_campaign", cid(mail))
        pieces = [p["id"] for b in mail.store.docs.list_docs(mail.workspace_id, pieces_kind(mail.ids["campaign_id"]))
                  for p in b.data["pieces"]]
        held = await call(c, "review_message", {"piece_id": pieces[0]})
        bulk_held = await call(c, "bulk_approve_messages", {**cid(mail), "piece_ids": pieces[1:3]})
        settings(mail, ask_before_approvals=False)
        ran = await call(c, "review_message", {"piece_id": pieces[3]})
        settings(mail, ask_before_approvals=True)
        rejected = await call(c, "review_message", {"piece_id": pieces[4], "decision": "reject"})
        mail.confirm_on_page(held["confirmationId"])
        done = await status(c, held["confirmationId"])
    assert design_now["status"] == COMPLETED and design_now["result"]["published_version"] == 1
    assert held["status"] == PENDING and held["title"].endswith("on ‘Q4 outreach’: it prints now")
    assert (
        bulk_held["status"] == PENDING
        and bulk_held["title"] == "Approve 2 waiting messages on ‘Q4 outreach’: they print now"
    )
    assert ran["status"] == COMPLETED and ran["result"]["status"] == "printed"
    assert rejected["status"] == COMPLETED and rejected["result"]["status"] == "cancelled"
    assert done["status"] == COMPLETED and done["next"] == [
        {"tool": "get_campaign", "description": "See what is still waiting for review.", "personMustAct": False}]


async def test_request_confirmation_works_for_every_action_and_refuses_reads(mail):
    settings(mail, ask_before_drafting=False)
    extra = run(mail, "create_campaign", {"name": "Spring", "list_ids": [mail.ids["list_id"]],
                                          "design_ids": [mail.ids["design_id"]], "copy_template": "hi {first_name}"})
    run(mail, "launch_campaign", cid(mail))
    run(mail, "generate_design_image", {"design_id": mail.ids["design_id"], "prompt": "winter"})
    run(mail, "pause_campaign", cid(mail))
    webinar = run(
        mail, "import_contacts", {"new_list_name": "Webinar", "contacts": [{"name": "Cy", "email": "cy@n.example"}]}
    )
    list_id = next(d.id for d in mail.store.docs.list_docs(mail.workspace_id, KIND_LIST) if d.data["name"] == "Webinar")
    piece = next(p["id"] for b in mail.store.docs.list_docs(mail.workspace_id, pieces_kind(mail.ids["campaign_id"]))
                 for p in b.data["pieces"])
    other = mail.add_person("approver")
    contact, design = mail.ids["contact_ids"][0], mail.ids["design_id"]
    calls = {
        "set_workspace_name": {"name": "Acme Mail"},
        "update_brand_kit": {"font": "Lora"},
        "finish_setup": None,
        "set_return_address": {"name": "A", "line1": "1", "city": "X", "postal_code": "1", "country": "US"},
        "update_workspace_preferences": {"timezone": "Europe/Paris"},
        "set_ask_before_drafting": {"enabled": True},
        "import_contacts": {"contacts": [{"name": "Di", "email": "di@n.example"}]},
        "generate_design_image": {"design_id": design, "prompt": "snow"},
        "polish_copywriting": {"campaign_id": extra["campaign_id"]},
        "rewrite_waiting_drafts": {**cid(mail), "instructions": "warmer"},
        "add_list_to_campaign": {**cid(mail), "list_id": list_id},
        "create_campaign": {"name": "Summer"},
        "approve_design": {"design_id": design},
        "review_message": {"piece_id": piece},
        "bulk_approve_messages": cid(mail),
        "launch_campaign": {"campaign_id": extra["campaign_id"]},
        "resume_campaign": cid(mail),
        "end_campaign": cid(mail),
        "pause_campaign": None,
        "send_piece": {"contact_id": contact, "design_id": design, "message": "Hello"},
        "cancel_piece": {"piece_id": piece},
        "buy_credits": {"credits": 10},
        "suppress_domain": {"domain": "globex.example"},
        "grant_role": {"email": other.email, "role": "admin"},
        "revoke_role": {"email": other.email},
    }
    mail_actions = {a.name for a in TOOLSET.actions}
    assert mail_actions == set(calls), set(calls) ^ mail_actions
    assert mail_actions <= set(mail.runtime.registry.actions)
    async with mail.client() as c:
        replies = {}
        for tool, args in calls.items():
            if args is None:  # finish_setup (already finished) and pause_campaign (paused) refuse by state
                replies[tool] = await call(c, "request_confirmation", {"tool": tool, "arguments": cid(mail)
                                                                       if tool == "pause_campaign" else {}})
                continue
            replies[tool] = await call(c, "request_confirmation", {"tool": tool, "arguments": args})
        reads = {r: await call(c, "request_confirmation", {"tool": r, "arguments": {}})
                 for r in ("list_campaigns", "get_credits", "list_designs")}
        renamed = replies["set_workspace_name"]["confirmationId"]
        mail.confirm_on_page(renamed)
        done = await status(c, renamed)
    for tool, reply in replies.items():
        if calls[tool] is None:
            assert reply["status"] == "error", tool
            continue
        assert reply["status"] == PENDING, (tool, reply)
        assert reply["title"] and reply["confirmationUrl"].endswith(reply["confirmationId"]), tool
    for name, reply in reads.items():
        assert reply["status"] == "error" and f"{name} is a read" in reply["error"]
    assert done["status"] == COMPLETED and mail.store.workspaces.get_workspace(mail.workspace_id).name == "Acme Mail"
    assert webinar["imported"] == 1


async def test_publishing_on_launch_by_role(mail):
    approver, member = mail.add_person("approver"), mail.add_person("member")
    async with mcp_client(mail.url, mail.connect(member)) as c:
        refused = await call(c, "launch_campaign", cid(mail))
        listed = await call(c, "list_confirmations", {})
    assert refused["status"] == "error" and "you (member) cannot publish designs" in refused["error"]
    assert listed["confirmations"] == []
    async with mcp_client(mail.url, mail.connect(approver)) as c:
        held = await call(c, "launch_campaign", cid(mail))
        assert "Publishes design ‘Autumn postcard’ version 1" in held["lines"]
        assert "Copy review: every draft waits for a person before it prints" in held["lines"]
        mail.confirm_on_page(held["confirmationId"], person=approver)
        done = await status(c, held["confirmationId"])
    assert done["status"] == COMPLETED
    assert done["result"]["published"] == [{"design": mail.ids["design_id"], "name": "Autumn postcard", "version": 1}]
    assert [s["tool"] for s in done["next"]] == ["get_campaign", "bulk_approve_messages", "get_credits"]
    assert doc(mail, KIND_DESIGN, mail.ids["design_id"])["published_version"] == 1


async def test_a_design_changed_after_the_card_is_refused_at_the_click_with_nothing_published(mail):
    async with mail.client() as c:
        held = await call(c, "launch_campaign", cid(mail))
        settings(mail, ask_before_drafting=False)
        changed = await call(c, "generate_design_image", {"design_id": mail.ids["design_id"], "prompt": "new"})
        assert changed["status"] == COMPLETED
        with pytest.raises(Refusal) as refused:
            mail.confirm_on_page(held["confirmationId"])
        after = await status(c, held["confirmationId"])
    assert refused.value.reason is RefusalReason.CHANGED
    assert after["status"] == "declined" and "changed since this card was drawn" in after["reason"]
    design = doc(mail, KIND_DESIGN, mail.ids["design_id"])
    assert design["published_version"] is None and design["draft_version"] == 2
    assert doc(mail, KIND_CAMPAIGN, mail.ids["campaign_id"])["status"] == "draft"


async def test_drift_at_the_click_and_credits_never_negative(mail):
    mail.store.workspaces.update_workspace_settings(mail.workspace_id, {"ask_before_drafting": False})
    second = run(mail, "create_campaign", {"name": "Follow-up", "list_ids": [mail.ids["list_id"]],
                                           "design_ids": [mail.ids["design_id"]], "copy_template": "Again"})
    ledger = mail.store.docs.get_doc(mail.workspace_id, KIND_LEDGER, LEDGER_ID)
    mail.store.docs.write_docs(mail.workspace_id, [DocWrite(KIND_LEDGER, LEDGER_ID, dict(ledger.data, balance=20_000),
                                                         ledger.version)])
    async with mail.client() as c:
        one = await call(c, "launch_campaign", cid(mail))
        two = await call(c, "launch_campaign", {"campaign_id": second["campaign_id"]})
        mail.confirm_on_page(one["confirmationId"])
        with pytest.raises(Refusal, match="Not enough credits"):
            mail.confirm_on_page(two["confirmationId"])
        first, refused = await status(c, one["confirmationId"]), await status(c, two["confirmationId"])
        too_much = await call(c, "launch_campaign", {"campaign_id": second["campaign_id"]})
        # the pieces behind a pending card move: the click is refused as changed
        end = await call(c, "end_campaign", cid(mail))
        assert end["title"] == "End ‘Q4 outreach’: 6 pieces not yet printed cancelled, 12.00 credits returned"
        piece = next(p["id"] for b in mail.store.docs.list_docs(mail.workspace_id, pieces_kind(mail.ids["campaign_id"]))
                     for p in b.data["pieces"])
        run(mail, "cancel_piece", {"piece_id": piece})
        with pytest.raises(Refusal) as moved:
            mail.confirm_on_page(end["confirmationId"])
        ended = await status(c, end["confirmationId"])
    assert first["status"] == COMPLETED and first["result"]["spent"] == 12_000
    assert refused["status"] == "declined" and "Not enough credits" in refused["reason"]
    assert too_much["status"] == "error" and "needs 12.00 credits, and the balance is 8.00 credits" in too_much["error"]
    assert moved.value.reason is RefusalReason.CHANGED and ended["status"] == "declined"
    assert doc(mail, KIND_LEDGER, LEDGER_ID)["balance"] == 8000 + 2000  # one cancelled piece came back
    assert doc(mail, KIND_CAMPAIGN, mail.ids["campaign_id"])["status"] == "live"


async def test_an_ended_campaign_and_a_suppressed_recipient_are_errors_at_the_call(mail):
    run(mail, "end_campaign", cid(mail))
    async with mail.client() as c:
        ended = await call(c, "launch_campaign", cid(mail))
        run(mail, "approve_design", {"design_id": mail.ids["design_id"]})
        held = await call(
            c,
            "send_piece",
            {"contact_id": mail.ids["contact_ids"][1], "design_id": mail.ids["design_id"], "message": "Hi"},
        )
        run(mail, "suppress_domain", {"domain": "cobol.example"})
        suppressed = await call(c, "send_piece", {"contact_id": mail.ids["contact_ids"][1],
                                                  "design_id": mail.ids["design_id"], "message": "Hi again"})
        with pytest.raises(Refusal, match="cannot be mailed"):
            mail.confirm_on_page(held["confirmationId"])
    assert ended["status"] == "error" and "has ended" in ended["error"]
    assert suppressed["status"] == "error" and "the domain cobol.example is suppressed" in suppressed["error"]
    assert doc(mail, KIND_LEDGER, LEDGER_ID)["balance"] == 100_000
