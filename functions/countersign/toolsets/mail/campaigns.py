"""Campaign lifecycle: launch, resume and end are class always; pausing (which stops mail) runs at once.

A launch card names its audience, pieces and spend, the draft designs it publishes (name and
version; only when the confirming person may publish) and how copy is reviewed. Publishing runs
first, in its own write: the designs stay published if the launch then stops.
"""

from __future__ import annotations

from pydantic import Field

from ...core.preview import Preview, one_line
from ...toolkit import ALWAYS, NEVER, ActionContext, ActionError, Arguments, Doc, DocWrite, Effect, Phase, Step
from .action import MailAction, put
from .copywriting import review_line
from .kinds import REVIEW_EVERY
from .printing import cancel_pieces, enrol, ledger_after, need_credits, print_job
from .publishing import drafts_to_publish, is_draft, printing_version, publish_lines, publish_phases, publish_subject
from .snapshot import Mail
from .text import address_line, count, credits, digest, format_counts, published_lines, q
from .validation import check_write_count


class CampaignArgs(Arguments):
    campaign_id: str = Field(max_length=64, description="The campaign")


def _lists_line(mail: Mail, campaign: Doc) -> str:
    names = [q(mail.lists[lid].data["name"]) for lid in campaign.data.get("list_ids", []) if lid in mail.lists]
    return "Audience: " + (("list " if len(names) == 1 else "lists ") + ", ".join(names) if names else "(no lists)")


def _skipped_lines(skipped: dict[str, int]) -> list[str]:
    return [f"Skipped: {n} {reason}" for reason, n in skipped.items() if n]


def _excerpt(text: str, limit: int = 120) -> str:
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _approval_step(ctx: ActionContext, waiting: int) -> list[Step]:
    if not waiting:
        return []
    return [
        Step(
            "bulk_approve_messages",
            f"{count(waiting, 'draft')} wait for review; approve the ones that are ready.",
            person_must_act=bool(ctx.workspace.setting("ask_before_approvals")),
        )
    ]


