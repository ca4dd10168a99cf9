"""Preparing a campaign and its audience.

``add_list_to_campaign`` follows the drafting setting (``setting:ask_before_drafting``), except
while the campaign it feeds is live: the people it adds are enrolled (and their pieces paid for)
at once, so that call is class always. ``create_campaign`` only makes a draft and runs on the call.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...core.ids import new_id
from ...core.preview import Preview
from ...toolkit import ALWAYS, NEVER, ActionContext, ActionError, Arguments, Effect, Step
from .action import MailAction, create, put
from .copywriting import review_line
from .drafting import DRAFTING
from .kinds import KIND_CAMPAIGN, REVIEW_EVERY, REVIEW_MODES
from .printing import enrol, ledger_after, need_credits
from .snapshot import Mail, campaign_is_live
from .text import count, credits, digest, format_counts, q
from .validation import check_write_count, validate_name


class AddListArgs(Arguments):
    campaign_id: str = Field(max_length=64)
    list_id: str = Field(max_length=64)


class AddListToCampaign(MailAction):
    name = "add_list_to_campaign"
    hold_rule = (
        'Waits for a person on the confirm page while the list feeds a live campaign (whatever the '
        'settings), and otherwise while the workspace asks before drafting steps.')
    title = "Preparing to add a list to a campaign"
    description = ("Add a list's audience to a campaign; on a live campaign the people it adds are enrolled and "
                   'mailed.')
    arguments = AddListArgs
    gate = DRAFTING
    drift_message = ("The campaign, the list's audience or the credits changed between the preview and the answer; "
                     "the list was not added.")

    def gate_class(self, args: AddListArgs, ctx: ActionContext):
        return ALWAYS if campaign_is_live(ctx, args.campaign_id) else DRAFTING

    def prepare(self, args: AddListArgs, ctx: ActionContext):
        mail = Mail(ctx)
        camp = mail.campaign(args.campaign_id)
        lst = mail.list(args.list_id)
        c = camp.data
        if c["status"] == "ended":
            raise ActionError(f"campaign_id: {q(c['name'])} has ended; it takes no new audience.", field="campaign_id")
        if lst.id in c.get("list_ids", []):
            raise ActionError(f"list_id: {q(lst.data['name'])} already feeds {q(c['name'])}.", field="list_id")
        size = len(lst.data.get("contact_ids", []))
        new_campaign = dict(c, list_ids=[*c.get("list_ids", []), lst.id])
        subject = {"campaign": camp.id, "status": c["status"], "list": lst.id,
                   "list_contacts": digest(lst.data.get("contact_ids", []))}
        if c["status"] != "live":
            when_ = "when it launches" if c["status"] == "draft" else "when it resumes"
            title = (
                f"Add list {q(lst.data['name'])} ({count(size, 'contact')}) to campaign {q(c['name'])} ({c['status']})"
            )
            lines = [f"Its contacts are enrolled {when_}; nothing is printed or spent now"]
            return (
                subject,
                Preview(title, lines),
                Effect.writes(
                    {"campaign_id": camp.id, "list_ids": new_campaign["list_ids"]}, [put(camp, new_campaign)]
                ),
            )
        enrolled = mail.enrolled(camp.id)
        everyone, skipped = mail.audience(camp, extra_list_ids=[lst.id])
        before, _ = mail.audience(camp)
        already = {x.id for x in before} | enrolled
        fresh = [x for x in everyone if x.id not in already]
        designs = [mail.design(d, "design_ids") for d in c.get("design_ids", [])]
        if any(not d.data.get("published_version") for d in designs):
            raise ActionError(f"A design of {q(c['name'])} has no published version; approve it first.",
                              field="campaign_id")
        e = enrol(mail, camp, fresh, designs, ctx, publishing=False)
        need_credits(mail, e.spend, f"enrolling list {q(lst.data['name'])}")
        new_campaign["batches"] = int(c.get("batches", 0)) + len(e.batches)
        writes = [put(camp, new_campaign), ledger_after(mail, spend=e.spend, created=len(e.pieces), printed=e.printed),
                  *e.batches, *e.jobs]
        check_write_count(len(writes), "This list")
        subject["enrol"] = {"count": len(fresh), "digest": digest(x.id for x in fresh), "pieces": e.by_format,
                            "spend": e.spend, "printed": e.printed, "waiting": e.waiting}
        title = (f"Add list {q(lst.data['name'])} to live campaign {q(c['name'])}: {count(len(fresh), 'new contact')}, "
                 f"{format_counts(e.by_format)}, {credits(e.spend)}")
        lines = [f"Prints now: {e.printed}; waits for review: {e.waiting}",
                 review_line(c.get("copy_review", REVIEW_EVERY), c.get("approved_count", 0))]
        members = set(lst.data.get("contact_ids", []))
        overlap = sum(1 for x in everyone if x.id in members and x.id in already)
        if overlap:
            lines.append(f"{count(overlap, 'contact')} of the list already in the campaign's audience")
        for reason, n in skipped.items():
            if n:
                lines.append(f"Skipped: {n} {reason}")
        result = {"campaign_id": camp.id, "enrolled": len(fresh), "printed": e.printed, "waiting": e.waiting,
                  "spent": e.spend, "piece_ids": [p["id"] for p in e.pieces][:200]}
        return subject, Preview(title, lines), Effect.writes(result, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        if "enrolled" not in result:  # a campaign that is not live: enrolled when it launches or resumes
            return ["The list is added; its contacts are enrolled when the campaign goes live"]
        return [f"Enrolled {count(result['enrolled'], 'contact')} · {credits(result['spent'])} spent",
                f"Printing now: {result['printed']} · waiting for review: {result['waiting']}"]

    def next_steps(self, result, ctx):
        steps = [Step("get_campaign", "Check the campaign's audience and pieces.")]
        if result.get("waiting"):
            steps.append(
                Step("bulk_approve_messages", "Review the new drafts waiting for approval.", person_must_act=True)
            )
        return steps


class CreateCampaignArgs(Arguments):
    name: str = Field(min_length=1, max_length=120)
    list_ids: list[str] | None = Field(default=None, max_length=20)
    design_ids: list[str] | None = Field(default=None, max_length=5, description="One piece per design per contact")
    copy_template: str = Field(
        default="",
        max_length=2000,
        description="Copy template; {first_name}, {name} and {company} are filled in per contact",
    )
    copy_review: Literal["every_draft", "clean_auto"] = Field(
        default=REVIEW_EVERY,
        description="every_draft: every draft waits for a person; clean_auto: clean drafts print without review, "
                    "drafts a model writes wait until 10 pieces are approved")
    personalize: bool = Field(default=False, description="A model writes a personal line into each draft")


class CreateCampaign(MailAction):
    name = "create_campaign"
    title = "Creating a draft campaign"
    description = "Create a campaign in the draft state (nothing prints until it is launched)."
    arguments = CreateCampaignArgs
    gate = NEVER
    destructive = False
    drift_message = "The lists or designs changed between the preview and the answer; no campaign was created."

    def prepare(self, args: CreateCampaignArgs, ctx: ActionContext):
        mail = Mail(ctx)
        name = validate_name(args.name, "name")
        if any(c.data.get("name") == name for c in mail.campaigns.values()):
            raise ActionError(f"name: a campaign called {q(name)} exists.", field="name")
        lists = [mail.list(lid, "list_ids") for lid in dict.fromkeys(args.list_ids or [])]
        designs = [mail.design(did, "design_ids") for did in dict.fromkeys(args.design_ids or [])]
        if args.copy_review not in REVIEW_MODES:  # pragma: no cover - the Literal refuses it first
            raise ActionError("copy_review: unknown mode.", field="copy_review")
        data = {
            "name": name,
            "status": "draft",
            "list_ids": [x.id for x in lists],
            "design_ids": [d.id for d in designs],
            "copy": args.copy_template,
            "copy_review": args.copy_review,
            "personalize": args.personalize,
            "approved_count": 0,
            "batches": 0,
            "created_at": ctx.now,
        }
        cid = new_id("cp_")
        subject = {"new_campaign": {k: data[k] for k in ("name", "list_ids", "design_ids", "copy", "copy_review",
                                                           "personalize")}}
        lines = [f"Lists: {', '.join(q(x.data['name']) for x in lists) or '(none yet)'}",
                 f"Designs: {', '.join(q(d.data['name']) for d in designs) or '(none yet)'}",
                 review_line(args.copy_review, 0)]
        return (
            subject,
            Preview(f"Create draft campaign {q(name)}", lines),
            Effect.writes({"campaign_id": cid, "status": "draft"}, [create(KIND_CAMPAIGN, cid, data)]),
        )

    def outcome_lines(self, result: dict) -> list[str]:
        return ["The draft campaign is created; nothing is printed or spent until it launches"]

    def next_steps(self, result, ctx):
        return [
            Step("launch_campaign", "Launch it when the audience, designs and copy are ready.", person_must_act=True)
        ]


ACTIONS = [AddListToCampaign(), CreateCampaign()]
__all__ = ["ACTIONS"]
