"""Approvals (class ``setting:ask_before_approvals`` while the item is in a state that prints).

* ``approve_design`` publishes a design's draft. It prints when a live campaign uses the design.
* ``review_message`` approves (or rejects) one draft waiting for review; approving prints it when
  its campaign is live.
* ``bulk_approve_messages`` approves many waiting drafts of one campaign; they print when it is live.

In any other state the approval prints nothing and runs at once (class never, via ``gate_class``).
No tool changes *Ask before approvals*: an owner or admin sets it on the settings page.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...core.preview import Preview
from ...toolkit import NEVER, ActionContext, ActionError, Arguments, Editable, Effect, Step, setting
from .action import MailAction, put
from .kinds import AUTO_APPROVE_AFTER, DIRECT, KIND_DESIGN, NOUN
from .printing import ledger_after, print_job
from .publishing import can_publish, is_draft, publish_writes
from .snapshot import Mail, campaign_is_live
from .text import count, credits, digest, q, recipients_line
from .validation import check_write_count

APPROVALS = setting("ask_before_approvals")
# What every approval's description tells an agent: an owner or admin may
# let agents approve at once, and a person should still be the one who approves.
PREFER_ASKING = (
    " When the workspace lets agents approve at once (Ask before approvals off), prefer request_confirmation "
    "for an approval all the same, so the person approves it on their confirm page: give them the link, then "
    "poll get_confirmation_status until it resolves.")


class DesignArgs(Arguments):
    design_id: str = Field(max_length=64)


def _design_prints(args: DesignArgs, ctx: ActionContext) -> bool:
    design = ctx.store.get_doc(ctx.workspace_id, KIND_DESIGN, args.design_id)
    if design is None or not is_draft(design):
        return False
    return bool(Mail(ctx).live_campaigns_using(design.id))


class ApproveDesign(MailAction):
    name = "approve_design"
    hold_rule = (
        'Waits for a person on the confirm page while the workspace asks before approvals and the design '
        'would print; otherwise runs at once.' + PREFER_ASKING)
    title = "Preparing a design approval"
    description = "Publish a design's draft version. Owners, admins and approvers only."
    arguments = DesignArgs
    gate = APPROVALS
    drift_message = "The design changed between the preview and the answer; nothing was published."

    def gate_class(self, args: DesignArgs, ctx: ActionContext):
        return APPROVALS if _design_prints(args, ctx) else NEVER

    def prepare(self, args: DesignArgs, ctx: ActionContext):
        mail = Mail(ctx)
        design = mail.design(args.design_id)
        d = design.data
        if not is_draft(design):
            raise ActionError(f"design_id: {q(d['name'])} version {d['published_version']} is already published; "
                              "there is no draft to approve.", field="design_id")
        if not can_publish(ctx):
            raise ActionError(f"design_id: only an owner, admin or approver can approve designs; you are "
                              f"{ctx.person.role}.", field="design_id")
        live = mail.live_campaigns_using(design.id)
        lines = []
        for camp in live:
            lines.append(
                f"Live campaign {q(camp.data['name'])} uses it: pieces drafted from now on print version "
                f"{d['draft_version']}" + (f" (was {d['published_version']})" if d.get("published_version") else "")
            )
        if not live:
            lines.append("No live campaign uses it; nothing prints now")
        subject = {"design": design.id, "name": d["name"], "version": d["draft_version"],
                   "live_campaigns": sorted(c.id for c in live)}
        title = f"Approve design {q(d['name'])} version {d['draft_version']}"
        return (
            subject,
            Preview(title, lines),
            Effect.writes(
                {"design_id": design.id, "published_version": d["draft_version"]}, publish_writes([design], ctx)
            ),
        )

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Version {result['published_version']} of the design is approved and published"]

    def next_steps(self, result, ctx):
        return [Step("list_designs", "Check which version each design prints."),
                Step("launch_campaign", "Launch a campaign that uses it.", person_must_act=True)]


class ReviewArgs(Arguments):
    piece_id: str = Field(max_length=120)
    decision: Literal["approve", "reject"] = Field(default="approve")
    copy_text: str | None = Field(default=None, max_length=2000, description="Edited copy to approve instead")


def _piece_status(ctx: ActionContext, piece_id: str) -> tuple[dict | None, dict | None]:
    try:
        mail = Mail(ctx)
        _, _, piece = mail.piece(piece_id)
    except ActionError:
        return None, None
    owner = piece_id.rsplit(".", 2)[0]
    camp = mail.campaigns.get(owner)
    return piece, (camp.data if camp else None)


REVIEWED = {"printed": "Approved: it is printing now",
            "approved": "Approved: it prints when the campaign resumes",
            "cancelled": "Rejected: it will not be printed, and its credits came back"}


class ReviewMessage(MailAction):
    name = "review_message"
    hold_rule = (
        'Waits for a person on the confirm page while the workspace asks before approvals and the message'
        ' would print; otherwise runs at once.' + PREFER_ASKING)
    title = "Preparing a message review"
    description = ('Approve or reject one draft waiting for review; approving a draft of a live campaign prints '
                   'it.')
    arguments = ReviewArgs
    gate = APPROVALS
    drift_message = "The draft or its campaign changed between the preview and the answer; nothing was approved."
    editable = (Editable("copy_text", label="copy", kind="text", shown=lambda subject: subject["copy"]),)

    def gate_class(self, args: ReviewArgs, ctx: ActionContext):
        piece, camp = _piece_status(ctx, args.piece_id)
        prints = (args.decision == "approve" and piece is not None and piece["status"] == "waiting"
                  and camp is not None and camp.get("status") == "live")
        return APPROVALS if prints else NEVER

    def prepare(self, args: ReviewArgs, ctx: ActionContext):
        mail = Mail(ctx)
        batch, index, piece = mail.piece(args.piece_id)
        owner = args.piece_id.rsplit(".", 2)[0]
        camp = mail.campaigns.get(owner) if owner != DIRECT else None
        if camp is None:
            raise ActionError(
                f"piece_id: {args.piece_id!r} is not a campaign draft; nothing to review.", field="piece_id"
            )
        c = camp.data
        allowed = ("waiting",) if args.decision == "approve" else ("waiting", "approved")
        if piece["status"] not in allowed:
            hint = " Use cancel_piece to stop it." if piece["status"] == "printed" else ""
            raise ActionError(f"piece_id: the {NOUN[piece['format']]} to {piece['name']} is {piece['status']}, not "
                              f"waiting for review.{hint}", field="piece_id")
        if c["status"] == "ended":
            raise ActionError(f"piece_id: campaign {q(c['name'])} has ended.", field="piece_id")
        new_piece = dict(piece, reviewed_by=ctx.person.id, reviewed_at=ctx.now)
        if args.copy_text is not None:
            if not args.copy_text.strip():
                raise ActionError("copy_text: must not be empty.", field="copy_text")
            new_piece.update(copy=args.copy_text.strip(), written_by="person", clean=True)
        what = f"the {NOUN[piece['format']]} to {piece['name']} on {q(c['name'])}"
        pieces = [dict(p) for p in batch.data["pieces"]]
        writes, lines = [], []
        new_campaign = dict(c)
        ledger_kwargs = {}
        if args.decision == "reject":
            new_piece.update(status="cancelled", cancelled_at=ctx.now, cancel_reason="rejected in review")
            ledger_kwargs = {"refund": piece["credits"]}
            title = f"Reject {what}: {credits(piece['credits'])} returned"
            result_status = "cancelled"
        else:
            new_campaign["approved_count"] = int(c.get("approved_count", 0)) + 1
            if c["status"] == "live":
                writes.append(print_job(mail, [new_piece], ctx, campaign_id=camp.id, source="review"))
                ledger_kwargs = {"printed": 1}
                title = f"Approve {what}: it prints now"
            else:
                new_piece["status"] = "approved"
                title = f"Approve {what}: it prints when the campaign resumes"
            result_status = new_piece["status"]
            lines.append(f"Approved on this campaign: {c.get('approved_count', 0)} → {new_campaign['approved_count']}")
            if c.get("copy_review") == "clean_auto" and new_campaign["approved_count"] == AUTO_APPROVE_AFTER:
                lines.append("From now on drafts a model writes on this campaign print without review")
        lines.insert(0, f"Copy: {new_piece['copy']}")
        pieces[index] = new_piece
        writes.append(put(batch, dict(batch.data, pieces=pieces)))
        writes.append(put(camp, new_campaign))
        if ledger_kwargs:
            writes.append(ledger_after(mail, **ledger_kwargs))
        subject = {"piece": piece["id"], "campaign": camp.id, "campaign_status": c["status"], "from": piece["status"],
                   "decision": args.decision, "copy": new_piece["copy"], "credits": piece["credits"]}
        return subject, Preview(title, lines), Effect.writes({"piece_id": piece["id"], "status": result_status}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return [REVIEWED.get(result["status"], "Reviewed")]

    def next_steps(self, result, ctx):
        return [Step("get_campaign", "See what is still waiting for review.")]


class BulkApproveArgs(Arguments):
    campaign_id: str = Field(max_length=64)
    piece_ids: list[str] | None = Field(default=None, max_length=500,
                                           description="Only these drafts (default: every draft waiting)")


class BulkApproveMessages(MailAction):
    name = "bulk_approve_messages"
    hold_rule = (
        'Waits for a person on the confirm page while the workspace asks before approvals and any of the '
        'messages would print; otherwise runs at once.' + PREFER_ASKING)
    title = "Preparing a bulk approval"
    description = ('Approve every draft waiting for review on a campaign (or the ones named); on a live campaign'
                   ' they print.')
    arguments = BulkApproveArgs
    gate = APPROVALS
    drift_message = ("The drafts waiting on this campaign changed between the preview and the answer; "
                     "nothing was approved.")

    def gate_class(self, args: BulkApproveArgs, ctx: ActionContext):
        return APPROVALS if campaign_is_live(ctx, args.campaign_id) else NEVER

    def prepare(self, args: BulkApproveArgs, ctx: ActionContext):
        mail = Mail(ctx)
        camp = mail.campaign(args.campaign_id)
        c = camp.data
        if c["status"] == "ended":
            raise ActionError(f"campaign_id: {q(c['name'])} has ended.", field="campaign_id")
        all_pieces = mail.pieces(camp.id)
        if args.piece_ids is not None:
            wanted = set(args.piece_ids)
            chosen = [(b, i, p) for b, i, p in all_pieces if p["id"] in wanted]
            found = {p["id"] for _, _, p in chosen}
            missing = [pid for pid in args.piece_ids if pid not in found]
            if missing:
                raise ActionError(f"piece_ids: no piece {missing[0]!r} on {q(c['name'])}.", field="piece_ids")
            not_waiting = [p for _, _, p in chosen if p["status"] != "waiting"]
            if not_waiting:
                p = not_waiting[0]
                raise ActionError(f"piece_ids: the draft to {p['name']} ({p['id']}) is {p['status']}, not waiting.",
                                  field="piece_ids")
        else:
            chosen = [(b, i, p) for b, i, p in all_pieces if p["status"] == "waiting"]
        if not chosen:
            raise ActionError(f"No drafts are waiting for review on {q(c['name'])}.", field="campaign_id")
        live = c["status"] == "live"
        by_batch: dict[str, tuple] = {}
        for b, i, _p in chosen:
            by_batch.setdefault(b.id, (b, [dict(x) for x in b.data["pieces"]], []))[2].append(i)
        writes = []
        for b, pieces, indexes in by_batch.values():
            approved = []
            for i in indexes:
                pieces[i] = dict(pieces[i], reviewed_by=ctx.person.id, reviewed_at=ctx.now, status="approved")
                approved.append(pieces[i])
            if live:
                writes.append(print_job(mail, approved, ctx, campaign_id=camp.id, source="bulk review"))
            writes.append(put(b, dict(b.data, pieces=pieces)))
        n = len(chosen)
        new_campaign = dict(c, approved_count=int(c.get("approved_count", 0)) + n)
        writes.append(put(camp, new_campaign))
        if live:
            writes.append(ledger_after(mail, printed=n))
        check_write_count(len(writes), "This approval")
        drafts = [p for _, _, p in chosen]
        title = f"Approve {count(n, 'waiting message')} on {q(c['name'])}: " + (
            "they print now"
            if live
            else f"they print when the campaign {'resumes' if c['status'] == 'paused' else 'runs'}"
        )
        lines = [f"Recipients: {recipients_line(drafts)}",
                 f"Approved on this campaign: {c.get('approved_count', 0)} → {new_campaign['approved_count']}"]
        written = sum(1 for p in drafts if p.get("written_by") == "model")
        if written:
            lines.append(f"{count(written, 'draft')} written by a model")
        subject = {
            "campaign": camp.id,
            "status": c["status"],
            "pieces": {"count": n, "digest": digest(p["id"] for p in drafts)},
            "copy": digest(p["copy"] for p in drafts),
        }
        return subject, Preview(title, lines), Effect.writes({
            "campaign_id": camp.id, "approved": n, "printed": n if live else 0}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        lines = [f"Approved {count(result['approved'], 'message')}"]
        if result["printed"]:
            lines.append(f"Printing now: {result['printed']}")
        return lines

    def next_steps(self, result, ctx):
        return [Step("get_campaign", "Check the campaign's print queue and what is left to review.")]


ACTIONS = [ApproveDesign(), ReviewMessage(), BulkApproveMessages()]
__all__ = ["ACTIONS"]