class LaunchCampaign(MailAction):
    name = "launch_campaign"
    title = "Preparing a launch confirmation"
    description = ("Launch a draft campaign: enrol its audience, print what needs no review, debit the credits, and "
                   "publish its draft designs first.")
    arguments = CampaignArgs
    gate = ALWAYS
    drift_message = ("The campaign changed between the preview and the answer: its audience, designs, copy, credits "
                     "or state moved. Nothing was launched; call launch_campaign again for a new preview.")

    def prepare(self, args: CampaignArgs, ctx: ActionContext):
        mail = Mail(ctx)
        camp = mail.campaign(args.campaign_id)
        c = camp.data
        name = c["name"]
        if c["status"] == "ended":
            raise ActionError(f"campaign_id: {q(name)} has ended; an ended campaign cannot be launched again.",
                              field="campaign_id")
        if c["status"] == "live":
            raise ActionError(f"campaign_id: {q(name)} is already live.", field="campaign_id")
        if c["status"] == "paused":
            raise ActionError(f"campaign_id: {q(name)} is paused; use resume_campaign.", field="campaign_id")
        if not c.get("design_ids"):
            raise ActionError(f"campaign_id: {q(name)} has no design to print.", field="campaign_id")
        return_address = mail.profile.data.get("return_address")
        if not return_address:
            raise ActionError("The workspace has no return address yet; set one first (set_return_address).")
        designs = [mail.design(d, "campaign_id") for d in c["design_ids"]]
        drafts = drafts_to_publish(ctx, designs, "campaign_id")
        contacts, skipped = mail.audience(camp)
        if not contacts:
            raise ActionError(
                f"campaign_id: {q(name)} has no one to mail: its lists hold no contact that can be mailed.",
                field="campaign_id",
            )
        e = enrol(mail, camp, contacts, designs, ctx, publishing=True)
        need_credits(mail, e.spend, f"launching {q(name)}")
        new_campaign = dict(c, status="live", launched_at=ctx.now, launched_by=ctx.person.id,
                            batches=int(c.get("batches", 0)) + len(e.batches))
        launch_writes = [put(camp, new_campaign),
                         ledger_after(mail, spend=e.spend, created=len(e.pieces), printed=e.printed),
                         *e.batches, *e.jobs]
        check_write_count(len(launch_writes), "This launch")
        published = publish_subject(drafts)
        kept = " (the designs it published stay published)" if drafts else ""
        phases = publish_phases(drafts, ctx) + [
            Phase(f"launch {q(name)}", tuple(launch_writes),
                  failure=f"The campaign or the credits changed between the preview and the answer; the launch "
                          f"stopped{kept}, nothing was printed and no credits were debited."),
        ]
        mode = c.get("copy_review", REVIEW_EVERY)
        subject = {
            "campaign": camp.id, "name": name, "from": c["status"], "to": "live",
            "audience": {"count": len(contacts), "digest": digest(x.id for x in contacts), "skipped": skipped},
            "pieces": e.by_format, "spend": e.spend, "printed": e.printed, "waiting": e.waiting,
            "publish": published,
            "designs": [{"design": d.id, "version": printing_version(d)} for d in designs],
            "copy": c.get("copy", ""), "personalize": bool(c.get("personalize")), "copy_review": mode,
            "approved": int(c.get("approved_count", 0)), "return_address": return_address,
        }
        title = (
            f"Launch {q(name)} to {count(len(contacts), 'contact')}: {format_counts(e.by_format)}, {credits(e.spend)}"
        )
        lines = [_lists_line(mail, camp), *_skipped_lines(skipped), *publish_lines(drafts)]
        lines += [f"Prints design {q(d.data['name'])} version {d.data['published_version']}" for d in designs
                  if not is_draft(d)]
        lines += [
            review_line(mode, int(c.get("approved_count", 0))),
            f"Prints now: {e.printed}; waits for review: {e.waiting}",
            f"Copy: {_excerpt(c.get('copy', ''))}"
            + (" (a model adds a personal line)" if c.get("personalize") else ""),
            f"Return address: {address_line(return_address)}",
        ]
        result = {"campaign_id": camp.id, "status": "live", "enrolled": len(contacts), "pieces": len(e.pieces),
                  "printed": e.printed, "waiting": e.waiting, "spent": e.spend, "published": published}
        return subject, Preview(title, lines), Effect(result, tuple(phases))

    def outcome_lines(self, result: dict) -> list[str]:
        return ["The campaign is live", *published_lines(result.get("published")),
                f"Enrolled {count(result['enrolled'], 'contact')} · {count(result['pieces'], 'piece')} · "
                f"{credits(result['spent'])} spent",
                f"Printing now: {result['printed']} · waiting for review: {result['waiting']}"]

    def next_steps(self, result, ctx):
        return [Step("get_campaign", "Check the campaign's pieces and print queue."),
                *_approval_step(ctx, result.get("waiting", 0)),
                Step("get_credits", "Check the remaining credit balance.")]


class ResumeCampaign(MailAction):
    name = "resume_campaign"
    title = "Preparing a resume confirmation"
    description = ("Resume a paused campaign: approved pieces print, contacts added to its lists while it was "
                   "paused are enrolled and their credits debited.")
    arguments = CampaignArgs
    gate = ALWAYS
    drift_message = ("The campaign changed between the preview and the answer: its audience, approved pieces, "
                     "credits or state moved. It was not resumed; call resume_campaign again for a new preview.")

    def prepare(self, args: CampaignArgs, ctx: ActionContext):
        mail = Mail(ctx)
        camp = mail.campaign(args.campaign_id)
        c = camp.data
        name = c["name"]
        if c["status"] != "paused":
            hint = {"ended": "it has ended and cannot be resumed", "live": "it is already live",
                    "draft": "it has not been launched; use launch_campaign"}[c["status"]]
            raise ActionError(f"campaign_id: {q(name)} cannot be resumed: {hint}.", field="campaign_id")
        designs = [mail.design(d, "campaign_id") for d in c.get("design_ids", [])]
        enrolled = mail.enrolled(camp.id)
        audience, skipped = mail.audience(camp)
        fresh = [x for x in audience if x.id not in enrolled]
        e = enrol(mail, camp, fresh, designs, ctx, publishing=False)
        need_credits(mail, e.spend, f"resuming {q(name)}")
        approved = [(b, i, p) for b, i, p in mail.pieces(camp.id) if p["status"] == "approved"]
        waiting = sum(1 for _, _, p in mail.pieces(camp.id) if p["status"] == "waiting")
        release_writes: list[DocWrite] = []
        by_batch: dict[str, tuple[Doc, list[dict], list[int]]] = {}
        for b, i, _p in approved:
            by_batch.setdefault(b.id, (b, [dict(x) for x in b.data["pieces"]], []))[2].append(i)
        for b, pieces, indexes in by_batch.values():
            release_writes.append(
                print_job(mail, [pieces[i] for i in indexes], ctx, campaign_id=camp.id, source="resume")
            )
            release_writes.append(put(b, dict(b.data, pieces=pieces)))
        new_campaign = dict(c, status="live", resumed_at=ctx.now, batches=int(c.get("batches", 0)) + len(e.batches))
        writes = [put(camp, new_campaign),
                  ledger_after(mail, spend=e.spend, created=len(e.pieces), printed=e.printed + len(approved)),
                  *e.batches, *e.jobs, *release_writes]
        check_write_count(len(writes), "This resume")
        subject = {"campaign": camp.id, "from": "paused", "to": "live",
                   "new": {"count": len(fresh), "digest": digest(x.id for x in fresh), "pieces": e.by_format,
                           "spend": e.spend, "printed": e.printed, "waiting": e.waiting},
                   "release": {"count": len(approved), "digest": digest(p["id"] for _, _, p in approved)},
                   "waiting": waiting, "copy": c.get("copy", ""),
                   # what the new contacts' pieces print: a design published again meanwhile moves it
                   "designs": [{"design": d.id, "version": d.data.get("published_version")} for d in designs]}
        if fresh:
            title = (
                f"Resume {q(name)}: {count(len(fresh), 'new contact')}, "
                f"{format_counts(e.by_format)}, {credits(e.spend)}"
            )
        else:
            title = f"Resume {q(name)}: no new contacts, no credits spent"
        lines = [f"Approved pieces that print now: {len(approved)}",
                 f"Drafts still waiting for review: {waiting + e.waiting}",
                 *_skipped_lines(skipped)]
        names = {d.id: d.data["name"] for d in designs}
        if fresh:
            for d in designs:
                lines.append(f"New contacts' pieces print design {q(d.data['name'])} version "
                             f"{d.data.get('published_version')}"
                             + (" (a newer draft is not approved)" if is_draft(d) else ""))
        released: dict[tuple[str, object], int] = {}
        for _b, _i, piece in approved:  # each prints the version it was drafted with
            key = (str(piece.get("design_id")), piece.get("design_version"))
            released[key] = released.get(key, 0) + 1
        for (design_id, version), n in sorted(released.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
            lines.append(f"{count(n, 'approved piece')} print design {q(names.get(design_id, design_id))} "
                         f"version {version}")
        result = {
            "campaign_id": camp.id,
            "status": "live",
            "enrolled": len(fresh),
            "printed": e.printed + len(approved),
            "waiting": waiting + e.waiting,
            "spent": e.spend,
        }
        return subject, Preview(title, lines), Effect.writes(result, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return ["The campaign is live again",
                f"Newly enrolled: {count(result['enrolled'], 'contact')} · {credits(result['spent'])} spent",
                f"Printing now: {result['printed']} · waiting for review: {result['waiting']}"]

    def next_steps(self, result, ctx):
        return [Step("get_campaign", "Check the campaign."), *_approval_step(ctx, result.get("waiting", 0))]


class EndCampaign(MailAction):
    name = "end_campaign"
    title = "Preparing a confirmation to end a campaign"
    description = ("End a campaign for good: pieces not yet printed are cancelled and their credits returned; "
                   "printed pieces stay in the print queue.")
    arguments = CampaignArgs
    gate = ALWAYS
    irreversible = True  # an ended campaign cannot be launched or resumed again
    drift_message = ("The campaign changed between the preview and the answer: its pieces or state moved. It was not "
                     "ended; call end_campaign again for a new preview.")

    def prepare(self, args: CampaignArgs, ctx: ActionContext):
        mail = Mail(ctx)
        camp = mail.campaign(args.campaign_id)
        c = camp.data
        name = c["name"]
        if c["status"] == "ended":
            raise ActionError(f"campaign_id: {q(name)} has already ended.", field="campaign_id")
        pieces = mail.pieces(camp.id)
        targets = [(b, i, p) for b, i, p in pieces if p["status"] in ("waiting", "approved")]
        printed = sum(1 for _, _, p in pieces if p["status"] in ("printed", "sent"))
        cancel = cancel_pieces(mail, targets, ctx, reason="campaign ended")
        writes = [put(camp, dict(c, status="ended", ended_at=ctx.now, ended_by=ctx.person.id)), *cancel.batch_writes]
        if cancel.refund:
            writes.append(ledger_after(mail, refund=cancel.refund))
        check_write_count(len(writes), "Ending this campaign")
        subject = {"campaign": camp.id, "from": c["status"], "to": "ended",
                   "cancel": {"count": len(targets), "digest": digest(p["id"] for _, _, p in targets)},
                   "refund": cancel.refund, "printed": printed}
        if c["status"] == "draft":
            title = f"End {q(name)} before it launches: nothing was printed"
        else:
            title = (f"End {q(name)}: {count(len(targets), 'piece')} not yet printed cancelled, "
                     f"{credits(cancel.refund)} returned")
        lines = [f"Printed pieces that stay in the print queue: {printed}",
                 "An ended campaign cannot be launched or resumed again"]
        result = {"campaign_id": camp.id, "status": "ended", "cancelled": len(targets), "refunded": cancel.refund}
        return subject, Preview(title, lines), Effect.writes(result, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return ["The campaign has ended",
                f"Cancelled {count(result['cancelled'], 'piece')} · {credits(result['refunded'])} returned"]

    def next_steps(self, result, ctx):
        return [Step("get_credits", "Check the balance after the refund."),
                Step("list_campaigns", "See the other campaigns.")]


class PauseCampaign(MailAction):
    name = "pause_campaign"
    title = "Pausing a live campaign"
    description = "Pause a live campaign: nothing new prints until it is resumed (stopping mail runs at once)."
    arguments = CampaignArgs
    gate = NEVER
    destructive = False
    drift_message = "The campaign changed between the preview and the answer; it was not paused."

    def prepare(self, args: CampaignArgs, ctx: ActionContext):
        mail = Mail(ctx)
        camp = mail.campaign(args.campaign_id)
        c = camp.data
        if c["status"] != "live":
            raise ActionError(f"campaign_id: {q(c['name'])} is {c['status']}; only a live campaign can be paused.",
                              field="campaign_id")
        subject = {"campaign": camp.id, "from": "live", "to": "paused"}
        preview = Preview(f"Pause {q(c['name'])}: nothing new prints until it resumes",
                          ["Pieces already printed stay in the print queue"])
        return (
            subject,
            preview,
            Effect.writes(
                {"campaign_id": camp.id, "status": "paused"}, [put(camp, dict(c, status="paused", paused_at=ctx.now))]
            ),
        )

    def outcome_lines(self, result: dict) -> list[str]:
        return ["The campaign is paused: nothing new prints until it resumes"]

    def next_steps(self, result, ctx):
        return [Step("resume_campaign", "Resume it when ready.", person_must_act=True)]


ACTIONS = [LaunchCampaign(), ResumeCampaign(), EndCampaign(), PauseCampaign()]
__all__ = ["ACTIONS"]
